package sql_test

import (
	"context"
	"fmt"
	"net"
	"strconv"
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"
	vmysql "github.com/dolthub/vitess/go/mysql"
)

// TestWireText runs the statements of testdata/wiretext on percdb through
// vitess's MySQL client, which hands back a text result's values as the
// server wrote them (go-sql-driver parses numbers and TestValues would
// see Go's spelling of them), and writes each row's values as they came.
//
//	exec|query
//	<statement>
//	----
//	<rows, values separated by " | ">, or error <code>
func TestWireText(t *testing.T) {
	datadriven.Walk(t, "testdata/wiretext", func(t *testing.T, path string) {
		srv := startServer(t, true)
		host, port, err := net.SplitHostPort(srv.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		p, err := strconv.Atoi(port)
		if err != nil {
			t.Fatal(err)
		}
		conn, err := vmysql.Connect(context.Background(), &vmysql.ConnParams{Host: host, Port: p, Uname: "root"})
		if err != nil {
			t.Fatalf("connect: %v", err)
		}
		defer conn.Close()
		for _, s := range []string{"CREATE DATABASE wire", "USE wire"} {
			if _, err := conn.ExecuteFetch(s, 0, false); err != nil {
				t.Fatalf("%s: %v", s, err)
			}
		}
		datadriven.RunTest(t, path, func(t *testing.T, d *datadriven.TestData) string {
			res, err := conn.ExecuteFetch(d.Input, 10000, false)
			if err != nil {
				var se *vmysql.SQLError
				if ok := asSQLError(err, &se); ok {
					return fmt.Sprintf("error %d\n", se.Number())
				}
				return "error " + err.Error() + "\n"
			}
			var out strings.Builder
			if d.Cmd == "exec" {
				fmt.Fprintf(&out, "%d rows affected\n", res.RowsAffected)
			}
			for _, row := range res.Rows {
				vals := make([]string, len(row))
				for i, v := range row {
					vals[i] = "NULL"
					if !v.IsNull() {
						vals[i] = v.ToString()
					}
				}
				out.WriteString(strings.Join(vals, " | ") + "\n")
			}
			return out.String()
		})
	})
}

// asSQLError reports whether err is a MySQL error of vitess's client,
// setting *se.
func asSQLError(err error, se **vmysql.SQLError) bool {
	e, ok := err.(*vmysql.SQLError)
	if ok {
		*se = e
	}
	return ok
}
