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
	p        *Program
	page     int
	row      []any // the Columns of the current row
	present  []bool
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
		row: make([]any, len(p.Columns)), present: make([]bool, len(p.Columns)),
		defaults: make([]any, len(p.Columns)),
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
	if e.verbatim != nil {
		if handled, full, done, err := e.feedVerbatim(value); handled {
			return full, done, err
		}
	}
	if len(e.p.Columns) == 0 {
		// A program that reads no column (a count) needs no decoding;
		// it may be fed index entries or keys alone (KeysOnly).
	} else if err := tablecodec.DecodeRow(value, e.p.Columns, e.row, e.present); err != nil {
		return false, false, err
	}
	for i, ok := range e.present {
		if !ok {
			e.row[i] = e.defaults[i]
		}
	}
	for _, i := range e.p.Trim {
		e.trim(i)
	}
	for i := range e.p.Filter {
		t, err := e.truth(&e.p.Filter[i])
		if err != nil || t != isTrue {
			return false, false, err
		}
	}
	if e.sampler != nil {
		// One output per region: the collection is bounded (sample.go).
		e.sampler.feed(key, e.row)
		return false, false, nil
	}
	if e.p.DistinctInts {
		v, err := e.value(&e.p.GroupBy[0])
		if err != nil || v == nil {
			return false, false, err
		}
		u, ok := distinctOrder(v)
		if !ok {
			return false, false, fmt.Errorf("program: distinct value of type %T, not an integer", v)
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
		e.keepTop()
		return false, false, nil
	}
	if err := e.emit(e.row); err != nil {
		return false, false, err
	}
	e.emitted++
	return e.outRows >= e.page, e.p.Limit > 0 && e.emitted >= e.p.Limit, nil
}

// trim removes the trailing spaces of the string at Columns position i
// of the current row (a CHAR column's, Program.Trim).
func (e *Evaluation) trim(i int) {
	if s, ok := e.row[i].(string); ok && strings.HasSuffix(s, " ") {
		e.row[i] = strings.TrimRight(s, " ")
	}
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
// come before the last one kept is not a candidate.
func (e *Evaluation) keepTop() {
	if e.worst != nil && CompareOrder(e.p.OrderBy, e.row, e.worst) >= 0 {
		return
	}
	e.top = append(e.top, slices.Clone(e.row))
	if int64(len(e.top)) >= 2*e.p.Limit {
		e.cutTop()
	}
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
	for i := range e.p.GroupBy {
		v, err := e.value(&e.p.GroupBy[i])
		if err != nil {
			return err
		}
		if key, err = tablecodec.EncodeKey(key, normalize(v)); err != nil {
			return err
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
			e.vals = append(e.vals, e.row[c])
		}
		e.slots = append(e.slots, make([]slot, len(e.p.Aggs))...)
	}
	slots := e.slots[g*len(e.p.Aggs) : (g+1)*len(e.p.Aggs)]
	for i := range e.p.Aggs {
		a := &e.p.Aggs[i]
		var v any
		if a.Arg != nil {
			var err error
			if v, err = e.value(a.Arg); err != nil {
				return err
			}
		}
		slots[i].add(a.Func, v)
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

// value returns the slot's partial aggregate of f.
func (s *slot) value(f AggFunc) any {
	switch {
	case f == AggCountStar || f == AggCount:
		return s.n
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
func (e *Evaluation) truth(x *Expr) (truth, error) {
	switch x.Op {
	case OpAnd:
		l, err := e.truth(&x.Args[0])
		if err != nil || l == isFalse {
			return l, err
		}
		r, err := e.truth(&x.Args[1])
		if err != nil || r == isFalse {
			return r, err
		}
		if l == isNull || r == isNull {
			return isNull, nil
		}
		return isTrue, nil
	case OpOr:
		l, err := e.truth(&x.Args[0])
		if err != nil || l == isTrue {
			return l, err
		}
		r, err := e.truth(&x.Args[1])
		if err != nil || r == isTrue {
			return r, err
		}
		if l == isNull || r == isNull {
			return isNull, nil
		}
		return isFalse, nil
	case OpNot:
		t, err := e.truth(&x.Args[0])
		switch {
		case err != nil || t == isNull:
			return t, err
		case t == isTrue:
			return isFalse, nil
		}
		return isTrue, nil
	case OpIsNull, OpIsNotNull:
		v, err := e.value(&x.Args[0])
		if err != nil {
			return isNull, err
		}
		return boolTruth((v == nil) == (x.Op == OpIsNull)), nil
	}
	l, err := e.value(&x.Args[0])
	if err != nil {
		return isNull, err
	}
	r, err := e.value(&x.Args[1])
	if err != nil {
		return isNull, err
	}
	if l == nil || r == nil {
		if x.Op == OpNullSafe {
			return boolTruth(l == nil && r == nil), nil
		}
		return isNull, nil
	}
	c, err := compareAs(x.Cmp, l, r)
	if err != nil {
		return isNull, err
	}
	switch x.Op {
	case OpEQ, OpNullSafe:
		return boolTruth(c == 0), nil
	case OpNE:
		return boolTruth(c != 0), nil
	case OpLT:
		return boolTruth(c < 0), nil
	case OpLE:
		return boolTruth(c <= 0), nil
	case OpGT:
		return boolTruth(c > 0), nil
	case OpGE:
		return boolTruth(c >= 0), nil
	}
	return isNull, fmt.Errorf("program: %s is not a truth value", x.Op)
}

func boolTruth(b bool) truth {
	if b {
		return isTrue
	}
	return isFalse
}

// compareAs compares two non-NULL integers converted as kind says.
func compareAs(kind CmpKind, l, r any) (int, error) {
	switch kind {
	case CmpSigned:
		a, ok1 := Signed(l)
		b, ok2 := Signed(r)
		if ok1 && ok2 {
			return cmp3(a, b), nil
		}
	case CmpUnsigned:
		a, ok1 := Unsigned(l)
		b, ok2 := Unsigned(r)
		if ok1 && ok2 {
			return cmp3(a, b), nil
		}
	case CmpDouble:
		a, ok1 := double(l)
		b, ok2 := double(r)
		if ok1 && ok2 {
			return cmp3(a, b), nil
		}
	}
	return 0, fmt.Errorf("program: cannot compare %T with %T as %s", l, r, kind)
}

// value evaluates a value expression: nil, or an integer of a Go integer
// type.
func (e *Evaluation) value(x *Expr) (any, error) {
	switch x.Op {
	case OpColumn:
		return e.row[x.Col], nil
	case OpConst:
		return x.Const.Value(), nil
	case OpMod:
		v, err := e.value(&x.Args[0])
		if err != nil || v == nil {
			return nil, err
		}
		if s, ok := Signed(v); ok {
			d, ok := Signed(x.Const.Value())
			if !ok {
				return nil, fmt.Errorf("program: MOD of a signed value by %v", x.Const.Value())
			}
			if d == -1 {
				return int64(0), nil // MinInt64 % -1 would overflow
			}
			return s % d, nil
		}
		if u, ok := Unsigned(v); ok {
			d, ok := Unsigned(x.Const.Value())
			if !ok {
				return nil, fmt.Errorf("program: MOD of an unsigned value by %v", x.Const.Value())
			}
			return u % d, nil
		}
		return nil, fmt.Errorf("program: MOD of %T", v)
	}
	return nil, fmt.Errorf("program: %s is not a value", x.Op)
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
