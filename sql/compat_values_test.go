package sql_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"
	"github.com/go-sql-driver/mysql"
)

// TestValues runs the files of testdata/values, each on a database of
// its own, on one connection. A file holds statements and what each
// answers:
//
//	exec
//	INSERT ...
//	----
//	2 rows affected
//	Warning 1264 Out of range value for column 'x' at row 1
//
//	query
//	SELECT ...
//	----
//	1 | 2.50
//
//	prepared
//	SELECT ... WHERE s = ?
//	"a "
//	----
//	1
//
// A prepared command runs its first line as a server-side prepared
// statement with the lines after it, each a Go-quoted string, as its
// arguments.
//
// An error answers "error CODE message"; a statement's warnings (SHOW
// WARNINGS, as the server lists them) follow its answer. After a
// statement that uses no table and raises nothing (SELECT 1, SET @x),
// those are the previous statement's, which MySQL keeps for it. It shows what
// MySQL 8 stores, returns and warns for values at the edges of their
// types: numbers a column does not hold (sql/compat/fit.go).
func TestValues(t *testing.T) {
	datadriven.Walk(t, "testdata/values", func(t *testing.T, path string) {
		db, _ := compatDB(t)
		ctx := context.Background()
		conn, err := db.Conn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		datadriven.RunTest(t, path, func(t *testing.T, d *datadriven.TestData) string {
			var out strings.Builder
			switch d.Cmd {
			case "exec":
				res, err := conn.ExecContext(ctx, d.Input)
				if err != nil {
					return answerError(err) + warningsOf(t, ctx, conn)
				}
				n, _ := res.RowsAffected()
				fmt.Fprintf(&out, "%d rows affected\n", n)
			case "query", "prepared":
				var rows *sql.Rows
				var err error
				if d.Cmd == "query" {
					rows, err = conn.QueryContext(ctx, d.Input)
				} else {
					q, args := preparedArgs(t, d)
					var stmt *sql.Stmt
					if stmt, err = conn.PrepareContext(ctx, q); err == nil {
						defer stmt.Close()
						rows, err = stmt.QueryContext(ctx, args...)
					}
				}
				if err != nil {
					return answerError(err) + warningsOf(t, ctx, conn)
				}
				for _, r := range readRows(rows) {
					out.WriteString(strings.Join(r, " | ") + "\n")
				}
				if err := rows.Err(); err != nil {
					out.WriteString(answerError(err))
				}
				rows.Close()
			default:
				d.Fatalf(t, "unknown command %s", d.Cmd)
			}
			return out.String() + warningsOf(t, ctx, conn)
		})
	})
}

// preparedArgs returns the statement of a prepared command (its first
// line) and its arguments (the lines after it, each a Go-quoted string,
// so that trailing spaces show).
func preparedArgs(t *testing.T, d *datadriven.TestData) (string, []any) {
	t.Helper()
	lines := strings.Split(d.Input, "\n")
	var args []any
	for _, l := range lines[1:] {
		a, err := strconv.Unquote(l)
		if err != nil {
			d.Fatalf(t, "argument %s: %v", l, err)
		}
		args = append(args, a)
	}
	return lines[0], args
}

// answerError is an error as TestValues writes it.
func answerError(err error) string {
	var me *mysql.MySQLError
	if errors.As(err, &me) {
		return fmt.Sprintf("error %d %s\n", me.Number, me.Message)
	}
	return "error " + err.Error() + "\n"
}

// warningsOf returns the warnings of the last statement on conn, one a
// line: level, code, message.
func warningsOf(t *testing.T, ctx context.Context, conn *sql.Conn) string {
	t.Helper()
	rows, err := conn.QueryContext(ctx, "SHOW WARNINGS")
	if err != nil {
		t.Fatalf("SHOW WARNINGS: %v", err)
	}
	defer rows.Close()
	var out strings.Builder
	for _, r := range readRows(rows) {
		out.WriteString(strings.Join(r, " ") + "\n")
	}
	return out.String()
}
