package sql

import (
	gsql "github.com/dolthub/go-mysql-server/sql"

	"github.com/percdb/percdb/sql/foreignkey"
)

// dropSupersededForeignKeyIndexes drops the indexes added for foreign keys
// that index name, just created, serves as well (foreignkey.Superseded:
// InnoDB keeps one index where percdb kept both).
func (t *Table) dropSupersededForeignKeyIndexes(ctx *gsql.Context, name string) error {
	def, _, err := t.CurrentDef(ctx)
	if err != nil {
		return err
	}
	for _, n := range foreignkey.Superseded(def, name) {
		if err := t.DropIndex(ctx, n); err != nil {
			return err
		}
	}
	return nil
}
