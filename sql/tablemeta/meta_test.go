package tablemeta

import (
	"bytes"
	"errors"
	"math/rand"
	"testing"

	gsql "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/planbuilder"
	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/dolthub/vitess/go/sqltypes"

	"github.com/percdb/percdb/executor"
	"github.com/percdb/percdb/sql/catalog"
)

// TestCollationKeyOrder checks that sort keys order strings as GMS
// compares them under the column's collation, and collide exactly when
// GMS calls them equal: index order must be SQL order.
func TestCollationKeyOrder(t *testing.T) {
	words := []string{"", "a", "A", "b", "B", "ab", "aB", "Ab", "abc", "é", "e", "E", "z", "Z", "ß", "ss", "a b", "a  ", "0", "9", "_", "ÿ", "日本", "日"}
	rng := rand.New(rand.NewSource(7))
	for i := 0; i < 200; i++ {
		b := make([]rune, rng.Intn(4))
		for j := range b {
			b[j] = []rune("aAbBzZ éE_0")[rng.Intn(11)]
		}
		words = append(words, string(b))
	}
	for _, coll := range []gsql.CollationID{gsql.Collation_utf8mb4_0900_ai_ci, gsql.Collation_utf8mb4_0900_bin, gsql.Collation_utf8mb4_general_ci, gsql.Collation_utf8mb4_bin} {
		typ := types.MustCreateString(sqltypes.VarChar, 100, coll)
		keyOf := CollationKeyFunc(typ)
		key := func(s string) []byte {
			if keyOf == nil {
				return []byte(s)
			}
			return keyOf(s)
		}
		ctx := gsql.NewEmptyContext()
		for _, a := range words {
			for _, b := range words {
				want, err := typ.Compare(ctx, a, b)
				if err != nil {
					t.Fatal(err)
				}
				if got := bytes.Compare(key(a), key(b)); got != want {
					t.Fatalf("%s: key order of %q vs %q is %d, GMS compares %d", coll, a, b, got, want)
				}
			}
		}
	}
}

func TestTypeStringRoundTrip(t *testing.T) {
	for _, sqlType := range []string{
		"int", "bigint unsigned", "tinyint(1)", "decimal(10,2)", "double", "float",
		"varchar(20)", "varchar(20) COLLATE utf8mb4_bin", "char(10) CHARACTER SET latin1",
		"text", "blob", "varbinary(16)", "datetime(6)", "timestamp", "date", "time", "year",
		"enum('a','b')", "set('x','y')", "json", "bit(3)",
	} {
		typ, err := planbuilder.ParseColumnTypeString(sqlType)
		if err != nil {
			t.Fatalf("parse %q: %v", sqlType, err)
		}
		back, err := planbuilder.ParseColumnTypeString(typeString(typ))
		if err != nil {
			t.Fatalf("parse %q (from %q): %v", typeString(typ), sqlType, err)
		}
		if !back.Equals(typ) {
			t.Errorf("%q: stored as %q, read back as %v, want %v", sqlType, typeString(typ), back, typ)
		}
	}
}

// TestPadSpaceKeys checks that strings under PAD SPACE collations are
// keyed without their trailing spaces ('a' and 'a  ' make one primary
// key and one unique-index key, as they compare equal), that NO PAD ones
// (the _0900_ collations, binary strings) keep them, and that a table
// written in the key format before (KeyFormat 0) makes no key of such a
// string: StaleKeysError, which the SQL layer reports as error 1707.
func TestPadSpaceKeys(t *testing.T) {
	ctx := gsql.NewEmptyContext()
	for _, tc := range []struct {
		typ  gsql.Type
		same bool
	}{
		{types.MustCreateString(sqltypes.VarChar, 10, gsql.Collation_utf8mb4_general_ci), true},
		{types.MustCreateString(sqltypes.VarChar, 10, gsql.Collation_utf8mb4_bin), true},
		{types.MustCreateString(sqltypes.VarChar, 10, gsql.Collation_latin1_swedish_ci), true},
		{types.MustCreateString(sqltypes.Text, 10, gsql.Collation_utf8mb4_bin), true},
		{types.MustCreateString(sqltypes.Char, 10, gsql.Collation_utf8mb4_0900_ai_ci), true},
		{types.MustCreateString(sqltypes.VarChar, 10, gsql.Collation_utf8mb4_0900_ai_ci), false},
		{types.MustCreateString(sqltypes.VarChar, 10, gsql.Collation_utf8mb4_0900_bin), false},
		{types.MustCreateBinary(sqltypes.VarBinary, 10), false},
	} {
		sch := gsql.NewPrimaryKeySchema(gsql.Schema{
			{Name: "s", Type: tc.typ, PrimaryKey: true},
			{Name: "u", Type: tc.typ, Nullable: true},
		}, 0)
		def, err := DefFromSchema("t", sch, gsql.Collation_utf8mb4_0900_ai_ci, "")
		if err != nil {
			t.Fatal(err)
		}
		def.ID = 1
		def.Indexes = []catalog.IndexDef{{ID: 1, Name: "uu", Unique: true, Columns: []catalog.IndexColumnDef{{ColumnID: def.Columns[1].ID}}}}
		def.NextIndexID = 2
		m, err := New(ctx, "db", def)
		if err != nil {
			t.Fatal(err)
		}
		ix := &m.Exec.Indexes[0]
		keys := func(s string) (string, string) {
			var row []any
			if types.IsBinaryType(tc.typ) {
				row = []any{[]byte(s), []byte(s)}
			} else {
				row = []any{s, s}
			}
			h, err := m.Exec.HandleOf(row)
			if err != nil {
				t.Fatalf("%s: handle of %q: %v", tc.typ, s, err)
			}
			k, _, _, err := executor.IndexEntry(m.Exec, ix, h, row)
			if err != nil {
				t.Fatalf("%s: index entry of %q: %v", tc.typ, s, err)
			}
			return string(h.Common), string(k)
		}
		h1, k1 := keys("a")
		h2, k2 := keys("a  ")
		if got := h1 == h2; got != tc.same {
			t.Errorf("%s: primary keys of 'a' and 'a  ' equal: %v, want %v", tc.typ, got, tc.same)
		}
		if got := k1 == k2; got != tc.same {
			t.Errorf("%s: unique keys of 'a' and 'a  ' equal: %v, want %v", tc.typ, got, tc.same)
		}

		old := *def
		old.KeyFormat = 0
		om, err := New(ctx, "db", &old)
		if err != nil {
			t.Fatal(err)
		}
		_, err = om.Exec.HandleOf([]any{"a", "a"})
		var stale *executor.StaleKeysError
		wantStale := tc.same && tc.typ.Type() != sqltypes.Char
		if got := errors.As(err, &stale); got != wantStale {
			t.Errorf("%s, key format 0: handle error %v, want a StaleKeysError: %v", tc.typ, err, wantStale)
		}
	}
}
