package sql

import (
	"fmt"
	"math/rand"
	"sort"
	"strings"
	"testing"

	gsql "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/dolthub/vitess/go/sqltypes"
)

// TestCollatedSortMatchesGMS sorts random rows with collatedSorter and with
// GMS's expression.Sorter and requires the same order, row for row (a
// row's last column tells equal-keyed rows apart, so ties must come out
// as GMS's stable sort leaves them): strings under case- and
// accent-insensitive, binary and padded collations, with letter case,
// accents, expansions (ß, ss), characters beyond the BMP, bytes that are
// not UTF-8, empty strings and NULLs, next to integers and decimals,
// ASC and DESC, NULLs first and last.
func TestCollatedSortMatchesGMS(t *testing.T) {
	ctx := gsql.NewEmptyContext()
	collations := []gsql.CollationID{
		gsql.Collation_utf8mb4_0900_ai_ci,
		gsql.Collation_utf8mb4_general_ci,
		gsql.Collation_utf8mb4_bin,
		gsql.Collation_utf8mb4_0900_bin,
		gsql.Collation_utf8mb4_unicode_ci,
		gsql.Collation_latin1_swedish_ci,
	}
	pieces := []string{"a", "A", "á", "Á", "b", "B", " ", "ß", "ss", "SS", "😀", "\xff", "z", "-", "0", "9"}
	rnd := rand.New(rand.NewSource(1))
	str := func() any {
		if rnd.Intn(8) == 0 {
			return nil
		}
		var b strings.Builder
		for range rnd.Intn(5) {
			b.WriteString(pieces[rnd.Intn(len(pieces))])
		}
		return b.String()
	}
	for round := range 400 {
		coll := collations[round%len(collations)]
		st := types.MustCreateString(sqltypes.VarChar, 100, coll)
		nf := 1 + rnd.Intn(3)
		var fields gsql.SortFields
		gen := make([]func() any, nf)
		for f := range nf {
			var typ gsql.Type = st
			gen[f] = str
			switch rnd.Intn(4) {
			case 0:
				typ = types.Int64
				gen[f] = func() any {
					if rnd.Intn(8) == 0 {
						return nil
					}
					return int64(rnd.Intn(5) - 2)
				}
			case 1:
				typ = types.MustCreateString(sqltypes.Char, 10, collations[rnd.Intn(len(collations))])
			}
			sf := gsql.SortField{Column: expression.NewGetField(f, typ, fmt.Sprintf("c%d", f), true)}
			if rnd.Intn(2) == 0 {
				sf.Order = gsql.Descending
			}
			if rnd.Intn(2) == 0 {
				sf.NullOrdering = gsql.NullsLast
			}
			fields = append(fields, sf)
		}
		n := rnd.Intn(60)
		rows := make([]gsql.Row, n)
		for r := range rows {
			row := make(gsql.Row, nf+1)
			for f := range nf {
				row[f] = gen[f]()
			}
			row[nf] = r
			rows[r] = row
		}
		want := append([]gsql.Row(nil), rows...)
		gs := &expression.Sorter{SortFields: fields, Rows: want, Ctx: ctx}
		sort.Stable(gs)
		ks, ok := newCollatedSorter(ctx, fields, rows)
		if !ok {
			t.Fatalf("round %d: the sort fields did not evaluate", round)
		}
		sort.Stable(ks)
		if fmt.Sprint(gs.LastError) != fmt.Sprint(ks.err) {
			t.Fatalf("round %d: error %v, GMS's %v", round, ks.err, gs.LastError)
		}
		if gs.LastError != nil {
			continue
		}
		for i, r := range ks.perm {
			if rows[r][nf] != want[i][nf] {
				t.Fatalf("round %d (%s, %v): row %d is %v, GMS's %v", round, coll, fields, i, rows[r], want[i])
			}
		}
	}
}

// BenchmarkCollatedSort sorts 100 rows of sysbench's c (CHAR(120) under
// utf8mb4_0900_ai_ci, groups of random digits), as ORDER BY c of
// oltp_read_only does, with GMS's sorter and with collatedSorter:
//
//	go test ./sql -run '^$' -bench CollatedSort -count 10
func BenchmarkCollatedSort(b *testing.B) {
	ctx := gsql.NewEmptyContext()
	st := types.MustCreateString(sqltypes.Char, 120, gsql.Collation_utf8mb4_0900_ai_ci)
	fields := gsql.SortFields{{Column: expression.NewGetField(0, st, "c", false)}}
	rnd := rand.New(rand.NewSource(1))
	rows := make([]gsql.Row, 100)
	for i := range rows {
		var c strings.Builder
		for g := range 10 {
			if g > 0 {
				c.WriteByte('-')
			}
			fmt.Fprintf(&c, "%011d", rnd.Int63n(1e11))
		}
		rows[i] = gsql.Row{c.String()}
	}
	work := make([]gsql.Row, len(rows))
	b.Run("gms", func(b *testing.B) {
		for range b.N {
			copy(work, rows)
			sort.Stable(&expression.Sorter{SortFields: fields, Rows: work, Ctx: ctx})
		}
	})
	b.Run("collated", func(b *testing.B) {
		for range b.N {
			s, _ := newCollatedSorter(ctx, fields, rows)
			sort.Stable(s)
		}
	})
}
