package protocol

import (
	"errors"
	"fmt"
	"testing"

	"github.com/percdb/percdb/tests/isolation/testserver"
	"github.com/percdb/percdb/tests/wirefuzz"
)

// TestKillUnknownThread: KILL and KILL QUERY of a connection id nobody
// holds fail with 1094 "Unknown thread id: n" (GMS answered OK); of a
// connection that exists they still work: KILL QUERY leaves it usable,
// KILL ends it.
func TestKillUnknownThread(t *testing.T) {
	forEachServer(t, func(t *testing.T, s *testserver.Server) {
		c, _ := dial(t, s)
		victim, _ := dial(t, s)
		rows, err := victim.Query("SELECT CONNECTION_ID()")
		if err != nil || len(rows) != 1 {
			t.Fatalf("CONNECTION_ID(): %v %v", rows, err)
		}
		id := rows[0][0]
		for _, stmt := range []string{"KILL 4000000000", "KILL QUERY 4000000000", "KILL CONNECTION 4000000000"} {
			_, err := c.Query(stmt)
			var se *wirefuzz.ServerError
			if !errors.As(err, &se) || se.Code != 1094 || se.Message != "Unknown thread id: 4000000000" {
				t.Errorf("%s: %v, want 1094 Unknown thread id: 4000000000", stmt, err)
			}
		}
		if _, err := c.Query("KILL QUERY " + id); err != nil {
			t.Fatalf("KILL QUERY %s: %v", id, err)
		}
		if _, err := victim.Query("SELECT 1"); err != nil {
			t.Fatalf("after KILL QUERY of an idle connection: %v", err)
		}
		if _, err := c.Query("KILL " + id); err != nil {
			t.Fatalf("KILL %s: %v", id, err)
		}
		if _, err := victim.Query("SELECT 1"); err == nil {
			t.Errorf("the killed connection %s still answers", id)
		}
		if rows, err := c.Query("SELECT 1"); err != nil || fmt.Sprint(rows) != "[[1]]" {
			t.Errorf("the killing connection after KILL: %v %v", rows, err)
		}
	})
}
