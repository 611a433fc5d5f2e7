package compat

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	gsql "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/expression/function/aggregation"
	"github.com/dolthub/go-mysql-server/sql/transform"
	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/dolthub/vitess/go/sqltypes"
	ast "github.com/dolthub/vitess/go/vt/sqlparser"

	"github.com/percdb/percdb/sql/tablemeta"
)

// GROUP_CONCAT. GMS's (aggregation.GroupConcat) converts each value to
// LONGTEXT, which fails on a TIME ("incompatible conversion to SQL type:
// '10:00:00'->longtext"), writes a DECIMAL or a YEAR as Go does and a
// DOUBLE as 'f' text; it concatenates only the first of several
// arguments (MySQL concatenates all, and skips a row with a NULL in
// any), drops empty binary strings, tells DISTINCT values apart by their
// bytes whatever the collation (and trailing spaces under PAD SPACE
// ones too), cuts the result at
// group_concat_max_len bytes inside a character and without warning
// 1260, reads group_concat_max_len when the statement is planned, and
// sets its result type while it runs, on the plan's node. Its ORDER BY
// fields and its values are one list of children whose split it keeps
// unexported, so no rule can reach its values from outside.
//
// So percdb has its own: groupConcatCalls rewrites each GROUP_CONCAT of
// the parsed statement into a call of the aggregate function
// group_concat whose first argument is a literal that says how many of
// the rest are values and how many ORDER BY keys (with their
// directions), whether it is DISTINCT, and its SEPARATOR; Function gives
// GMS's planner percdb's group_concat for that name (newGroupConcat).
// The planner binds aggregate calls by name through the catalog, so the
// GROUP BY, HAVING and ORDER BY of the query find it as any aggregate.
// An ORDER BY key that is an integer names a value by its position, as
// in MySQL (setup_order over the function's arguments).

// groupConcatMarker starts the options literal of a rewritten
// GROUP_CONCAT: a NUL byte no SQL text a user writes by hand puts there.
const groupConcatMarker = "\x00percdb-group-concat:"

// groupConcatCalls rewrites the GROUP_CONCATs of stmt as calls of
// percdb's group_concat (see the comment above).
func groupConcatCalls(stmt ast.Statement) ast.Statement {
	if stmt == nil {
		return stmt
	}
	_ = ast.Walk(func(node ast.SQLNode) (bool, error) {
		switch n := node.(type) {
		case *ast.AliasedExpr:
			n.Expr = replaceGroupConcats(n.Expr)
		case *ast.Where:
			if n != nil {
				n.Expr = replaceGroupConcats(n.Expr)
			}
		case *ast.Order:
			n.Expr = replaceGroupConcats(n.Expr)
		}
		return true, nil
	}, stmt)
	return stmt
}

// replaceGroupConcats returns e with each GROUP_CONCAT outside its
// subqueries replaced by the call.
func replaceGroupConcats(e ast.Expr) ast.Expr {
	if e == nil {
		return e
	}
	var found []*ast.GroupConcatExpr
	_ = ast.Walk(func(node ast.SQLNode) (bool, error) {
		switch n := node.(type) {
		case *ast.Subquery:
			return false, nil
		case *ast.GroupConcatExpr:
			found = append(found, n)
			return false, nil
		}
		return true, nil
	}, e)
	for _, gc := range found {
		e = ast.ReplaceExpr(e, gc, groupConcatCall(gc))
	}
	return e
}

// groupConcatCall returns the call of group_concat that gc is.
func groupConcatCall(gc *ast.GroupConcatExpr) ast.Expr {
	var opts strings.Builder
	opts.WriteString(groupConcatMarker)
	distinct := "0"
	if strings.TrimSpace(gc.Distinct) != "" {
		distinct = "1"
	}
	opts.WriteString(distinct)
	var dirs []byte
	args := ast.SelectExprs{nil}
	args = append(args, gc.Exprs...)
	for _, o := range gc.OrderBy {
		key := o.Expr
		if pos, ok := orderPosition(key, len(gc.Exprs)); ok {
			if a, isAliased := gc.Exprs[pos].(*ast.AliasedExpr); isAliased {
				key = a.Expr
			}
		}
		args = append(args, &ast.AliasedExpr{Expr: key})
		if o.Direction == ast.DescScr {
			dirs = append(dirs, 'd')
		} else {
			dirs = append(dirs, 'a')
		}
	}
	sep := ","
	if !gc.Separator.DefaultSeparator {
		sep = gc.Separator.SeparatorString
	}
	fmt.Fprintf(&opts, ";%d;%s;%s", len(gc.Exprs), dirs, sep)
	args[0] = &ast.AliasedExpr{Expr: ast.NewStrVal([]byte(opts.String()))}
	return &ast.FuncExpr{Name: ast.NewColIdent("group_concat"), Exprs: args}
}

// orderPosition returns the index of the value an ORDER BY key names by
// its position (1-based in SQL), when it is an integer literal.
func orderPosition(e ast.Expr, values int) (int, bool) {
	v, ok := e.(*ast.SQLVal)
	if !ok || v.Type != ast.IntVal {
		return 0, false
	}
	n, err := strconv.Atoi(string(v.Val))
	if err != nil || n < 1 || n > values {
		return 0, false
	}
	return n - 1, true
}

// groupConcatFunction is the catalog's group_concat.
var groupConcatFunction = gsql.FunctionN{Name: "group_concat", Fn: newGroupConcat}

// newGroupConcat returns the GROUP_CONCAT of args: the options literal
// of groupConcatCall and its values and keys, or (a call written
// `group_concat`(...) by hand) values only.
func newGroupConcat(args ...gsql.Expression) (gsql.Expression, error) {
	g := &GroupConcat{separator: ","}
	if len(args) > 0 {
		if lit, ok := args[0].(*expression.Literal); ok {
			if s, isString := lit.Value().(string); isString && strings.HasPrefix(s, groupConcatMarker) {
				if err := g.readOptions(s[len(groupConcatMarker):], len(args)-1); err != nil {
					return nil, err
				}
				g.values = args[1 : 1+g.nValues]
				g.keys = args[1+g.nValues:]
				return g, nil
			}
		}
	}
	if len(args) == 0 {
		return nil, gsql.ErrInvalidArgumentNumber.New("group_concat", "1 or more", 0)
	}
	g.nValues = len(args)
	g.values = args
	return g, nil
}

// readOptions reads the options literal's text after the marker: the
// DISTINCT flag, the number of values, the keys' directions and the
// separator, of a call with n arguments after it.
func (g *GroupConcat) readOptions(s string, n int) error {
	parts := strings.SplitN(s, ";", 4)
	if len(parts) != 4 {
		return fmt.Errorf("group_concat: malformed options %q", s)
	}
	g.distinct = parts[0] == "1"
	values, err := strconv.Atoi(parts[1])
	if err != nil || values < 1 || values+len(parts[2]) != n {
		return fmt.Errorf("group_concat: malformed options %q for %d arguments", s, n)
	}
	g.nValues = values
	for i := 0; i < len(parts[2]); i++ {
		g.desc = append(g.desc, parts[2][i] == 'd')
	}
	g.separator = parts[3]
	return nil
}

// GroupConcat is MySQL's GROUP_CONCAT (see the comment above).
type GroupConcat struct {
	distinct  bool
	nValues   int
	values    []gsql.Expression
	keys      []gsql.Expression // ORDER BY keys
	desc      []bool            // by key
	separator string
	id        gsql.ColumnId
}

var _ gsql.Aggregation = (*GroupConcat)(nil)
var _ gsql.FunctionExpression = (*GroupConcat)(nil)

// FunctionName implements sql.FunctionExpression.
func (g *GroupConcat) FunctionName() string { return "group_concat" }

// Description implements sql.FunctionExpression.
func (g *GroupConcat) Description() string {
	return "MySQL's GROUP_CONCAT: the non-NULL values of a group, concatenated"
}

// Resolved implements sql.Expression.
func (g *GroupConcat) Resolved() bool {
	return expression.ExpressionsResolved(g.Children()...)
}

// String implements sql.Expression; the planner also tells aggregates
// apart by it, so it says everything.
func (g *GroupConcat) String() string {
	var b strings.Builder
	b.WriteString("group_concat(")
	if g.distinct {
		b.WriteString("distinct ")
	}
	for i, v := range g.values {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(v.String())
	}
	if len(g.keys) > 0 {
		b.WriteString(" order by ")
		for i, k := range g.keys {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(k.String())
			if g.desc[i] {
				b.WriteString(" DESC")
			} else {
				b.WriteString(" ASC")
			}
		}
	}
	b.WriteString(" separator ")
	b.WriteString(strconv.Quote(g.separator))
	b.WriteString(")")
	return b.String()
}

// Type implements sql.Expression: a binary string when a value is one
// (MySQL aggregates the values' character sets; a binary one wins),
// else text. MySQL's is VARCHAR up to a group_concat_max_len of 512,
// TEXT or BLOB beyond; the length is read when the statement runs, so
// the type is the long one.
func (g *GroupConcat) Type() gsql.Type {
	if g.binary() {
		return types.LongBlob
	}
	return types.LongText
}

// binary reports whether a value is a binary string.
func (g *GroupConcat) binary() bool {
	for _, v := range g.values {
		if isBinaryString(v.Type()) {
			return true
		}
	}
	return false
}

// isBinaryString reports whether t is a string type of the binary
// character set (BINARY, VARBINARY, BLOB) or a BIT.
func isBinaryString(t gsql.Type) bool {
	if types.IsBit(t) {
		return true
	}
	st, ok := t.(gsql.StringType)
	return ok && types.IsBinaryType(t) && st.Collation() == gsql.Collation_binary
}

// IsNullable implements sql.Expression: NULL for a group without a row
// of non-NULL values.
func (g *GroupConcat) IsNullable() bool { return true }

// Eval implements sql.Expression; an aggregate is evaluated through its
// buffer.
func (g *GroupConcat) Eval(*gsql.Context, gsql.Row) (any, error) {
	return nil, aggregation.ErrEvalUnsupportedOnAggregation.New("GROUP_CONCAT")
}

// Children implements sql.Expression: the values, then the keys.
func (g *GroupConcat) Children() []gsql.Expression {
	out := make([]gsql.Expression, 0, len(g.values)+len(g.keys))
	return append(append(out, g.values...), g.keys...)
}

// WithChildren implements sql.Expression.
func (g *GroupConcat) WithChildren(children ...gsql.Expression) (gsql.Expression, error) {
	if len(children) != len(g.values)+len(g.keys) {
		return nil, gsql.ErrInvalidChildrenNumber.New(g, len(children), len(g.values)+len(g.keys))
	}
	out := *g
	out.values = children[:g.nValues:g.nValues]
	out.keys = children[g.nValues:]
	return &out, nil
}

// Id implements sql.IdExpression.
func (g *GroupConcat) Id() gsql.ColumnId { return g.id }

// WithId implements sql.IdExpression.
func (g *GroupConcat) WithId(id gsql.ColumnId) gsql.IdExpression {
	out := *g
	out.id = id
	return &out
}

// NewWindowFunction implements sql.WindowAdaptableExpression. MySQL has
// no GROUP_CONCAT over a window, and the rewrite never makes one.
func (g *GroupConcat) NewWindowFunction() (gsql.WindowFunction, error) {
	return nil, gsql.ErrUnsupportedFeature.New("GROUP_CONCAT over a window")
}

// WithWindow implements sql.WindowAdaptableExpression.
func (g *GroupConcat) WithWindow(*gsql.WindowDefinition) gsql.WindowAdaptableExpression { return g }

// Window implements sql.WindowAdaptableExpression.
func (g *GroupConcat) Window() *gsql.WindowDefinition { return nil }

// NewBuffer implements sql.Aggregation.
func (g *GroupConcat) NewBuffer() (gsql.AggregationBuffer, error) {
	children := g.Children()
	cloned := make([]gsql.Expression, len(children))
	for i, c := range children {
		e, err := transform.Clone(c)
		if err != nil {
			return nil, err
		}
		cloned[i] = e
	}
	return &groupConcatBuffer{g: g, values: cloned[:g.nValues], keys: cloned[g.nValues:], seen: map[string]bool{}}, nil
}

// groupConcatBuffer holds one group's rows: each one's text, and its
// keys when there is an ORDER BY.
type groupConcatBuffer struct {
	g      *GroupConcat
	values []gsql.Expression
	keys   []gsql.Expression
	seen   map[string]bool // DISTINCT: the rows' collation keys
	rows   []groupConcatRow
	bytes  int    // the texts' lengths, to stop keeping rows past the cut
	maxLen uint64 // group_concat_max_len, read at the first row
}

// groupConcatRow is one row of a group.
type groupConcatRow struct {
	text string
	keys []any
}

// Update implements sql.AggregationBuffer.
func (b *groupConcatBuffer) Update(ctx *gsql.Context, row gsql.Row) error {
	if b.maxLen == 0 {
		n, err := groupConcatMaxLen(ctx)
		if err != nil {
			return err
		}
		b.maxLen = n
	}
	// Without an ORDER BY the rows come in the order they are kept:
	// once the text is past the cut, later rows change nothing.
	if len(b.keys) == 0 && uint64(b.bytes) > b.maxLen {
		return nil
	}
	var text, key strings.Builder
	for _, e := range b.values {
		v, err := e.Eval(ctx, row)
		if err != nil {
			return err
		}
		if v == nil {
			return nil // MySQL skips a row with a NULL value
		}
		s, err := valueText(ctx, e.Type(), v)
		if err != nil {
			return err
		}
		text.WriteString(s)
		if b.g.distinct {
			distinctKey(&key, e.Type(), s)
		}
	}
	if b.g.distinct {
		k := key.String()
		if b.seen[k] {
			return nil
		}
		b.seen[k] = true
	}
	r := groupConcatRow{text: text.String()}
	for _, e := range b.keys {
		v, err := e.Eval(ctx, row)
		if err != nil {
			return err
		}
		if str, ok := v.(string); ok && tablemeta.PadsSpaces(e.Type()) {
			// ORDER BY s sorts by the key of s (padspace.go)
			v = strings.TrimRight(str, " ")
		}
		r.keys = append(r.keys, v)
	}
	b.rows = append(b.rows, r)
	b.bytes += len(r.text) + len(b.g.separator)
	return nil
}

// distinctKey appends to key the part of a DISTINCT key of one value of
// type t, whose text is s: a string by its collation's weights (so that
// 'a' and 'A' are one value under a case-insensitive collation), every
// other value by its text. Each part ends with a byte no weight or text
// of a value has in that place, so parts cannot run into each other.
func distinctKey(key *strings.Builder, t gsql.Type, s string) {
	if st, ok := t.(gsql.StringType); ok && types.IsText(t) && st.Collation() != gsql.Collation_binary {
		if tablemeta.PadsSpaces(t) {
			// trailing spaces do not count (padspace.go)
			s = strings.TrimRight(s, " ")
		}
		weight := st.Collation().Sorter()
		for _, r := range s {
			fmt.Fprintf(key, "%x.", weight(r))
		}
		key.WriteByte(0)
		return
	}
	key.WriteString(strconv.Quote(s))
	key.WriteByte(0)
}

// Eval implements sql.AggregationBuffer: NULL for a group without rows;
// else the rows' texts, sorted by the keys, joined by the separator and
// cut at group_concat_max_len bytes (not inside a character), with
// warning 1260 naming the row the cut fell in, as MySQL.
func (b *groupConcatBuffer) Eval(ctx *gsql.Context) (any, error) {
	if len(b.rows) == 0 {
		return nil, nil
	}
	if len(b.keys) > 0 {
		var sortErr error
		sort.SliceStable(b.rows, func(i, j int) bool {
			for k, e := range b.keys {
				c, err := e.Type().Compare(ctx, b.rows[i].keys[k], b.rows[j].keys[k])
				if err != nil {
					sortErr = err
					return false
				}
				if c != 0 {
					return (c < 0) != b.g.desc[k]
				}
			}
			return false
		})
		if sortErr != nil {
			return nil, sortErr
		}
	}
	binary := b.g.binary()
	var out strings.Builder
	limit := int(min(b.maxLen, math.MaxInt32))
	for i, r := range b.rows {
		before := out.Len()
		if i > 0 {
			out.WriteString(b.g.separator)
		}
		out.WriteString(r.text)
		if out.Len() > limit {
			s := out.String()[:limit]
			if !binary {
				s = s[:before+validPrefix(s[before:])]
			}
			ctx.Warn(1260, "Row %d was cut by GROUP_CONCAT()", i+1)
			return groupConcatResult(s, binary), nil
		}
	}
	return groupConcatResult(out.String(), binary), nil
}

// validPrefix returns the length of the longest prefix of s that ends at
// a character's end.
func validPrefix(s string) int {
	n := len(s)
	for n > 0 && !utf8.ValidString(s[:n]) {
		n--
	}
	return n
}

// groupConcatResult is s as a value of the result type.
func groupConcatResult(s string, binary bool) any {
	if binary {
		return []byte(s)
	}
	return s
}

// Dispose implements sql.Disposable.
func (b *groupConcatBuffer) Dispose() {
	for _, e := range b.values {
		expression.Dispose(e)
	}
	for _, e := range b.keys {
		expression.Dispose(e)
	}
}

// groupConcatMaxLen returns the session's group_concat_max_len.
func groupConcatMaxLen(ctx *gsql.Context) (uint64, error) {
	v, err := ctx.GetSessionVariable(ctx, "group_concat_max_len")
	if err != nil {
		return 0, fmt.Errorf("group_concat_max_len: %w", err)
	}
	switch n := v.(type) {
	case uint64:
		return max(n, 4), nil
	case int64:
		return uint64(max(n, 4)), nil
	case int:
		return uint64(max(n, 4)), nil
	}
	return 1024, nil
}

// valueText returns v, a value of type t, as MySQL writes it in a
// string: a TIME or a DATETIME with its type's fractional digits, a
// DECIMAL with its scale, a YEAR with four digits, a DOUBLE as MySQL's
// my_gcvt, a BIT as its bytes, a string as it is.
func valueText(ctx *gsql.Context, t gsql.Type, v any) (string, error) {
	switch {
	case isTimeType(t):
		ts, ok, err := timeOf(v)
		if err != nil || !ok {
			return "", err
		}
		sv, err := t.SQL(ctx, nil, ts)
		if err != nil {
			return "", err
		}
		return sv.ToString(), nil
	case types.IsFloat(t):
		f, ok := v.(float64)
		if !ok {
			if f32, is32 := v.(float32); is32 {
				return doubleText(float64(f32), 32), nil
			}
			break
		}
		bits := 64
		if t == types.Float32 {
			bits = 32
		}
		return doubleText(f, bits), nil
	}
	switch s := v.(type) {
	case string:
		return s, nil
	case []byte:
		return string(s), nil
	}
	sv, err := t.SQL(ctx, nil, v)
	if err == nil {
		if dt, ok := t.(gsql.DatetimeType); ok && t.Type() != sqltypes.Date {
			return padDatetimeFraction(sv.ToString(), dt.Precision()), nil
		}
		return sv.ToString(), nil
	}
	s, _, cerr := types.LongText.Convert(ctx, v)
	if cerr != nil {
		return "", fmt.Errorf("GROUP_CONCAT of %s: %w", t, err)
	}
	str, _ := s.(string)
	return str, nil
}

// padDatetimeFraction returns s, a DATETIME's or TIMESTAMP's text, with
// n fractional digits: GMS writes none for a whole second and drops
// trailing zeros, MySQL writes its type's digits.
func padDatetimeFraction(s string, n int) string {
	if n <= 0 || len(s) < len("0000-00-00 00:00:00") {
		return s
	}
	have := 0
	if dot := strings.LastIndexByte(s, '.'); dot >= 0 {
		have = len(s) - dot - 1
	} else {
		s += "."
	}
	if have >= n {
		return s
	}
	return s + strings.Repeat("0", n-have)
}

// doubleText writes f as MySQL writes a DOUBLE (FLOAT: bits 32) in a
// string (my_gcvt): its shortest digits (a FLOAT's rounded to six
// significant ones, FLT_DIG: 3.14159, 123457000), in positional
// notation from 1e-15 up to below 1e15, and beyond where its digits
// reach past the decimal point (1000000000000000.9), and in exponent
// notation (1e15, 1.5e-16, 1.2345678901234568e16) otherwise: my_gcvt's
// choice when the field is wide enough for either, with DBL_DIG 15.
func doubleText(f float64, bits int) string {
	switch {
	case math.IsInf(f, 0) || math.IsNaN(f):
		return "0"
	case f == 0:
		return "0"
	}
	if bits == 32 {
		if r, err := strconv.ParseFloat(strconv.FormatFloat(f, 'e', 5, 64), 64); err == nil {
			f, bits = r, 64
		}
	}
	e := strconv.FormatFloat(f, 'e', -1, bits)
	mant, exp, _ := strings.Cut(e, "e")
	x, err := strconv.Atoi(exp)
	if err != nil {
		return e
	}
	// decpt is where the decimal point goes after the digits' first
	// (my_gcvt's), digits how many there are.
	decpt, digits := x+1, len(strings.TrimPrefix(strings.Replace(mant, ".", "", 1), "-"))
	if decpt >= -14 && (decpt <= 15 || digits > decpt) {
		return strconv.FormatFloat(f, 'f', -1, bits)
	}
	return mant + "e" + strconv.Itoa(x)
}
