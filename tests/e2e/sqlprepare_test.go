package e2e

import (
	"context"
	"reflect"
	"strings"
	"testing"
)

// TestSQLPrepareAccountStatements: SHOW CREATE USER and ALTER USER ...
// ACCOUNT LOCK prepared with SQL (PREPARE ... FROM a literal or a user
// variable, EXECUTE, DEALLOCATE PREPARE) answer as the statements do
// (1064 before: GMS prepared the text with vitess). EXECUTE with USING
// variables is MySQL's 1210 (the statements take no parameters); after
// DEALLOCATE the name is unknown (1243); a PREPARE of another statement
// under the name replaces it.
func TestSQLPrepareAccountStatements(t *testing.T) {
	s := startServer(t, "")
	mustExec(t, s.Open(""), "CREATE USER 'app'@'%' IDENTIFIED BY 'app-pw'")
	ctx := context.Background()
	c, err := s.Open("").Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	want := queryRows(t, c, "SHOW CREATE USER 'app'@'%'")
	mustExec(t, c, "PREPARE s FROM 'SHOW CREATE USER ''app''@''%'''")
	if got := queryRows(t, c, "EXECUTE s"); !reflect.DeepEqual(got, want) || len(got) != 1 {
		t.Errorf("EXECUTE of SHOW CREATE USER: %v, want %v", got, want)
	}
	if _, err := c.ExecContext(ctx, "SET @x = 1"); err != nil {
		t.Fatal(err)
	}
	if _, err := c.QueryContext(ctx, "EXECUTE s USING @x"); err == nil {
		t.Errorf("EXECUTE s USING @x: no error")
	} else if code, _ := mysqlErrorCode(err); code != 1210 {
		t.Errorf("EXECUTE s USING @x: %v, want 1210", err)
	}
	mustExec(t, c, "SET @q = 'ALTER USER ''app''@''%'' ACCOUNT LOCK'", "PREPARE lock_app FROM @q", "EXECUTE lock_app")
	if got := queryRows(t, c, "SELECT account_locked FROM mysql.user WHERE user = 'app'"); !reflect.DeepEqual(got, [][]string{{"Y"}}) {
		t.Errorf("account_locked after EXECUTE of ACCOUNT LOCK: %v", got)
	}
	mustExec(t, c, "DEALLOCATE PREPARE s")
	if _, err := c.QueryContext(ctx, "EXECUTE s"); err == nil {
		t.Errorf("EXECUTE after DEALLOCATE: no error")
	} else if code, _ := mysqlErrorCode(err); code != 1243 {
		t.Errorf("EXECUTE after DEALLOCATE: %v, want 1243", err)
	}
	mustExec(t, c, "PREPARE lock_app FROM 'SELECT 7'")
	if got := queryRows(t, c, "EXECUTE lock_app"); !reflect.DeepEqual(got, [][]string{{"7"}}) {
		t.Errorf("EXECUTE of the name prepared again: %v", got)
	}
}

// TestDefaultRolesInsert: INSERT into mysql.default_roles, as a dump of
// mysql writes it, is taken with a warning 1235 saying percdb keeps no
// default roles (1105 before), and the table stays empty.
func TestDefaultRolesInsert(t *testing.T) {
	s := startServer(t, "")
	ctx := context.Background()
	c, err := s.Open("").Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	mustExec(t, c, "INSERT INTO mysql.default_roles VALUES ('%', 'app', '%', 'reader')")
	w := queryRows(t, c, "SHOW WARNINGS")
	if len(w) != 1 || w[0][1] != "1235" || !strings.Contains(w[0][2], "default_roles keeps no rows") {
		t.Errorf("warnings of the INSERT: %v", w)
	}
	if got := queryRows(t, c, "SELECT * FROM mysql.default_roles"); len(got) != 0 {
		t.Errorf("mysql.default_roles after the INSERT: %v", got)
	}
}
