package memtable

import (
	gsql "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/dolthub/vitess/go/sqltypes"
)

// Column is a column of a table served from memory. It is an alias of
// an unnamed struct type so that a table's columns are written as a
// CREATE TABLE lists them, name, type and nullability in order (go vet
// asks for keyed fields in the literals of named struct types of other
// packages only).
type Column = struct {
	Name     string
	Type     gsql.Type
	Nullable bool
}

// Schema returns the schema of table with cols.
func Schema(table string, cols []Column) gsql.Schema {
	s := make(gsql.Schema, len(cols))
	for i, c := range cols {
		s[i] = &gsql.Column{Name: c.Name, Type: c.Type, Nullable: c.Nullable, Source: table}
	}
	return s
}

// VarChar is a VARCHAR(n) of information_schema (utf8mb4, MySQL 8's
// default collation).
func VarChar(n int64) gsql.Type {
	return types.MustCreateString(sqltypes.VarChar, n, gsql.Collation_utf8mb4_0900_ai_ci)
}

// Partition is the single partition of a table served from memory.
type Partition struct{}

// Key implements sql.Partition.
func (Partition) Key() []byte { return nil }
