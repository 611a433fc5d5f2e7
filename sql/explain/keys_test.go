package explain

import (
	"testing"

	gsql "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/dolthub/vitess/go/sqltypes"
)

// TestKeyLen checks key_len against what MySQL 8 prints for the same
// columns (utf8mb4: 4 bytes a character).
func TestKeyLen(t *testing.T) {
	varchar10 := types.MustCreateStringWithDefaults(sqltypes.VarChar, 10)
	for _, c := range []struct {
		cols     []gsql.Type
		nullable []bool
		n        int
		want     string
	}{
		{[]gsql.Type{types.Int32, types.Int32}, []bool{false, false}, 2, "8"},
		{[]gsql.Type{types.Int32, types.Int32}, []bool{false, false}, 1, "4"},
		{[]gsql.Type{types.Int32}, []bool{true}, 1, "5"},
		{[]gsql.Type{types.Int64}, []bool{false}, 1, "8"},
		{[]gsql.Type{varchar10}, []bool{true}, 1, "43"},
		{[]gsql.Type{types.MustCreateDecimalType(6, 2)}, []bool{false}, 1, "3"},
		{[]gsql.Type{types.MustCreateDecimalType(20, 10)}, []bool{false}, 1, "10"},
		{[]gsql.Type{types.Date, types.Datetime}, []bool{false, true}, 2, "9"},
		{[]gsql.Type{types.Int32}, []bool{false}, 0, ""},
	} {
		cols := make([]gsql.ColumnExpressionType, len(c.cols))
		for i, ty := range c.cols {
			cols[i] = gsql.ColumnExpressionType{Expression: "t.c", Type: ty}
		}
		if got := keyLen(cols, c.nullable, c.n); got != c.want {
			t.Errorf("%v nullable %v, %d columns: key_len %q, want %q", c.cols, c.nullable, c.n, got, c.want)
		}
	}
}
