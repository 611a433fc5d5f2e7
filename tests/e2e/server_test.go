// Package e2e tests percdb end to end: a server started in process on a
// free port, driven through go-sql-driver/mysql, the mariadb command-line
// client and sysbench, as users drive it.
package e2e

import (
	"context"
	"database/sql"
	"errors"
	"os"
	"testing"

	"github.com/go-sql-driver/mysql"
	"github.com/sirupsen/logrus"

	"github.com/percdb/percdb/sql/sqltest"
)

func TestMain(m *testing.M) {
	// go-mysql-server logs every connection and failed query through
	// logrus' standard logger.
	logrus.SetLevel(logrus.ErrorLevel)
	os.Exit(m.Run())
}

// startServer starts percdb on dir (a fresh one when empty) and stops it
// when the test ends.
func startServer(t testing.TB, dir string) *sqltest.Server { return sqltest.Start(t, dir) }

// execer and querier are what *sql.DB and *sql.Conn share.
type (
	execer interface {
		ExecContext(context.Context, string, ...any) (sql.Result, error)
	}
	querier interface {
		QueryContext(context.Context, string, ...any) (*sql.Rows, error)
	}
)

// mustExec runs statements, failing the test on an error.
func mustExec(t testing.TB, db execer, stmts ...string) {
	t.Helper()
	for _, q := range stmts {
		if _, err := db.ExecContext(context.Background(), q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
}

// queryRows returns the rows of a query as strings, NULL as "NULL".
func queryRows(t testing.TB, db querier, q string, args ...any) [][]string {
	t.Helper()
	rows, err := db.QueryContext(context.Background(), q, args...)
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		t.Fatal(err)
	}
	var out [][]string
	for rows.Next() {
		vals := make([]sql.NullString, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			t.Fatal(err)
		}
		row := make([]string, len(cols))
		for i, v := range vals {
			if v.Valid {
				row[i] = v.String
			} else {
				row[i] = "NULL"
			}
		}
		out = append(out, row)
	}
	if err := rows.Err(); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return out
}

// mysqlErrorCode returns the MySQL error number of err, or 0.
func mysqlErrorCode(err error) (uint16, string) {
	var me *mysql.MySQLError
	if errors.As(err, &me) {
		return me.Number, string(me.SQLState[:])
	}
	return 0, ""
}

// wantError fails the test unless err is MySQL error code.
func wantError(t testing.TB, err error, code uint16, state string) {
	t.Helper()
	got, gotState := mysqlErrorCode(err)
	if got != code || (state != "" && gotState != state) {
		t.Fatalf("error = %v (code %d, state %s), want code %d state %s", err, got, gotState, code, state)
	}
}
