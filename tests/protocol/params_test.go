package protocol

import (
	"encoding/binary"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/percdb/percdb/tests/isolation/testserver"
	"github.com/percdb/percdb/tests/wirefuzz"
)

// maxParams is the most parameters a prepared statement may have: 65,535
// in MySQL and MariaDB, 65,528 in percdb (see sql/compat_params.go).
func maxParams(s *testserver.Server) int {
	if s.Flavor == testserver.MariaDB {
		return 65535
	}
	return 65528
}

// placeholders returns n placeholders in groups like "(?),(?)".
func placeholders(n int, group string) string {
	return strings.TrimSuffix(strings.Repeat(group+",", n), ",")
}

// TestManyParams prepares and runs statements with as many parameters as
// drivers send for a bulk insert, up to the limit, and checks that more
// fail with error 1390 while the connection goes on.
func TestManyParams(t *testing.T) {
	forEachServer(t, func(t *testing.T, s *testserver.Server) {
		c, _ := dial(t, s)
		limit := maxParams(s)
		run(t, c, []step{
			{sql: "CREATE TABLE m (v BIGINT)", want: []uint16{ac}},
			{sql: fmt.Sprintf("INSERT INTO m VALUES (3), (5), (21), (%d)", (limit-1)*3), want: []uint16{ac}},
		})

		// An IN list of limit values: parameter i is 3*i, but for a
		// NULL past the bitmap's first byte (3*7 = 21 is not in it).
		id, params, err := c.Prepare("SELECT v FROM m WHERE v IN (" + placeholders(limit, "?") + ") ORDER BY v")
		if err != nil {
			t.Fatalf("prepare %d parameters: %v", limit, err)
		}
		if params != limit {
			t.Fatalf("prepare answered %d parameters, want %d", params, limit)
		}
		args := make([]any, limit)
		for i := range args {
			args[i] = int64(i * 3)
		}
		args[7] = nil
		res, err := c.Execute(id, args...)
		if err != nil {
			t.Fatalf("execute with %d parameters: %v", limit, err)
		}
		// Binary rows of one BIGINT: header, NULL bitmap, 8 bytes.
		var got []int64
		for _, row := range res[0].Binary {
			if len(row) != 10 {
				t.Fatalf("row %x, want 10 bytes", row)
			}
			got = append(got, int64(binary.LittleEndian.Uint64(row[2:])))
		}
		if want := []int64{3, int64(limit-1) * 3}; fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("IN list of %d parameters found %v, want %v", limit, got, want)
		}

		for _, n := range []int{limit + 1, 65535, 65536, 70000} {
			if n <= limit {
				continue
			}
			_, _, err := c.Prepare("SELECT " + placeholders(n, "?"))
			var se *wirefuzz.ServerError
			if !errors.As(err, &se) || se.Code != 1390 {
				t.Errorf("prepare of %d parameters: %v, want error 1390", n, err)
			}
			run(t, c, []step{{sql: "SELECT 1", want: []uint16{ac}, rows: "[[1]]"}})
		}
	})
}
