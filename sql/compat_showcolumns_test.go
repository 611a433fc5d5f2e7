package sql_test

import (
	"database/sql"
	"strings"
	"testing"

	"github.com/go-sql-driver/mysql"
)

// TestShowColumnsPrivileges: SHOW FULL COLUMNS' Privileges lists what the
// user may do with each column, of select, insert, update and
// references, as MySQL does (GMS left it empty): all four for root, the
// table's grants for a user granted on the table, a view's too.
func TestShowColumnsPrivileges(t *testing.T) {
	srv := startServer(t, true)
	root := openDB(t, srv, "")
	mustExec(t, root, "CREATE DATABASE sp",
		"CREATE TABLE sp.t (id INT PRIMARY KEY, a INT)",
		"CREATE VIEW sp.v AS SELECT id FROM sp.t",
		"CREATE USER 'carol'@'%' IDENTIFIED BY 'pw'",
		"GRANT SELECT, INSERT ON sp.t TO 'carol'@'%'")
	cfg := mysql.NewConfig()
	cfg.User, cfg.Passwd, cfg.Net, cfg.Addr = "carol", "pw", "tcp", srv.Addr().String()
	carol, err := sql.Open("mysql", cfg.FormatDSN())
	if err != nil {
		t.Fatal(err)
	}
	defer carol.Close()
	for _, c := range []struct {
		db         *sql.DB
		stmt, want string
	}{
		{root, "SHOW FULL COLUMNS FROM sp.t", "id select,insert,update,references|a select,insert,update,references"},
		{root, "SHOW FULL COLUMNS FROM sp.v", "id select,insert,update,references"},
		{carol, "SHOW FULL COLUMNS FROM sp.t", "id select,insert|a select,insert"},
	} {
		rows, err := c.db.Query(c.stmt)
		if err != nil {
			t.Fatalf("%s: %v", c.stmt, err)
		}
		var got []string
		for _, r := range readRows(rows) {
			got = append(got, r[0]+" "+r[7])
		}
		rows.Close()
		if g := strings.Join(got, "|"); g != c.want {
			t.Errorf("%s: %s, want %s", c.stmt, g, c.want)
		}
	}
}
