package compat

import (
	"fmt"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	gsql "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/analyzer"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/expression/function/aggregation"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/transform"
	"github.com/dolthub/go-mysql-server/sql/types"

	"github.com/percdb/percdb/sql/tablemeta"
)

// GMS compares strings under their collation ('apple' = 'APPLE' under
// utf8mb4_0900_ai_ci, percdb's default) and groups them so in GROUP BY,
// but wherever it tells values apart by a hash it hashes the string's
// bytes (sql.HashOf): SELECT DISTINCT, UNION, INTERSECT and EXCEPT keep
// 'apple' and 'APPLE' apart, COUNT(DISTINCT s) counts both, a hash join
// on a.s = b.s misses the rows that differ in case, and so does an IN
// subquery GMS evaluates from a hash of its rows.
//
// CollationKeys, run after GMS's last planning rule, makes each of those
// hash a collation key instead (the hash of the string's collation weights,
// as GMS's GROUP BY does):
//
//   - COUNT(DISTINCT s) counts the keys of s;
//   - a hash join's lookup keys (HashLookup) are the keys of the joined
//     strings, whose join condition still compares the strings;
//   - x IN (SELECT s ...), when GMS evaluates it rather than joining,
//     looks the key of x up among the keys of s;
//   - DISTINCT, and UNION (DISTINCT), become a node of percdb's own that
//     tells rows apart by the keys of their strings (built by
//     compatBuilder); the rows it returns keep their spelling, the first
//     met of those with the same key, as in MySQL.
//
// Strings under a binary collation (binary, *_bin) hash as they are: GMS
// is right about those, and the plans stay GMS's, but for PAD SPACE ones
// (utf8mb4_bin), whose keys leave trailing spaces out (padspace.go). INTERSECT and EXCEPT
// are still GMS's: inside a subquery GMS puts the outer row before the
// rows of each side of a set operation it knows, which a node of percdb's
// in its place would not get.

// CollationKeys is the analyzer rule; see the comment at the top of the
// file. It runs once the plan is final (after GMS has assigned execution
// indexes), over the whole tree, subqueries and the sides of set
// operations included, and leaves what it has rewritten as it is when
// it meets it again.
func CollationKeys(ctx *gsql.Context, _ *analyzer.Analyzer, n gsql.Node, _ *plan.Scope, _ analyzer.RuleSelector, _ *gsql.QueryFlags) (gsql.Node, transform.TreeIdentity, error) {
	return collationKeysIn(ctx, n)
}

func collationKeysIn(ctx *gsql.Context, n gsql.Node) (gsql.Node, transform.TreeIdentity, error) {
	return transform.NodeWithOpaque(n, func(n gsql.Node) (gsql.Node, transform.TreeIdentity, error) {
		n, sameE, err := transform.OneNodeExprsWithNode(n, func(_ gsql.Node, e gsql.Expression) (gsql.Expression, transform.TreeIdentity, error) {
			return collationKeysInExpr(ctx, e)
		})
		if err != nil {
			return nil, transform.SameTree, err
		}
		ret, sameN, err := collationKeysInNode(n)
		return ret, sameE && sameN, err
	})
}

// collationKeysInNode rewrites one node.
func collationKeysInNode(n gsql.Node) (gsql.Node, transform.TreeIdentity, error) {
	switch n := n.(type) {
	case *plan.Distinct:
		if !hasCollatedColumn(n.Schema()) {
			break
		}
		return &CollatedDistinct{UnaryNode: plan.UnaryNode{Child: n.Child}}, transform.NewTree, nil
	case *plan.OrderedDistinct:
		if !hasCollatedColumn(n.Schema()) {
			break
		}
		return &CollatedDistinct{UnaryNode: plan.UnaryNode{Child: n.Child}}, transform.NewTree, nil
	case *plan.SetOp:
		if !n.Distinct || n.SetOpType != plan.UnionType || !hasCollatedColumn(n.Schema()) && !hasTemporalColumn(n.Schema()) {
			break
		}
		// UNION ALL, DISTINCT by collation keys, then GMS's own nodes
		// for what SetOp does after the DISTINCT: ORDER BY, OFFSET,
		// LIMIT.
		all := *n
		all.Distinct, all.Limit, all.Offset, all.SortFields = false, nil, nil, nil
		return withSetOpTail(n, &CollatedDistinct{UnaryNode: plan.UnaryNode{Child: &all}}), transform.NewTree, nil
	case *plan.JoinNode:
		// A semi join's DISTINCT inner side compared in a binary
		// collation (semijoin.go).
		ret, same := bytesDistinctsForBinaryKeys(n)
		return ret, same, nil
	case *plan.IndexedTableAccess:
		// A lookup key that the index column cannot hold exactly
		// (hashkey.go).
		return exactLookupKeys(n)
	case *plan.HashLookup:
		// Keys that compare equal must hash equal: across types
		// (hashkey.go), then under collations.
		left, right, sameTypes := comparableHashKeys(n.LeftProbeKey, n.RightEntryKey)
		left, right, same := keyPairs(left, right)
		if same && sameTypes {
			break
		}
		ret := *n
		ret.LeftProbeKey, ret.RightEntryKey = left, right
		return &ret, transform.NewTree, nil
	}
	return n, transform.SameTree, nil
}

// collationKeysInExpr rewrites COUNT(DISTINCT) and IN subqueries in e.
func collationKeysInExpr(ctx *gsql.Context, e gsql.Expression) (gsql.Expression, transform.TreeIdentity, error) {
	return transform.Expr(e, func(e gsql.Expression) (gsql.Expression, transform.TreeIdentity, error) {
		switch e := e.(type) {
		case *plan.InSubquery:
			sq, ok := e.Right().(*plan.Subquery)
			if !ok {
				break
			}
			sch := sq.Query.Schema()
			if len(sch) != 1 {
				break
			}
			if k, ok := newInKeyer(e.Left().Type(), sch[0].Type); ok {
				// Numbers, or dates, of different types
				// (hashkey.go).
				return &collatedIn{InSubquery: e, keyer: k}, transform.NewTree, nil
			}
			st, ok := inComparedString(ctx, e.Left(), sq)
			if !ok {
				break
			}
			return &collatedIn{InSubquery: e, keyer: newStringKeyer(st)}, transform.NewTree, nil
		case *aggregation.CountDistinct:
			if e.Window() != nil {
				break
			}
			args := e.Children()
			var keyed []gsql.Expression
			for i, a := range args {
				if k, ok := newCollationHash(a); ok {
					if keyed == nil {
						keyed = append([]gsql.Expression(nil), args...)
					}
					keyed[i] = k
				}
			}
			if keyed == nil {
				break
			}
			// GMS's WithChildren forgets the column ID, by which the
			// plan above finds the count.
			return aggregation.NewCountDistinct(keyed...).WithId(e.Id()).(gsql.Expression), transform.NewTree, nil
		}
		return e, transform.SameTree, nil
	})
}

// keyPairs returns the lookup keys of a hash join with the collated
// strings compared in the same collation on both sides replaced by
// their collation keys, and whether nothing was replaced. A key is one
// expression or a tuple of them.
func keyPairs(left, right gsql.Expression) (gsql.Expression, gsql.Expression, transform.TreeIdentity) {
	lt, lok := left.(expression.Tuple)
	rt, rok := right.(expression.Tuple)
	if lok != rok {
		return left, right, transform.SameTree
	}
	if !lok {
		if !sameCollatedString(left.Type(), right.Type()) {
			return left, right, transform.SameTree
		}
		l, _ := newCollationHash(left)
		r, _ := newCollationHash(right)
		return l, r, transform.NewTree
	}
	if len(lt) != len(rt) {
		return left, right, transform.SameTree
	}
	var ls, rs []gsql.Expression
	for i := range lt {
		if !sameCollatedString(lt[i].Type(), rt[i].Type()) {
			continue
		}
		if ls == nil {
			ls, rs = append([]gsql.Expression(nil), lt...), append([]gsql.Expression(nil), rt...)
		}
		ls[i], _ = newCollationHash(lt[i])
		rs[i], _ = newCollationHash(rt[i])
	}
	if ls == nil {
		return left, right, transform.SameTree
	}
	return expression.NewTuple(ls...), expression.NewTuple(rs...), transform.NewTree
}

// collatedStringType returns t as a string type whose collation calls
// strings of different bytes equal: one percdb's indexes key by their
// collation's sort key, or without their trailing spaces (PAD SPACE,
// padspace.go).
func collatedStringType(t gsql.Type) (gsql.StringType, bool) {
	st, ok := t.(gsql.StringType)
	if !ok || tablemeta.CollationKeyFunc(t) == nil && !tablemeta.PadsSpaces(t) {
		return nil, false
	}
	return st, true
}

// foldingStringType reports whether t is a string type whose collation
// calls strings of different characters equal ('a' and 'A'), not only
// strings that differ in trailing spaces.
func foldingStringType(t gsql.Type) bool {
	_, ok := t.(gsql.StringType)
	return ok && tablemeta.CollationKeyFunc(t) != nil
}

// sameCollatedString reports whether a and b are string types of the
// same collation, one that calls strings of different bytes equal.
func sameCollatedString(a, b gsql.Type) bool {
	as, ok := collatedStringType(a)
	if !ok {
		return false
	}
	bs, ok := b.(gsql.StringType)
	return ok && bs.Collation() == as.Collation()
}

// inComparedString returns the string type whose collation x IN
// (SELECT s ...) compares x and s in, when it is one that calls strings
// of different bytes equal. Of two collations, MySQL's coercibility
// rules choose: b IN (SELECT 'a  '), b a utf8mb4_bin column, compares
// under utf8mb4_bin (the column's is implicit, the literal's
// coercible), which pads, though the literal's own collation does not.
func inComparedString(ctx *gsql.Context, x gsql.Expression, sq *plan.Subquery) (gsql.StringType, bool) {
	right := sq.Query.Schema()[0].Type
	if sameCollatedString(x.Type(), right) {
		st, _ := collatedStringType(right)
		return st, true
	}
	if !types.IsTextOnly(x.Type()) || !types.IsTextOnly(right) {
		return nil, false
	}
	lc, lk := gsql.GetCoercibility(ctx, x)
	rc, rk, ok := firstColumnCoercibility(ctx, sq.Query)
	if !ok {
		rc, rk = right.(gsql.StringType).Collation(), 2 // a column's
	}
	coll, _ := gsql.ResolveCoercibility(lc, lk, rc, rk)
	for _, t := range []gsql.Type{x.Type(), right} {
		if st, ok := collatedStringType(t); ok && st.Collation() == coll {
			return st, true
		}
	}
	return nil, false
}

// firstColumnCoercibility returns the collation and coercibility of
// the first column of n, a subquery's plan: its projection's, found
// through the nodes above it that pass its columns on (a limit, a sort,
// a distinct, ...), and for a set operation (UNION) its sides' resolved
// as MySQL aggregates them; ok is false when it is not found.
func firstColumnCoercibility(ctx *gsql.Context, n gsql.Node) (gsql.CollationID, byte, bool) {
	for {
		switch x := n.(type) {
		case *plan.Project:
			if len(x.Projections) == 0 {
				return 0, 0, false
			}
			c, k := gsql.GetCoercibility(ctx, x.Projections[0])
			return c, k, true
		case *plan.SetOp:
			lc, lk, ok := firstColumnCoercibility(ctx, x.Left())
			if !ok {
				return 0, 0, false
			}
			rc, rk, ok := firstColumnCoercibility(ctx, x.Right())
			if !ok {
				return 0, 0, false
			}
			c, k := gsql.ResolveCoercibility(lc, lk, rc, rk)
			return c, k, true
		case *plan.Limit, *plan.Sort, *plan.TopN, *plan.Distinct, *plan.OrderedDistinct, *plan.Offset,
			*plan.Max1Row, *plan.SubqueryAlias, *plan.Having, *plan.Filter, *CollatedDistinct:
			n = x.Children()[0]
		default:
			return 0, 0, false
		}
	}
}

// hasCollatedColumn reports whether a column of sch is a string under a
// collation that calls strings of different bytes equal.
func hasCollatedColumn(sch gsql.Schema) bool {
	for _, c := range sch {
		if _, ok := collatedStringType(c.Type); ok {
			return true
		}
	}
	return false
}

// collationHash is the hash of a string's collation key (the key
// percdb's indexes keep, meta.go), equal for strings the collation calls
// equal. NULL's is NULL.
type collationHash struct {
	child gsql.Expression
	keyer *stringKeyer
}

var _ gsql.Expression = (*collationHash)(nil)

// newCollationHash returns the key of e, when e is a string under a
// collation that calls strings of different bytes equal (and not a key
// already).
func newCollationHash(e gsql.Expression) (gsql.Expression, bool) {
	if _, ok := e.(*collationHash); ok {
		return e, false
	}
	st, ok := collatedStringType(e.Type())
	if !ok {
		return e, false
	}
	return &collationHash{child: e, keyer: newStringKeyer(st)}, true
}

// Resolved implements sql.Expression.
func (k *collationHash) Resolved() bool { return k.child.Resolved() }

// String implements sql.Expression.
func (k *collationHash) String() string {
	return fmt.Sprintf("collation_hash(%s)", k.child)
}

// Type implements sql.Expression.
func (k *collationHash) Type() gsql.Type { return types.Uint64 }

// IsNullable implements sql.Expression.
func (k *collationHash) IsNullable() bool { return k.child.IsNullable() }

// Eval implements sql.Expression.
func (k *collationHash) Eval(ctx *gsql.Context, row gsql.Row) (any, error) {
	v, err := k.child.Eval(ctx, row)
	if err != nil || v == nil {
		return nil, err
	}
	return k.keyer.key(ctx, v)
}

// stringKeyer hashes the collation keys of the strings of one type (the
// weights of their characters, meta.go's collationKey) with FNV-1a over
// whole weights, without building the key. DISTINCT
// of a CHAR(120) column hashes every row's, so the weights of ASCII
// characters are looked up once (GMS's weight functions look each
// character up in a map). It does not change once made.
type stringKeyer struct {
	typ    gsql.StringType
	weight gsql.CollationSorter
	ascii  [utf8.RuneSelf]uint32
	// padSpace leaves trailing spaces out of the key (PAD SPACE).
	padSpace bool
}

func newStringKeyer(t gsql.StringType) *stringKeyer {
	k := &stringKeyer{typ: t, weight: t.Collation().Sorter(), padSpace: tablemeta.PadsSpaces(t)}
	for r := range k.ascii {
		k.ascii[r] = uint32(k.weight(rune(r)))
	}
	return k
}

// key returns the hash of the collation key of v, a value of the type.
func (k *stringKeyer) key(ctx *gsql.Context, v any) (uint64, error) {
	s, ok := v.(string)
	if !ok {
		var err error
		if s, err = types.ConvertToString(ctx, v, k.typ, nil); err != nil {
			return 0, err
		}
	}
	if k.padSpace {
		s = strings.TrimRight(s, " ")
	}
	const (
		offset64 = 14695981039346656037
		prime64  = 1099511628211
	)
	h := uint64(offset64)
	for i := 0; i < len(s); {
		var w uint32
		if c := s[i]; c < utf8.RuneSelf {
			w = k.ascii[c]
			i++
		} else {
			r, n := utf8.DecodeRuneInString(s[i:])
			w = uint32(k.weight(r))
			if r == utf8.RuneError && n <= 1 {
				w = uint32(c)
			}
			i += n
		}
		h = (h ^ uint64(w)) * prime64
	}
	return h, nil
}

// Children implements sql.Expression.
func (k *collationHash) Children() []gsql.Expression { return []gsql.Expression{k.child} }

// WithChildren implements sql.Expression.
func (k *collationHash) WithChildren(children ...gsql.Expression) (gsql.Expression, error) {
	if len(children) != 1 {
		return nil, gsql.ErrInvalidChildrenNumber.New(k, len(children), 1)
	}
	return &collationHash{child: children[0], keyer: k.keyer}, nil
}

// rowKeys hashes rows of a schema, each collated string by its collation
// key, each temporal value as its column's type holds it (GMS's DATE()
// gives a string in a DATE column, a union side a time.Time), and every
// other value as GMS's sql.HashOf does.
type rowKeys struct {
	// collated holds, by column, the keyer of a collated string column,
	// nil for the others.
	collated []*stringKeyer
	// temporal holds, by column, the type of a temporal column, nil for
	// the others.
	temporal []gsql.Type
	buf      gsql.Row
}

func newRowKeys(sch gsql.Schema) *rowKeys {
	k := &rowKeys{collated: make([]*stringKeyer, len(sch)), temporal: make([]gsql.Type, len(sch))}
	for i, c := range sch {
		if st, ok := collatedStringType(c.Type); ok {
			k.collated[i] = newStringKeyer(st)
		}
		if types.IsTime(c.Type) {
			k.temporal[i] = c.Type
		}
	}
	return k
}

// key returns the hash of row. The row's last values are the schema's
// columns: in a subquery GMS puts the outer query's row before them.
func (k *rowKeys) key(ctx *gsql.Context, row gsql.Row) (uint64, error) {
	k.buf = append(k.buf[:0], row...)
	at := len(k.buf) - len(k.collated)
	for i, kr := range k.collated {
		if at+i < 0 || k.buf[at+i] == nil {
			continue
		}
		if t := k.temporal[i]; t != nil {
			v := k.buf[at+i]
			if tm, ok := v.(time.Time); ok {
				k.buf[at+i] = tm.UTC()
			} else if cv, _, err := t.Convert(ctx, v); err == nil {
				k.buf[at+i] = cv
			}
		}
		if kr == nil {
			continue
		}
		key, err := kr.key(ctx, k.buf[at+i])
		if err != nil {
			return 0, err
		}
		k.buf[at+i] = key
	}
	return gsql.HashOf(ctx, k.buf)
}

// CollatedDistinct is DISTINCT that tells rows apart by rowKeys. It
// returns the first of the rows with the same key, as they come.
type CollatedDistinct struct {
	plan.UnaryNode
}

var _ gsql.Node = (*CollatedDistinct)(nil)

// String implements sql.Node. EXPLAIN shows it as GMS's Distinct.
func (d *CollatedDistinct) String() string {
	p := gsql.NewTreePrinter()
	_ = p.WriteNode("Distinct")
	_ = p.WriteChildren(d.Child.String())
	return p.String()
}

// IsReadOnly implements sql.Node.
func (d *CollatedDistinct) IsReadOnly() bool { return d.Child.IsReadOnly() }

// WithChildren implements sql.Node.
func (d *CollatedDistinct) WithChildren(children ...gsql.Node) (gsql.Node, error) {
	if len(children) != 1 {
		return nil, gsql.ErrInvalidChildrenNumber.New(d, len(children), 1)
	}
	return &CollatedDistinct{UnaryNode: plan.UnaryNode{Child: children[0]}}, nil
}

// collatedDistinctIter returns the rows of child whose key it has not
// returned yet. The keys it keeps count against the query's memory (row)
// budget, as GMS's DISTINCT's do.
type collatedDistinctIter struct {
	child   gsql.RowIter
	keys    *rowKeys
	seen    gsql.KeyValueCache
	dispose gsql.DisposeFunc
}

// NewCollatedDistinctIter returns the rows of child, of schema sch, that
// no row before them equals under the columns' collations.
func NewCollatedDistinctIter(ctx *gsql.Context, sch gsql.Schema, child gsql.RowIter) gsql.RowIter {
	seen, dispose := ctx.Memory.NewHistoryCache()
	return &collatedDistinctIter{child: child, keys: newRowKeys(sch), seen: seen, dispose: dispose}
}

// Next implements sql.RowIter.
func (it *collatedDistinctIter) Next(ctx *gsql.Context) (gsql.Row, error) {
	for {
		row, err := it.child.Next(ctx)
		if err != nil {
			return nil, err
		}
		if fresh, err := it.keys.firstSeen(ctx, it.seen, row); err != nil || !fresh {
			if err != nil {
				return nil, err
			}
			continue
		}
		return row, nil
	}
}

// firstSeen reports whether row's key is not in seen yet, and puts it
// there: whether row is the first of its values.
func (k *rowKeys) firstSeen(ctx *gsql.Context, seen gsql.KeyValueCache, row gsql.Row) (bool, error) {
	key, err := k.key(ctx, row)
	if err != nil {
		return false, err
	}
	if _, err := seen.Get(key); err == nil {
		return false, nil
	}
	if err := seen.Put(key, struct{}{}); err != nil {
		return false, err
	}
	return true, nil
}

// Close implements sql.RowIter.
func (it *collatedDistinctIter) Close(ctx *gsql.Context) error {
	if it.dispose != nil {
		it.dispose()
		it.dispose = nil
	}
	return it.child.Close(ctx)
}

// valueKeyer hashes values so that values that compare equal have one
// key: strings under a collation (stringKeyer), numbers of different
// types (numberKeyer).
type valueKeyer interface {
	key(ctx *gsql.Context, v any) (uint64, error)
}

// collatedIn is x IN (SELECT s ...) (GMS's InSubquery, which looks x up
// in a hash of the values of s) with x and s strings of one collation
// that calls strings of different bytes equal: it looks up the collation
// key of x among those of s. The keys of a subquery whose rows GMS keeps
// for the query (one that does not depend on the outer row) are made
// once per set of rows.
type collatedIn struct {
	*plan.InSubquery
	keyer valueKeyer

	mu     sync.Mutex
	rows   []any // the subquery rows keys was made of
	keys   map[uint64]bool
	hasNil bool
}

var _ gsql.Expression = (*collatedIn)(nil)

// WithChildren implements sql.Expression.
func (in *collatedIn) WithChildren(children ...gsql.Expression) (gsql.Expression, error) {
	e, err := in.InSubquery.WithChildren(children...)
	if err != nil {
		return nil, err
	}
	return &collatedIn{InSubquery: e.(*plan.InSubquery), keyer: in.keyer}, nil
}

// Eval implements sql.Expression: TRUE when a value of the subquery has
// the key of x; else NULL when x is NULL (and the subquery has rows) or
// the subquery has a NULL; else FALSE.
func (in *collatedIn) Eval(ctx *gsql.Context, row gsql.Row) (any, error) {
	left, err := in.Left().Eval(ctx, row)
	if err != nil {
		return nil, err
	}
	sq := in.Right().(*plan.Subquery)
	rows, err := sq.EvalMultiple(ctx, row)
	if err != nil {
		return nil, err
	}
	if left == nil {
		if len(rows) == 0 {
			return false, nil
		}
		return nil, nil
	}
	k, err := in.keyer.key(ctx, left)
	if err != nil {
		return nil, err
	}
	keys, hasNil, err := in.keysOf(ctx, rows, sq.CanCacheResults())
	if err != nil {
		return nil, err
	}
	switch {
	case keys[k]:
		return true, nil
	case hasNil:
		return nil, nil
	}
	return false, nil
}

// keysOf returns the keys of rows, and whether one is NULL. When keep,
// rows are the ones GMS keeps for the query, and the keys are kept for
// as long as GMS returns the same rows.
func (in *collatedIn) keysOf(ctx *gsql.Context, rows []any, keep bool) (map[uint64]bool, bool, error) {
	if keep {
		in.mu.Lock()
		defer in.mu.Unlock()
		if in.keys != nil && len(rows) == len(in.rows) && (len(rows) == 0 || &rows[0] == &in.rows[0]) {
			return in.keys, in.hasNil, nil
		}
	}
	keys := make(map[uint64]bool, len(rows))
	hasNil := false
	for _, v := range rows {
		if v == nil {
			hasNil = true
			continue
		}
		k, err := in.keyer.key(ctx, v)
		if err != nil {
			return nil, false, err
		}
		keys[k] = true
	}
	if keep {
		in.rows, in.keys, in.hasNil = rows, keys, hasNil
	}
	return keys, hasNil, nil
}

// DistinctKey returns how a DISTINCT under collations (CollatedDistinct)
// keys the rows of schema sch: rows GMS's DISTINCT calls equal get equal
// keys. Rows of one string column under a collation are keyed by its
// collation key alone (the row's hash would hash that key once more; rows
// are told apart alike, but for 64-bit collisions). The fast path's range
// reads keep DISTINCT's first rows with it.
func DistinctKey(sch gsql.Schema) func(ctx *gsql.Context, row gsql.Row) (uint64, error) {
	if len(sch) == 1 {
		if one, ok := collatedStringType(sch[0].Type); ok {
			k := newStringKeyer(one)
			return func(ctx *gsql.Context, row gsql.Row) (uint64, error) { return k.key(ctx, row[0]) }
		}
	}
	return newRowKeys(sch).key
}
