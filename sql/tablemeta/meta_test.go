package tablemeta

import (
	"bytes"
	"math/rand"
	"testing"

	gsql "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/planbuilder"
	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/dolthub/vitess/go/sqltypes"
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
