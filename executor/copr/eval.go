package copr

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/big"
	"slices"
	"strings"

	"github.com/shopspring/decimal"

	"github.com/percdb/percdb/executor/tablecodec"
	"github.com/percdb/percdb/kv"
)

// Evaluator compiles programs for a store: it is the kv.Coprocessor that
// percdb gives the stores it opens.
type Evaluator struct{}

var _ kv.Coprocessor = Evaluator{}

// Compile implements kv.Coprocessor.
func (Evaluator) Compile(program []byte) (kv.CoprocessorProgram, error) {
	p, err := Decode(program)
	if err != nil {
		return nil, err
	}
	return p.Start()
}

// truth is a three-valued boolean.
type truth uint8

const (
	isFalse truth = iota
	isTrue
	isNull
)

// Evaluation is one run of a program over a stream of row pairs; it
// implements kv.CoprocessorProgram.
type Evaluation struct {
	p    *Program
	page int
	// filter, groupBy and aggArgs are the program's Filter, GroupBy and
	// Aggs' arguments compiled (nil for COUNT(*)'s).
	filter  []node
	groupBy []node
	aggArgs []*node
	// The current row is read lazily: spans holds the encoded value of
	// each of its Columns (nil: the row lacks the column, which takes
	// its default), and row[i] the decoded value of Columns[i] once
	// ready[i]. A column is decoded when an expression, the sort or the
	// output first needs it, so a row that the filter rejects, or that a
	// top-N's first key rules out, costs the decoding of those columns
	// only; comparisons read integers from the spans without decoding
	// them into interface values at all (num).
	row      []any
	spans    [][]byte
	spanner  *tablecodec.SpanReader
	ready    []bool
	trimmed  []bool // by Columns position: Program.Trim
	defaults []any

	// rows output (not Aggregate)
	out     []byte
	outRows int
	emitted int64 // rows output in all, for Limit without OrderBy
	// top holds the top-N candidates; worst, once they were cut back to
	// Limit, the last of them.
	top   [][]any
	worst []any

	// groups (Aggregate): group i, first met i-th, has key keys[i], Keep
	// columns vals[i*len(Keep):(i+1)*len(Keep)] and partial aggregates
	// slots[i*len(Aggs):(i+1)*len(Aggs)].
	groups map[string]int
	keys   []string
	vals   []any
	slots  []slot
	keyBuf []byte
	// distinct holds the values of a DistinctInts aggregation, as
	// distinctOrder maps them: appended as rows come, sorted and their
	// repeats dropped when the page fills (compactDistinct) and at
	// Output, which costs a row an append rather than a hash insert.
	distinct []uint64
	// sampler collects a sampling program's statistics.
	sampler *sampler
	// verbatim, when set, outputs rows without decoding their output
	// columns (verbatim.go).
	verbatim *verbatim

	// ids and scratch are the output row encoder's buffers.
	ids     []int64
	scratch []byte
}

var _ kv.CoprocessorProgram = (*Evaluation)(nil)

// Start returns a new evaluation of p, which must be valid.
func (p *Program) Start() (*Evaluation, error) {
	e := &Evaluation{
		p: p, page: p.PageRows,
		row: make([]any, len(p.Columns)), spans: make([][]byte, len(p.Columns)),
		ready: make([]bool, len(p.Columns)), trimmed: make([]bool, len(p.Columns)),
		defaults: make([]any, len(p.Columns)),
	}
	for _, i := range p.Trim {
		e.trimmed[i] = true
	}
	e.spanner = tablecodec.NewSpanReader(p.Columns)
	e.filter, e.groupBy = compileNodes(p.Filter), compileNodes(p.GroupBy)
	if len(p.Aggs) > 0 {
		e.aggArgs = make([]*node, len(p.Aggs))
		for i, a := range p.Aggs {
			if a.Arg != nil {
				n := compileNode(a.Arg)
				e.aggArgs[i] = &n
			}
		}
	}
	if e.page == 0 {
		e.page = DefaultPageRows
		if p.Aggregate {
			e.page = DefaultPageGroups
		}
	}
	if len(p.Defaults) > 0 {
		if err := tablecodec.DecodeRow(p.Defaults, p.Columns, e.defaults, make([]bool, len(p.Columns))); err != nil {
			return nil, fmt.Errorf("program defaults: %w", err)
		}
	}
	if p.Aggregate {
		e.groups = map[string]int{}
	}
	if p.Sample != nil {
		e.sampler = newSampler(p.Sample, len(p.Columns))
	}
	e.verbatim = newVerbatim(p)
	return e, nil
}

var _ kv.KeyOnlyProgram = (*Evaluation)(nil)

// KeysOnly implements kv.KeyOnlyProgram: a program that reads no column
// (COUNT(*), over rows or over an index's entries) needs no values.
func (e *Evaluation) KeysOnly() bool {
	return len(e.p.Columns) == 0 && e.sampler == nil
}

// Feed implements kv.CoprocessorProgram: key is a row key, value its row
// value.
func (e *Evaluation) Feed(key, value []byte) (full, done bool, err error) {
	// A program that reads no column (a count) needs no decoding; it
	// may be fed index entries or keys alone (KeysOnly).
	if len(e.p.Columns) > 0 {
		if err := e.readRow(value); err != nil {
			return false, false, err
		}
	}
	for i := range e.filter {
		t, err := e.truth(&e.filter[i])
		if err != nil || t != isTrue {
			return false, false, err
		}
	}
	if e.sampler != nil {
		// One output per region: the collection is bounded (sample.go).
		if err := e.decodeAll(); err != nil {
			return false, false, err
		}
		e.sampler.feed(key, e.row)
		return false, false, nil
	}
	if e.p.DistinctInts {
		n, err := e.num(&e.groupBy[0])
		if err != nil || n.kind == tablecodec.SpanNull {
			return false, false, err
		}
		u, ok := n.distinctOrder()
		if !ok {
			return false, false, fmt.Errorf("program: distinct value of type %T, not an integer", n.v)
		}
		e.distinct = append(e.distinct, u)
		if len(e.distinct) < e.page {
			return false, false, nil
		}
		// Full once half a page of them are distinct.
		e.distinct = compactDistinct(e.distinct)
		return len(e.distinct) >= max(e.page/2, 1), false, nil
	}
	if e.p.Aggregate {
		if err := e.aggregate(); err != nil {
			return false, false, err
		}
		return len(e.groups) >= e.page, false, nil
	}
	if len(e.p.OrderBy) > 0 {
		return false, false, e.keepTop()
	}
	if e.verbatim == nil || !e.outputVerbatim() {
		if err := e.decodeAll(); err != nil {
			return false, false, err
		}
		if err := e.emit(e.row); err != nil {
			return false, false, err
		}
	}
	e.emitted++
	return e.outRows >= e.page, e.p.Limit > 0 && e.emitted >= e.p.Limit, nil
}

// readRow takes the spans of the Columns of row value b; nothing is
// decoded yet.
func (e *Evaluation) readRow(b []byte) error {
	clear(e.ready)
	if err := e.spanner.Spans(b, e.spans); err != nil {
		return fmt.Errorf("decode row: %w", err)
	}
	return nil
}

// column returns the value of the current row's column at Columns
// position i, decoding it on first use: the row's value, or the column's
// default when the row lacks it, without a CHAR column's trailing spaces
// (Program.Trim).
func (e *Evaluation) column(i int) (any, error) {
	if e.ready[i] {
		return e.row[i], nil
	}
	v := e.defaults[i]
	if span := e.spans[i]; span != nil {
		var err error
		if v, err = tablecodec.DecodeColumn(span); err != nil {
			return nil, fmt.Errorf("decode row: column %d: %w", e.p.Columns[i], err)
		}
	}
	if s, ok := v.(string); ok && e.trimmed[i] && strings.HasSuffix(s, " ") {
		v = strings.TrimRight(s, " ")
	}
	e.row[i], e.ready[i] = v, true
	return v, nil
}

// decodeAll decodes every column of the current row into row.
func (e *Evaluation) decodeAll() error {
	for i := range e.row {
		if _, err := e.column(i); err != nil {
			return err
		}
	}
	return nil
}

// emit appends the Output columns of row to the output.
func (e *Evaluation) emit(row []any) error {
	vals := make([]any, len(e.p.Output))
	for i, c := range e.p.Output {
		vals[i] = row[c]
	}
	return e.appendRow(vals)
}

// appendRow appends one output row: uvarint length, row value.
func (e *Evaluation) appendRow(vals []any) error {
	for len(e.ids) < len(vals) {
		e.ids = append(e.ids, int64(len(e.ids)))
	}
	b, err := tablecodec.AppendRow(e.scratch[:0], e.ids[:len(vals)], vals)
	if err != nil {
		return err
	}
	e.scratch = b
	e.out = binary.AppendUvarint(e.out, uint64(len(b)))
	e.out = append(e.out, b...)
	e.outRows++
	return nil
}

// keepTop adds the current row to the top-N candidates, cutting them back
// to Limit when they reach twice as many. Once cut, a row that does not
// come before the last one kept is not a candidate; it is compared key by
// key, decoding only the keys it takes to rule it out.
func (e *Evaluation) keepTop() error {
	if e.worst != nil {
		c, err := e.compareToWorst()
		if err != nil || c >= 0 {
			return err
		}
	}
	if err := e.decodeAll(); err != nil {
		return err
	}
	e.top = append(e.top, slices.Clone(e.row))
	if int64(len(e.top)) >= 2*e.p.Limit {
		e.cutTop()
	}
	return nil
}

// compareToWorst is CompareOrder(OrderBy, current row, worst), reading
// the current row's keys as it goes.
func (e *Evaluation) compareToWorst() (int, error) {
	for _, k := range e.p.OrderBy {
		var c int
		w := e.worst[k.Col]
		if n, err := e.columnNum(k.Col); err != nil {
			return 0, err
		} else if n.kind == tablecodec.SpanOther {
			c = compareValues(n.v, w)
		} else {
			c = n.compareValue(w)
		}
		if k.Desc {
			c = -c
		}
		if c != 0 {
			return c, nil
		}
	}
	return 0, nil
}

func (e *Evaluation) cutTop() {
	slices.SortStableFunc(e.top, func(a, b []any) int { return CompareOrder(e.p.OrderBy, a, b) })
	if int64(len(e.top)) >= e.p.Limit {
		clear(e.top[e.p.Limit:])
		e.top = e.top[:e.p.Limit]
		e.worst = e.top[e.p.Limit-1]
	}
}

// CompareOrder compares two rows (of Columns) by keys, as MySQL orders:
// NULL first ascending.
func CompareOrder(keys []Order, a, b []any) int {
	for _, k := range keys {
		c := compareValues(a[k.Col], b[k.Col])
		if k.Desc {
			c = -c
		}
		if c != 0 {
			return c
		}
	}
	return 0
}

// compareValues orders two values of one column: NULL first, integers by
// value.
func compareValues(a, b any) int {
	switch {
	case a == nil && b == nil:
		return 0
	case a == nil:
		return -1
	case b == nil:
		return 1
	}
	if sa, ok := Signed(a); ok {
		if sb, ok := Signed(b); ok {
			return cmp3(sa, sb)
		}
	}
	if ua, ok := Unsigned(a); ok {
		if ub, ok := Unsigned(b); ok {
			return cmp3(ua, ub)
		}
	}
	fa, _ := double(a)
	fb, _ := double(b)
	return cmp3(fa, fb)
}

func cmp3[T int64 | uint64 | float64](a, b T) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// aggregate adds the current row to its group.
func (e *Evaluation) aggregate() error {
	key := e.keyBuf[:0]
	for i := range e.groupBy {
		n, err := e.num(&e.groupBy[i])
		if err != nil {
			return err
		}
		// As EncodeKey(key, normalize(value)), without boxing.
		switch n.kind {
		case tablecodec.SpanNull:
			key = tablecodec.AppendKeyNull(key)
		case tablecodec.SpanSigned:
			key = tablecodec.AppendKeyInt(key, n.i)
		case tablecodec.SpanUnsigned:
			key = tablecodec.AppendKeyUint(key, n.u)
		default:
			if key, err = tablecodec.EncodeKey(key, normalize(n.v)); err != nil {
				return err
			}
		}
	}
	e.keyBuf = key
	g, ok := e.groups[string(key)]
	if !ok {
		g = len(e.keys)
		k := string(key)
		e.groups[k] = g
		e.keys = append(e.keys, k)
		for _, c := range e.p.Keep {
			v, err := e.column(c)
			if err != nil {
				return err
			}
			e.vals = append(e.vals, v)
		}
		e.slots = append(e.slots, make([]slot, len(e.p.Aggs))...)
	}
	slots := e.slots[g*len(e.p.Aggs) : (g+1)*len(e.p.Aggs)]
	for i := range e.p.Aggs {
		a, arg := &e.p.Aggs[i], e.aggArgs[i]
		if arg == nil {
			slots[i].add(a.Func, nil)
			continue
		}
		if a.Func == AggSum && arg.op == opColumn && !e.ready[arg.col] && e.spans[arg.col] != nil {
			// A DECIMAL column's value added without decoding it.
			coef, exp, ok, err := tablecodec.ColumnDecimal(e.spans[arg.col])
			if err != nil {
				return fmt.Errorf("decode row: column %d: %w", e.p.Columns[arg.col], err)
			}
			if ok && slots[i].addDecimal(coef, exp) {
				continue
			}
		}
		n, err := e.num(arg)
		if err != nil {
			return err
		}
		if a.Func == AggMin || a.Func == AggMax {
			// The partial keeps the value's own type, decoded only
			// for a row that changes it.
			if n.kind == tablecodec.SpanNull {
				continue
			}
			if acc := slots[i].v; acc != nil && n.kind != tablecodec.SpanOther {
				if c := n.compareValue(acc); (a.Func == AggMin && c >= 0) || (a.Func == AggMax && c <= 0) {
					continue
				}
			}
			v, err := e.value(arg)
			if err != nil {
				return err
			}
			slots[i].add(a.Func, v)
			continue
		}
		if !slots[i].addNum(a.Func, n) {
			slots[i].add(a.Func, n.value())
		}
	}
	return nil
}

// slot is one partial aggregate of a group, kept unboxed where it can be
// so that adding a row allocates nothing: a count, or an integer sum
// while it fits an int64, in n; a MIN or MAX, or a sum past int64, in v.
// Its value is what Accumulate would have made of the same rows.
type slot struct {
	n   int64
	has bool // a sum: some value was added (else it is NULL)
	v   any
	// dec: the sum in n is of DECIMALs, n * 10^exp (addDecimal).
	dec bool
	exp int32
}

// addDecimal adds the DECIMAL coef * 10^exp to a sum kept unboxed, at
// the smaller of the two exponents, while it fits an int64: a decimal
// addition allocates. It reports false, with the sum so far moved into
// v, where add must take the value.
func (s *slot) addDecimal(coef int64, exp int32) bool {
	switch {
	case s.v != nil:
		return false
	case !s.has:
		s.n, s.exp, s.has, s.dec = coef, exp, true, true
		return true
	case !s.dec:
		s.exp, s.dec = 0, true // an integer sum so far
	}
	a, b, e, ok := s.n, coef, s.exp, true
	switch {
	case exp < e:
		a, ok = scaleUp(a, e-exp)
		e = exp
	case exp > e:
		b, ok = scaleUp(b, exp-e)
	}
	sum := a + b
	// Overflow: both addends of one sign and the sum of the other.
	if !ok || (a >= 0) == (b >= 0) && (sum >= 0) != (b >= 0) {
		s.spill()
		return false
	}
	s.n, s.exp = sum, e
	return true
}

// scaleUp returns v * 10^k, false when it does not fit an int64.
func scaleUp(v int64, k int32) (int64, bool) {
	for ; k > 0; k-- {
		if v > math.MaxInt64/10 || v < math.MinInt64/10 {
			return 0, false
		}
		v *= 10
	}
	return v, true
}

// spill moves a DECIMAL sum kept in n into v, as a decimal, for add.
func (s *slot) spill() {
	if s.dec && s.v == nil && s.has {
		s.v = decimal.New(s.n, s.exp)
	}
}

// add adds the value v of one row to the slot of aggregate f.
func (s *slot) add(f AggFunc, v any) {
	switch f {
	case AggCountStar:
		s.n++
	case AggCount:
		if v != nil {
			s.n++
		}
	case AggSum:
		if v == nil {
			return
		}
		s.spill()
		if s.v == nil {
			i, isInt := Signed(v)
			if u, ok := Unsigned(v); ok && u <= math.MaxInt64 {
				i, isInt = int64(u), true
			}
			if isInt {
				if !s.has {
					s.n, s.has = i, true
					return
				}
				sum := s.n + i
				// Overflow: both addends of one sign and the sum of the other.
				if (s.n >= 0) != (i >= 0) || (sum >= 0) == (i >= 0) {
					s.n = sum
					return
				}
			}
			if s.has {
				s.v = decimal.NewFromInt(s.n)
			}
		}
		s.v, s.has = addExact(s.v, v), true
	default:
		s.v = Accumulate(f, s.v, v, false)
	}
}

// addNum adds n as add would, without boxing it, where it can: a count,
// or an integer added to an integer sum that fits an int64. It reports
// false, having done nothing, where add must.
func (s *slot) addNum(f AggFunc, n num) bool {
	switch {
	case f == AggCountStar || (f == AggCount && n.kind != tablecodec.SpanOther):
		if f == AggCountStar || n.kind != tablecodec.SpanNull {
			s.n++
		}
		return true
	case f != AggSum || s.v != nil || s.dec:
		return false
	case n.kind == tablecodec.SpanNull:
		return true
	}
	var i int64
	switch {
	case n.kind == tablecodec.SpanSigned:
		i = n.i
	case n.kind == tablecodec.SpanUnsigned && n.u <= math.MaxInt64:
		i = int64(n.u)
	default:
		return false
	}
	if !s.has {
		s.n, s.has = i, true
		return true
	}
	sum := s.n + i
	// Overflow: both addends of one sign and the sum of the other.
	if (s.n >= 0) != (i >= 0) || (sum >= 0) == (i >= 0) {
		s.n = sum
		return true
	}
	return false
}

// value returns the slot's partial aggregate of f.
func (s *slot) value(f AggFunc) any {
	switch {
	case f == AggCountStar || f == AggCount:
		return s.n
	case f == AggSum && s.v == nil && s.has && s.dec:
		return decimal.New(s.n, s.exp)
	case f == AggSum && s.v == nil && s.has:
		return s.n
	}
	return s.v
}

// Accumulate adds v to the partial aggregate acc of f; merging says v is
// itself a partial (a count to add).
func Accumulate(f AggFunc, acc, v any, merging bool) any {
	switch f {
	case AggCountStar, AggCount:
		n := acc.(int64)
		switch {
		case merging:
			return n + v.(int64)
		case f == AggCountStar || v != nil:
			return n + 1
		}
		return n
	case AggSum:
		if v != nil {
			return addExact(acc, v)
		}
	case AggMin:
		if v != nil && (acc == nil || compareValues(v, acc) < 0) {
			return v
		}
	case AggMax:
		if v != nil && (acc == nil || compareValues(v, acc) > 0) {
			return v
		}
	}
	return acc
}

// addExact returns the exact sum of acc (nil, an int64 or a
// decimal.Decimal) and the integer or partial sum v: an int64 while it
// fits one, else a decimal.
func addExact(acc, v any) any {
	i, isInt := Signed(v)
	if u, ok := Unsigned(v); ok && u <= math.MaxInt64 {
		i, isInt = int64(u), true
	}
	switch a := acc.(type) {
	case nil:
		if isInt {
			return i
		}
		return exactDecimal(v)
	case int64:
		if isInt {
			s := a + i
			// Overflow: both addends of one sign and the sum of the other.
			if (a >= 0) != (i >= 0) || (s >= 0) == (i >= 0) {
				return s
			}
		}
		acc = decimal.NewFromInt(a)
	}
	d, _ := acc.(decimal.Decimal) // partials are checked by Merger.Add
	return d.Add(exactDecimal(v))
}

// exactDecimal returns an integer or decimal value as a decimal.
func exactDecimal(v any) decimal.Decimal {
	if i, ok := Signed(v); ok {
		return decimal.NewFromInt(i)
	}
	if u, ok := Unsigned(v); ok {
		return decimal.NewFromBigInt(new(big.Int).SetUint64(u), 0)
	}
	d, _ := v.(decimal.Decimal)
	return d
}

// normalize widens integers to int64 or uint64, so that equal values of
// different widths group together.
func normalize(v any) any {
	if s, ok := Signed(v); ok {
		return s
	}
	if u, ok := Unsigned(v); ok {
		return u
	}
	return v
}

// Output implements kv.CoprocessorProgram: the rows, top-N rows or groups
// so far, each group as [key, Keep..., Aggs...]. The evaluation is reset.
func (e *Evaluation) Output() ([]byte, error) {
	switch {
	case e.sampler != nil:
		e.out = e.sampler.output()
		e.sampler = newSampler(e.p.Sample, len(e.p.Columns))
	case e.p.DistinctInts:
		e.out = AppendDistinctInts(e.out, compactDistinct(e.distinct))
		e.distinct = e.distinct[:0]
	case e.p.Aggregate:
		nk, na := len(e.p.Keep), len(e.p.Aggs)
		row := make([]any, 1+nk+na)
		for g, k := range e.keys {
			row[0] = []byte(k)
			copy(row[1:], e.vals[g*nk:(g+1)*nk])
			for i := range e.p.Aggs {
				row[1+nk+i] = e.slots[g*na+i].value(e.p.Aggs[i].Func)
			}
			if err := e.appendRow(row); err != nil {
				return nil, err
			}
		}
		clear(e.groups)
		clear(e.vals)
		e.keys, e.vals, e.slots = e.keys[:0], e.vals[:0], e.slots[:0]
	case len(e.p.OrderBy) > 0:
		e.cutTop()
		for _, r := range e.top {
			if err := e.emit(r); err != nil {
				return nil, err
			}
		}
		e.top, e.worst = nil, nil
	}
	out := e.out
	e.out, e.outRows = nil, 0
	return out, nil
}

// truth evaluates a boolean expression.
func (e *Evaluation) truth(x *node) (truth, error) {
	switch x.op {
	case opAnd:
		l, err := e.truth(&x.args[0])
		if err != nil || l == isFalse {
			return l, err
		}
		r, err := e.truth(&x.args[1])
		if err != nil || r == isFalse {
			return r, err
		}
		if l == isNull || r == isNull {
			return isNull, nil
		}
		return isTrue, nil
	case opOr:
		l, err := e.truth(&x.args[0])
		if err != nil || l == isTrue {
			return l, err
		}
		r, err := e.truth(&x.args[1])
		if err != nil || r == isTrue {
			return r, err
		}
		if l == isNull || r == isNull {
			return isNull, nil
		}
		return isFalse, nil
	case opNot:
		t, err := e.truth(&x.args[0])
		switch {
		case err != nil || t == isNull:
			return t, err
		case t == isTrue:
			return isFalse, nil
		}
		return isTrue, nil
	case opIsNull, opIsNotNull:
		null, err := e.isNull(&x.args[0])
		if err != nil {
			return isNull, err
		}
		return boolTruth(null == (x.op == opIsNull)), nil
	case opIn:
		return e.in(x)
	}
	if x.colConst {
		if t, ok, err := e.columnConstTruth(x); ok || err != nil {
			return t, err
		}
	}
	l, err := e.num(&x.args[0])
	if err != nil {
		return isNull, err
	}
	r, err := e.num(&x.args[1])
	if err != nil {
		return isNull, err
	}
	if l.kind == tablecodec.SpanNull || r.kind == tablecodec.SpanNull {
		if x.op == opNullSafe {
			return boolTruth(l.kind == r.kind), nil
		}
		return isNull, nil
	}
	c, err := compareNums(x.cmp, l, r)
	if err != nil {
		return isNull, err
	}
	switch x.op {
	case opEQ, opNullSafe:
		return boolTruth(c == 0), nil
	case opNE:
		return boolTruth(c != 0), nil
	case opLT:
		return boolTruth(c < 0), nil
	case opLE:
		return boolTruth(c <= 0), nil
	case opGT:
		return boolTruth(c > 0), nil
	case opGE:
		return boolTruth(c >= 0), nil
	}
	return isNull, fmt.Errorf("program: %s is not a truth value", x.x.Op)
}

// columnConstTruth evaluates a comparison of a column with a constant
// (node.colConst) from the column's span, without the nums of the
// general way: ok is false, nothing done, when the column's value is not
// an integer of the comparison's kind (NULL, a decoded column, another
// type), and the general way decides.
func (e *Evaluation) columnConstTruth(x *node) (t truth, ok bool, err error) {
	col, c := x.args[0].col, &x.args[1].c
	span := e.spans[col]
	if e.ready[col] || span == nil {
		return isNull, false, nil
	}
	kind, i, u, err := tablecodec.ColumnInt(span)
	if err != nil {
		return isNull, false, fmt.Errorf("decode row: column %d: %w", e.p.Columns[col], err)
	}
	var r int
	switch {
	case kind == tablecodec.SpanSigned && x.cmp == cmpSigned:
		r = cmp3(i, c.i)
	case kind == tablecodec.SpanUnsigned && x.cmp == cmpUnsigned:
		r = cmp3(u, c.u)
	default:
		return isNull, false, nil
	}
	switch x.op {
	case opEQ, opNullSafe:
		return boolTruth(r == 0), true, nil
	case opNE:
		return boolTruth(r != 0), true, nil
	case opLT:
		return boolTruth(r < 0), true, nil
	case opLE:
		return boolTruth(r <= 0), true, nil
	case opGT:
		return boolTruth(r > 0), true, nil
	case opGE:
		return boolTruth(r >= 0), true, nil
	}
	return isNull, false, nil
}

// in evaluates an OpIn. The list is walked in order: the SQL layer
// compiles lists of constants only, and a row it reads through an IN
// list on a key prefix matches one of them.
func (e *Evaluation) in(x *node) (truth, error) {
	l, err := e.num(&x.args[0])
	if err != nil || l.kind == tablecodec.SpanNull {
		return isNull, err
	}
	null := false
	for i := 1; i < len(x.args); i++ {
		r, err := e.num(&x.args[i])
		if err != nil {
			return isNull, err
		}
		if r.kind == tablecodec.SpanNull {
			null = true
			continue
		}
		c, err := compareNums(x.cmp, l, r)
		if err != nil {
			return isNull, err
		}
		if c == 0 {
			return isTrue, nil
		}
	}
	if null {
		return isNull, nil
	}
	return isFalse, nil
}

func boolTruth(b bool) truth {
	if b {
		return isTrue
	}
	return isFalse
}

// compareNums compares two non-NULL integers converted as kind says.
func compareNums(kind cmpCode, l, r num) (int, error) {
	switch kind {
	case cmpSigned:
		if l.kind == tablecodec.SpanSigned && r.kind == tablecodec.SpanSigned {
			return cmp3(l.i, r.i), nil
		}
	case cmpUnsigned:
		if l.kind == tablecodec.SpanUnsigned && r.kind == tablecodec.SpanUnsigned {
			return cmp3(l.u, r.u), nil
		}
	case cmpDouble:
		a, ok1 := l.double()
		b, ok2 := r.double()
		if ok1 && ok2 {
			return cmp3(a, b), nil
		}
	}
	return 0, fmt.Errorf("program: cannot compare %T with %T as %s", l.value(), r.value(), [...]CmpKind{"", CmpSigned, CmpUnsigned, CmpDouble}[kind])
}

// num is the value of an expression without an interface value around
// an integer: NULL, a signed integer in i, an unsigned one in u, or
// (SpanOther) any other value in v, which no expression of a valid
// program yields from an integer column.
type num struct {
	kind tablecodec.SpanKind
	i    int64
	u    uint64
	v    any
}

// numOf returns the num of a decoded value.
func numOf(v any) num {
	if v == nil {
		return num{kind: tablecodec.SpanNull}
	}
	if s, ok := Signed(v); ok {
		return num{kind: tablecodec.SpanSigned, i: s}
	}
	if u, ok := Unsigned(v); ok {
		return num{kind: tablecodec.SpanUnsigned, u: u}
	}
	return num{v: v}
}

// value returns n as an evaluation value: nil, an int64 or a uint64, or
// the other value.
func (n num) value() any {
	switch n.kind {
	case tablecodec.SpanNull:
		return nil
	case tablecodec.SpanSigned:
		return n.i
	case tablecodec.SpanUnsigned:
		return n.u
	}
	return n.v
}

// double returns an integer as a float64, as GMS converts one to DOUBLE.
func (n num) double() (float64, bool) {
	switch n.kind {
	case tablecodec.SpanSigned:
		return float64(n.i), true
	case tablecodec.SpanUnsigned:
		return float64(n.u), true
	}
	return math.NaN(), false
}

// distinctOrder is distinctOrder(n.value()).
func (n num) distinctOrder() (uint64, bool) {
	switch n.kind {
	case tablecodec.SpanSigned:
		return uint64(n.i) ^ 1<<63, true
	case tablecodec.SpanUnsigned:
		return n.u, true
	}
	return 0, false
}

// compareValue is compareValues(n.value(), v) for an integer or NULL n.
func (n num) compareValue(v any) int {
	switch {
	case n.kind == tablecodec.SpanNull:
		if v == nil {
			return 0
		}
		return -1
	case v == nil:
		return 1
	case n.kind == tablecodec.SpanSigned:
		if s, ok := Signed(v); ok {
			return cmp3(n.i, s)
		}
	case n.kind == tablecodec.SpanUnsigned:
		if u, ok := Unsigned(v); ok {
			return cmp3(n.u, u)
		}
	}
	a, _ := n.double()
	b, _ := double(v)
	return cmp3(a, b)
}

// columnNum returns the current row's column at Columns position i as a
// num, reading an integer from its span without decoding it.
func (e *Evaluation) columnNum(i int) (num, error) {
	if !e.ready[i] && e.spans[i] != nil {
		kind, s, u, err := tablecodec.ColumnInt(e.spans[i])
		if err != nil {
			return num{}, fmt.Errorf("decode row: column %d: %w", e.p.Columns[i], err)
		}
		if kind != tablecodec.SpanOther {
			return num{kind: kind, i: s, u: u}, nil
		}
	}
	v, err := e.column(i)
	if err != nil {
		return num{}, err
	}
	return numOf(v), nil
}

// isNull reports whether a value expression is NULL. A column of any
// type is told from its encoded value's tag, without decoding it (IS NOT
// NULL of a DATETIME or DECIMAL column costs no decoding).
func (e *Evaluation) isNull(x *node) (bool, error) {
	if x.op == opColumn && !e.ready[x.col] && e.spans[x.col] != nil {
		kind, _, _, err := tablecodec.ColumnInt(e.spans[x.col])
		if err != nil {
			return false, fmt.Errorf("decode row: column %d: %w", e.p.Columns[x.col], err)
		}
		return kind == tablecodec.SpanNull, nil
	}
	n, err := e.num(x)
	return n.kind == tablecodec.SpanNull, err
}

// num evaluates a value expression: NULL or an integer.
func (e *Evaluation) num(x *node) (num, error) {
	switch x.op {
	case opColumn:
		return e.columnNum(x.col)
	case opConst:
		return x.c, nil
	case opMod:
		n, err := e.num(&x.args[0])
		if err != nil || n.kind == tablecodec.SpanNull {
			return n, err
		}
		d := x.c
		switch n.kind {
		case tablecodec.SpanSigned:
			if d.kind != tablecodec.SpanSigned {
				return num{}, fmt.Errorf("program: MOD of a signed value by %v", x.x.Const.Value())
			}
			if d.i == -1 {
				return num{kind: tablecodec.SpanSigned}, nil // MinInt64 % -1 would overflow
			}
			return num{kind: tablecodec.SpanSigned, i: n.i % d.i}, nil
		case tablecodec.SpanUnsigned:
			if d.kind != tablecodec.SpanUnsigned {
				return num{}, fmt.Errorf("program: MOD of an unsigned value by %v", x.x.Const.Value())
			}
			return num{kind: tablecodec.SpanUnsigned, u: n.u % d.u}, nil
		}
		return num{}, fmt.Errorf("program: MOD of %T", n.v)
	}
	return num{}, fmt.Errorf("program: %s is not a value", x.x.Op)
}

// value evaluates a value expression: nil, or an integer of a Go integer
// type.
func (e *Evaluation) value(x *node) (any, error) {
	if x.op == opColumn {
		return e.column(x.col)
	}
	n, err := e.num(x)
	return n.value(), err
}

// Signed returns v as an int64 if it is of a signed Go integer type.
func Signed(v any) (int64, bool) {
	switch v := v.(type) {
	case int8:
		return int64(v), true
	case int16:
		return int64(v), true
	case int32:
		return int64(v), true
	case int64:
		return v, true
	case int:
		return int64(v), true
	}
	return 0, false
}

// Unsigned returns v as a uint64 if it is of an unsigned Go integer type.
func Unsigned(v any) (uint64, bool) {
	switch v := v.(type) {
	case uint8:
		return uint64(v), true
	case uint16:
		return uint64(v), true
	case uint32:
		return uint64(v), true
	case uint64:
		return v, true
	case uint:
		return uint64(v), true
	}
	return 0, false
}

// double returns an integer as a float64, as GMS converts one to DOUBLE.
func double(v any) (float64, bool) {
	if s, ok := Signed(v); ok {
		return float64(s), true
	}
	if u, ok := Unsigned(v); ok {
		return float64(u), true
	}
	return math.NaN(), false
}
