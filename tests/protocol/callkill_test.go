package protocol

import (
	"errors"
	"fmt"
	"strings"
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

// TestCallWithoutMultiResults: a client that did not announce
// CLIENT_MULTI_RESULTS cannot read a CALL's result sets: the CALL of a
// procedure with a SELECT fails with MySQL's 1312 before any of it runs,
// a CALL without one works; prepared too.
func TestCallWithoutMultiResults(t *testing.T) {
	forEachServer(t, func(t *testing.T, s *testserver.Server) {
		c, _ := dial(t, s)
		for _, q := range []string{
			"CREATE TABLE nm (id INT PRIMARY KEY)",
			"CREATE PROCEDURE nmsel() BEGIN INSERT INTO nm VALUES (1); SELECT 1 AS one; INSERT INTO nm VALUES (2); END",
			"CREATE PROCEDURE nmwrite() BEGIN INSERT INTO nm VALUES (3); END",
		} {
			if _, err := c.QueryAll(q); err != nil {
				t.Fatalf("%s: %v", q, err)
			}
		}
		old := dialNoMultiResults(t, s)
		_, err := old.QueryAll("CALL nmsel()")
		var se *wirefuzz.ServerError
		if !errors.As(err, &se) || se.Code != 1312 || se.State != "0A000" || !strings.HasSuffix(se.Message, ".nmsel can't return a result set in the given context") {
			t.Errorf("CALL nmsel() without CLIENT_MULTI_RESULTS: %v, want 1312", err)
		}
		if _, err := old.QueryAll("CALL nmwrite()"); err != nil {
			t.Errorf("CALL nmwrite() without CLIENT_MULTI_RESULTS: %v", err)
		}
		id, _, err := old.Prepare("CALL nmsel()")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := old.Execute(id); !errors.As(err, &se) || se.Code != 1312 {
			t.Errorf("prepared CALL nmsel() without CLIENT_MULTI_RESULTS: %v, want 1312", err)
		}
		if rows, err := c.Query("SELECT GROUP_CONCAT(id ORDER BY id) FROM nm"); err != nil || fmt.Sprint(rows) != "[[3]]" {
			t.Errorf("rows after: %v (%v), want [[3]]", rows, err)
		}
	})
}

// dialNoMultiResults is dial for a client without CLIENT_MULTI_RESULTS.
func dialNoMultiResults(t *testing.T, s *testserver.Server) *wirefuzz.Conn {
	t.Helper()
	c, _ := dialWith(t, s, func(c *wirefuzz.Conn) { c.NoMultiResults = true })
	return c
}

// TestShowCreateProcedureAsWritten: SHOW CREATE PROCEDURE shows the text
// as written of a procedure with what GMS's parser and planner refuse
// (GET DIAGNOSTICS, DO, a handler for an error number, RESIGNAL), which
// percdb gives GMS rewritten.
func TestShowCreateProcedureAsWritten(t *testing.T) {
	forEachServer(t, func(t *testing.T, s *testserver.Server) {
		c, _ := dial(t, s)
		text := "CREATE DEFINER=`root`@`%` PROCEDURE shown()\nBEGIN\n  DECLARE EXIT HANDLER FOR 1062\n  BEGIN\n" +
			"    GET DIAGNOSTICS CONDITION 1 @m = MESSAGE_TEXT;\n    RESIGNAL;\n  END;\n  DO 1;\nEND"
		if _, err := c.QueryAll(text); err != nil {
			t.Fatal(err)
		}
		res, err := c.QueryAll("SHOW CREATE PROCEDURE shown")
		if err != nil || len(res) == 0 || len(res[0].Rows) != 1 || len(res[0].Rows[0]) < 3 {
			t.Fatalf("SHOW CREATE PROCEDURE: %v (%v)", res, err)
		}
		body := func(s string) string { return s[strings.Index(s, "()"):] } // MariaDB quotes the name
		if got := res[0].Rows[0][2]; body(got) != body(text) {
			t.Errorf("SHOW CREATE PROCEDURE: %q, want %q", got, text)
		}
	})
}
