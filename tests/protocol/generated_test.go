package protocol

import (
	"errors"
	"testing"

	"github.com/percdb/percdb/tests/isolation/testserver"
	"github.com/percdb/percdb/tests/wirefuzz"
)

// TestGeneratedColumnWrite checks MySQL's error for a value written to a
// generated column, by INSERT and by UPDATE: 3105 with MySQL's message.
// (MariaDB answers 1906, its own code; it is not run there.)
func TestGeneratedColumnWrite(t *testing.T) {
	forEachServer(t, func(t *testing.T, s *testserver.Server) {
		if s.Flavor == testserver.MariaDB {
			t.Skip("MariaDB answers its own error 1906")
		}
		c, _ := dial(t, s)
		run(t, c, []step{
			{sql: "CREATE TABLE gw (id INT PRIMARY KEY, a INT, b INT AS (a * 2) STORED)", want: []uint16{ac}},
			{sql: "INSERT INTO gw (id, a) VALUES (1, 1)", want: []uint16{ac}},
		})
		for _, q := range []string{"INSERT INTO gw (id, a, b) VALUES (2, 1, 5)", "UPDATE gw SET b = 5 WHERE id = 1"} {
			_, err := c.QueryAll(q)
			var se *wirefuzz.ServerError
			const want = "The value specified for generated column 'b' in table 'gw' is not allowed."
			if !errors.As(err, &se) || se.Code != 3105 || se.Message != want {
				t.Errorf("%s: %v, want error 3105 %q", q, err, want)
			}
		}
	})
}
