package sql_test

import (
	"strings"
	"testing"
)

// TestColumnFacts checks facts of information_schema.COLUMNS that
// introspection reads against MySQL 8's: the TEXT types' maximum length
// is their length in bytes, MEDIUMINT UNSIGNED has 8 digits, and the
// privileges are listed in MySQL's order.
func TestColumnFacts(t *testing.T) {
	srv := startServer(t, true)
	mustExec(t, openDB(t, srv, ""), "CREATE DATABASE cf",
		"CREATE TABLE cf.t (a TINYTEXT, b TEXT, c MEDIUMTEXT, d LONGTEXT, e TEXT CHARACTER SET latin1, f MEDIUMINT UNSIGNED, g MEDIUMINT, h VARCHAR(10))")
	got := strings.Join(queryRows(t, openDB(t, srv, "cf"), "SELECT COLUMN_NAME, CHARACTER_MAXIMUM_LENGTH, CHARACTER_OCTET_LENGTH, NUMERIC_PRECISION, PRIVILEGES FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = 'cf' ORDER BY ORDINAL_POSITION"), "\n")
	want := strings.Join([]string{
		"a 255 255 NULL select,insert,update,references",
		"b 65535 65535 NULL select,insert,update,references",
		"c 16777215 16777215 NULL select,insert,update,references",
		"d 4294967295 4294967295 NULL select,insert,update,references",
		"e 65535 65535 NULL select,insert,update,references",
		"f NULL NULL 8 select,insert,update,references",
		"g NULL NULL 7 select,insert,update,references",
		"h 10 40 NULL select,insert,update,references",
	}, "\n")
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}
