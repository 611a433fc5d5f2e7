package protocol

import (
	"errors"
	"testing"
	"time"

	"github.com/percdb/percdb/tests/isolation/testserver"
	"github.com/percdb/percdb/tests/wirefuzz"
)

// TestCallKill: a procedure that loops forever is stopped by KILL QUERY
// with 1317, its connection usable after; a handler does not take the
// interruption for an error of the body (it would go on looping).
func TestCallKill(t *testing.T) {
	forEachServer(t, func(t *testing.T, s *testserver.Server) {
		c, _ := dial(t, s)
		killer, _ := dial(t, s)
		for _, q := range []string{
			"CREATE PROCEDURE spin() BEGIN DECLARE i INT DEFAULT 0; " +
				"DECLARE CONTINUE HANDLER FOR SQLEXCEPTION SET i = 0; l: LOOP SET i = i + 1; END LOOP; END",
		} {
			if _, err := c.QueryAll(q); err != nil {
				t.Fatalf("%s: %v", q, err)
			}
		}
		rows, err := c.Query("SELECT CONNECTION_ID()")
		if err != nil {
			t.Fatal(err)
		}
		id := rows[0][0]
		done := make(chan error, 1)
		go func() {
			_, err := c.QueryAll("CALL spin()")
			done <- err
		}()
		// Wait until the CALL runs (no timing is asserted: the test's
		// deadline bounds a hang).
		for {
			rows, err := killer.Query("SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE ID = " + id + " AND INFO LIKE 'CALL spin%'")
			if err != nil {
				t.Fatal(err)
			}
			if rows[0][0] == "1" {
				break
			}
			time.Sleep(10 * time.Millisecond)
		}
		if _, err := killer.Query("KILL QUERY " + id); err != nil {
			t.Fatal(err)
		}
		select {
		case err := <-done:
			var se *wirefuzz.ServerError
			if !errors.As(err, &se) || se.Code != 1317 {
				t.Fatalf("CALL spin() after KILL QUERY: %v, want 1317", err)
			}
		case <-time.After(ioTimeout):
			t.Fatal("CALL spin() went on after KILL QUERY")
		}
		if rows, err := c.Query("SELECT 1"); err != nil || len(rows) != 1 {
			t.Fatalf("the connection after KILL QUERY: %v %v", rows, err)
		}
	})
}
