package sql

import (
	"io"
	"sort"
	"unicode/utf8"

	gsql "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/encodings"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/types"

	"github.com/percdb/percdb/sql/compat"
)

// A sort that compares strings without GMS's map lookups. GMS's ORDER BY
// (iters.sortIter) compares two rows by evaluating their sort columns and
// calling the column type's Compare, which for a string looks up the
// collation weight of each character of both strings, up to the first
// that differs, in a map (Utf8mb4_0900_ai_ci_RuneWeight and its like):
// in sysbench's oltp_read_only, whose ORDER BY c sorts 100 CHAR(120)
// values under utf8mb4_0900_ai_ci twice per transaction, those lookups
// and Compare's conversions were 8% of the server's CPU. (Computing each
// string's whole weight sequence once per row instead costs more: random
// strings differ in their first characters, so a comparison reads two or
// three of them.) collatedSortIter reads and buffers the rows as GMS's
// does (the query's rows cache, so the same 1038 bound), evaluates each
// sort column once per row, and sorts with GMS's comparison rule:
//
//   - the same algorithm over the same order of comparisons (sort.Stable
//     over a permutation of the rows, Less answering what
//     expression.Sorter.Less answers: DESC swaps the operands, then NULL
//     before or after by the field's NullOrdering, then the type's
//     order), hence the same order of rows, ties included;
//   - two Go strings of a string column compare as StringType.Compare
//     compares them (collationComparer): character by character by
//     weight, the weights of ASCII characters kept in a table, and a
//     string that is a prefix of the other first. A string whose
//     characters the collation's encoder cannot read, or a value that is
//     not a Go string, is compared by the type's Compare, so that its
//     error (or conversion) is GMS's too.
//
// Only sorts over plain columns (GetField, whose evaluation cannot fail
// on the rows its child returns; or one without its trailing spaces, a
// PAD SPACE string's, sql/compat/padspace.go) with at least one string column are
// built so (collatedSortable); any other sort is GMS's.

// collatedSortable reports whether the sort fields sf are all plain
// columns, one or more of them GMS's string type.
func collatedSortable(sf gsql.SortFields) bool {
	strings := false
	for _, f := range sf {
		if _, ok := f.Column.(*expression.GetField); !ok && !compat.TrimmedField(f.Column) {
			return false
		}
		if _, ok := f.Column.Type().(types.StringType); ok {
			strings = true
		}
	}
	return strings
}

// collationComparer compares the strings of one string type as its
// Compare does. It remembers the weights of ASCII characters, which
// GMS's weight functions look up in a map; it fills the table as it
// meets them.
type collationComparer struct {
	encoder encodings.Encoder
	weight  gsql.CollationSorter
	// utf8 says the encoder reads UTF-8 (utf8mb4, utf8mb3): a byte below
	// utf8.RuneSelf is a character of its own.
	utf8  bool
	ascii [utf8.RuneSelf]int32
	known [utf8.RuneSelf]bool
}

func newCollationComparer(t types.StringType) *collationComparer {
	c := t.Collation()
	cs := c.CharacterSet()
	return &collationComparer{
		encoder: cs.Encoder(),
		weight:  c.Sorter(),
		utf8:    cs == gsql.CharacterSet_utf8mb4 || cs == gsql.CharacterSet_utf8mb3,
	}
}

// runeWeight returns the weight of r.
func (c *collationComparer) runeWeight(r rune) int32 {
	if r >= 0 && r < utf8.RuneSelf {
		if !c.known[r] {
			c.ascii[r], c.known[r] = c.weight(r), true
		}
		return c.ascii[r]
	}
	return c.weight(r)
}

// compare compares a and b as StringType.Compare does. ok is false when
// a character cannot be read (Compare's "malformed string"), for the
// caller to ask Compare itself.
func (c *collationComparer) compare(a, b string) (cmp int, ok bool) {
	for len(a) > 0 && len(b) > 0 {
		var ar, br rune
		var an, bn int
		if c.utf8 && a[0] < utf8.RuneSelf && b[0] < utf8.RuneSelf {
			if a[0] == b[0] {
				a, b = a[1:], b[1:]
				continue
			}
			ar, br, an, bn = rune(a[0]), rune(b[0]), 1, 1
		} else {
			ar, an = c.encoder.NextRune(a)
			br, bn = c.encoder.NextRune(b)
			if an == 0 || bn == 0 || an == utf8.RuneError || bn == utf8.RuneError {
				return 0, false
			}
		}
		if aw, bw := c.runeWeight(ar), c.runeWeight(br); aw != bw {
			if aw < bw {
				return -1, true
			}
			return 1, true
		}
		a, b = a[an:], b[bn:]
	}
	switch {
	case len(a) < len(b):
		return -1, true
	case len(a) > len(b):
		return 1, true
	}
	return 0, true
}

// collatedSortIter is ORDER BY over plain columns with strings compared
// by collationComparer (see above). It returns the sorted rows of child.
type collatedSortIter struct {
	fields gsql.SortFields
	child  gsql.RowIter
	rows   []gsql.Row
	next   int
	sorted bool
}

func newCollatedSortIter(fields gsql.SortFields, child gsql.RowIter) *collatedSortIter {
	return &collatedSortIter{fields: fields, child: child}
}

// Next implements sql.RowIter.
func (it *collatedSortIter) Next(ctx *gsql.Context) (gsql.Row, error) {
	if !it.sorted {
		if err := it.sort(ctx); err != nil {
			return nil, err
		}
		it.sorted = true
	}
	if it.next >= len(it.rows) {
		return nil, io.EOF
	}
	row := it.rows[it.next]
	it.next++
	return row, nil
}

// Close implements sql.RowIter.
func (it *collatedSortIter) Close(ctx *gsql.Context) error {
	it.rows = nil
	return it.child.Close(ctx)
}

// sort reads the child's rows into the query's rows cache and sorts them.
func (it *collatedSortIter) sort(ctx *gsql.Context) error {
	cache, dispose := ctx.Memory.NewRowsCache()
	defer dispose()
	for {
		row, err := it.child.Next(ctx)
		if err == io.EOF {
			break
		}
		if err != nil {
			return err
		}
		if err := cache.Add(row); err != nil {
			return err
		}
	}
	rows := cache.Get()
	s, ok := newCollatedSorter(ctx, it.fields, rows)
	if !ok {
		// A column did not evaluate: GMS's sorter, for GMS's error.
		gs := &expression.Sorter{SortFields: it.fields, Rows: rows, Ctx: ctx}
		sort.Stable(gs)
		if gs.LastError != nil {
			return gs.LastError
		}
		it.rows = rows
		return nil
	}
	sort.Stable(s)
	if s.err != nil {
		return s.err
	}
	it.rows = make([]gsql.Row, len(rows))
	for i, r := range s.perm {
		it.rows[i] = rows[r]
	}
	return nil
}

// collatedSorter sorts a permutation of rows by the sort fields, over
// their values evaluated once (sort.Interface).
type collatedSorter struct {
	ctx    *gsql.Context
	fields gsql.SortFields
	types  []gsql.Type
	// strs holds, by field, the comparer of a string field, nil for the
	// others.
	strs []*collationComparer
	// perm is the order of the rows, by index.
	perm []int
	// vals holds row r's value of field f at r*len(fields)+f.
	vals []any
	err  error
}

// newCollatedSorter evaluates the sort fields of rows. ok is false when a
// field's evaluation fails.
func newCollatedSorter(ctx *gsql.Context, fields gsql.SortFields, rows []gsql.Row) (*collatedSorter, bool) {
	nf := len(fields)
	s := &collatedSorter{
		ctx:    ctx,
		fields: fields,
		types:  make([]gsql.Type, nf),
		strs:   make([]*collationComparer, nf),
		perm:   make([]int, len(rows)),
		vals:   make([]any, len(rows)*nf),
	}
	for f, sf := range fields {
		s.types[f] = sf.Column.Type()
		if st, ok := s.types[f].(types.StringType); ok {
			s.strs[f] = newCollationComparer(st)
		}
	}
	for r, row := range rows {
		s.perm[r] = r
		for f, sf := range fields {
			v, err := sf.Column.Eval(ctx, row)
			if err != nil {
				return nil, false
			}
			s.vals[r*nf+f] = v
		}
	}
	return s, true
}

// Len implements sort.Interface.
func (s *collatedSorter) Len() int { return len(s.perm) }

// Swap implements sort.Interface.
func (s *collatedSorter) Swap(i, j int) { s.perm[i], s.perm[j] = s.perm[j], s.perm[i] }

// Less implements sort.Interface as expression.Sorter.Less does.
func (s *collatedSorter) Less(i, j int) bool {
	return s.compareRows(s.perm[i], s.perm[j]) < 0
}

// compareRows compares rows ra and rb (by their index in the rows
// sorted) as Less orders them: -1 when ra goes first, 1 when rb does, 0
// when they tie (or after an error, kept in err).
func (s *collatedSorter) compareRows(ra, rb int) int {
	if s.err != nil {
		return 0
	}
	nf := len(s.fields)
	a, b := ra*nf, rb*nf
	for f, sf := range s.fields {
		av, bv := s.vals[a+f], s.vals[b+f]
		if sf.Order == gsql.Descending {
			av, bv = bv, av
		}
		if av == nil && bv == nil {
			continue
		} else if av == nil {
			return nullFirst(sf.NullOrdering == gsql.NullsFirst)
		} else if bv == nil {
			return nullFirst(sf.NullOrdering != gsql.NullsFirst)
		}
		cmp, done := 0, false
		if c := s.strs[f]; c != nil {
			as, aok := av.(string)
			bs, bok := bv.(string)
			if aok && bok {
				cmp, done = c.compare(as, bs)
			}
		}
		if !done {
			var err error
			if cmp, err = s.types[f].Compare(s.ctx, av, bv); err != nil {
				s.err = err
				return 0
			}
		}
		switch cmp {
		case -1:
			return -1
		case 1:
			return 1
		}
	}
	return 0
}

// nullFirst is compareRows' answer for a NULL against a value: -1 when
// the row whose value is NULL goes first (first set), else 1.
func nullFirst(first bool) int {
	if first {
		return -1
	}
	return 1
}

// buildCollatedSort builds n as a collatedSortIter when its fields allow it
// (collatedSortable), else returns nil for GMS to build it.
func (b *compatBuilder) buildCollatedSort(ctx *gsql.Context, n *plan.Sort, row gsql.Row) (gsql.RowIter, error) {
	if !collatedSortable(n.SortFields) {
		return nil, nil
	}
	child, err := b.gms.Build(ctx, n.Child, row)
	if err != nil {
		return nil, err
	}
	return newCollatedSortIter(n.SortFields, child), nil
}
