package foreignkey

import (
	"strings"

	"github.com/percdb/percdb/sql/catalog"
)

// InnoDB adds an index for a foreign key when no index of the child starts
// with the key's columns, and drops it when a later index can serve the
// key: MySQL keeps one index where percdb kept both (SQLAlchemy's
// create_all creates a table with its foreign keys, then its named indexes,
// so every such key left one index more than MySQL has, which Alembic's
// autogenerate then reports). An index percdb adds for a key is marked
// (catalog.IndexDef.ForForeignKey) and dropped when a new index starts
// with its columns, whole.

// Superseded returns the names of the indexes of def added for foreign
// keys that index name, just created, serves as well, for the caller to
// drop.
func Superseded(def *catalog.TableDef, name string) []string {
	added, _, ok := def.Index(name)
	if !ok || !added.Public() {
		return nil
	}
	var superseded []string
	for _, idx := range def.Indexes {
		if idx.ForForeignKey && idx.Public() && !strings.EqualFold(idx.Name, name) && startsWithColumns(added.Columns, idx.Columns) {
			superseded = append(superseded, idx.Name)
		}
	}
	return superseded
}

// startsWithColumns reports whether index columns have start with the
// columns of prefix, each whole.
func startsWithColumns(have, prefix []catalog.IndexColumnDef) bool {
	if len(have) < len(prefix) {
		return false
	}
	for i, c := range prefix {
		if have[i].ColumnID != c.ColumnID || have[i].Length != 0 || c.Length != 0 {
			return false
		}
	}
	return true
}
