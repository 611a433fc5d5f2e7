package tablemeta

import (
	"strings"
	"testing"

	gsql "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/dolthub/vitess/go/sqltypes"

	"github.com/percdb/percdb/executor"
	"github.com/percdb/percdb/sql/catalog"
)

// BenchmarkStringKeys measures making the primary key (a common handle)
// and a secondary index key of a row from a VARCHAR(120) value (120
// characters, as sysbench's c; or 8), per collation: what a PAD SPACE
// collation's trim of the trailing spaces adds to every key made from a
// string (compare with the NO PAD _0900_ collations, whose keys did not
// change, or with the parent commit).
func BenchmarkStringKeys(b *testing.B) {
	ctx := gsql.NewEmptyContext()
	for _, coll := range []gsql.CollationID{gsql.Collation_utf8mb4_0900_ai_ci, gsql.Collation_utf8mb4_general_ci, gsql.Collation_utf8mb4_0900_bin, gsql.Collation_utf8mb4_bin} {
		typ := types.MustCreateString(sqltypes.VarChar, 120, coll)
		sch := gsql.NewPrimaryKeySchema(gsql.Schema{
			{Name: "s", Type: typ, PrimaryKey: true},
			{Name: "k", Type: typ},
		}, 0)
		def, err := DefFromSchema("t", sch, coll, "")
		if err != nil {
			b.Fatal(err)
		}
		def.ID = 1
		def.Indexes = []catalog.IndexDef{{ID: 1, Name: "k", Columns: []catalog.IndexColumnDef{{ColumnID: def.Columns[1].ID}}}}
		m, err := New(ctx, "db", def)
		if err != nil {
			b.Fatal(err)
		}
		ix := &m.Exec.Indexes[0]
		for _, n := range []int{8, 120} {
			v := strings.Repeat("83868641912-", 12)[:n]
			row := []any{v, v}
			b.Run(coll.Name()+"/"+map[int]string{8: "8", 120: "120"}[n], func(b *testing.B) {
				b.ReportAllocs()
				for i := 0; i < b.N; i++ {
					h, err := m.Exec.HandleOf(row)
					if err != nil {
						b.Fatal(err)
					}
					if _, _, _, err := executor.IndexEntry(m.Exec, ix, h, row); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
