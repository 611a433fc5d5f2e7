package sql

import (
	"fmt"
	"os"
	"strings"
	"testing"

	sqle "github.com/dolthub/go-mysql-server"
	"github.com/dolthub/go-mysql-server/memory"
	"github.com/dolthub/go-mysql-server/sql"
)

func TestRun(t *testing.T) {
	db := memory.NewDatabase("e")
	pro := memory.NewDBProvider(db)
	e := sqle.NewDefault(pro)
	ctx := sql.NewContext(t.Context(), sql.WithSession(memory.NewSession(sql.NewBaseSession(), pro)))
	ctx.SetCurrentDatabase("e")
	b, _ := os.ReadFile(os.Getenv("SQLFILE"))
	for _, q := range strings.Split(strings.ReplaceAll(string(b), "; ", ";\n"), ";\n") {
		q = strings.TrimSpace(q)
		if q == "" || strings.HasPrefix(q, "USE") || strings.Contains(q, "DATABASE") {
			continue
		}
		func() {
			defer func() {
				if r := recover(); r != nil {
					fmt.Println(q, "PANIC", r)
				}
			}()
			if os.Getenv("PLAN") != "" && strings.Contains(q, os.Getenv("PLAN")) {
				n, err := e.AnalyzeQuery(ctx, q)
				fmt.Println(sql.DebugString(n), err)
			}
			_, it, _, err := e.Query(ctx, q)
			if err != nil {
				fmt.Println(q, "ERR", err)
				return
			}
			rows, err := sql.RowIterToRows(ctx, it)
			fmt.Println(q, "=>", rows, err)
		}()
	}
}
