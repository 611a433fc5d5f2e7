package copr

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// The wire form of a Program. It was JSON: encoding and decoding it cost
// about 5% of the server's CPU in sysbench's oltp_read_only (encoding/json
// reflecting over the program once per statement on the SQL side and once
// per region on the store's). The binary form costs a few hundred
// nanoseconds.
//
// Layout (varint: zig-zag signed, uvarint: unsigned, as encoding/binary;
// a list is its uvarint length, then its elements; bytes are a uvarint
// length, then the bytes):
//
//	program := version:byte(1)
//	           columns:list(varint) defaults:bytes trim:list(varint)
//	           filter:list(expr)
//	           flags:byte (1 Aggregate, 2 DistinctInts, 4 Sample follows)
//	           output:list(varint) limit:varint order_by:list(order)
//	           group_by:list(expr) keep:list(varint) aggs:list(agg)
//	           [sample] page_rows:varint
//	order   := col:varint desc:byte(0|1)
//	agg     := func:byte(aggCodes) has_arg:byte(0|1) [expr]
//	sample  := size:varint max_value_len:varint tuples:list(list(varint))
//	expr    := op:byte(opCodes) col:varint cmp:byte(cmpCodes)
//	           const_flags:byte (1 present, 2 null, 4 unsigned)
//	           [int:varint uint:uvarint, when present] args:list(expr)
//
// Empty lists decode as nil. Operators, comparison kinds and aggregate
// functions travel as codes (their index in the tables below, so codes
// are only ever appended to them); one the tables lack cannot be encoded
// and is refused on decoding. Expressions nest at most maxExprDepth deep.

// wireVersion is the first byte of a program's wire form.
const wireVersion = 1

// maxExprDepth bounds the nesting of a decoded expression, so that a
// corrupt program cannot recurse without end.
const maxExprDepth = 512

var (
	opCodes  = []Op{OpColumn, OpConst, OpEQ, OpNE, OpLT, OpLE, OpGT, OpGE, OpNullSafe, OpAnd, OpOr, OpNot, OpIsNull, OpIsNotNull, OpMod, OpIn}
	cmpCodes = []CmpKind{"", CmpSigned, CmpUnsigned, CmpDouble}
	aggCodes = []AggFunc{AggCountStar, AggCount, AggMin, AggMax, AggSum}
)

const (
	flagAggregate    = 1
	flagDistinctInts = 2
	flagSample       = 4

	constPresent  = 1
	constNull     = 2
	constUnsigned = 4
)

// codeOf returns the position of v in codes.
func codeOf[T comparable](codes []T, v T, what string) (byte, error) {
	for i, c := range codes {
		if c == v {
			return byte(i), nil
		}
	}
	return 0, fmt.Errorf("program: %s %v has no wire code", what, v)
}

// Encode returns the program's wire form.
func (p *Program) Encode() ([]byte, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	return p.appendWire(make([]byte, 0, 64))
}

func (p *Program) appendWire(b []byte) ([]byte, error) {
	b = append(b, wireVersion)
	b = appendInt64s(b, p.Columns)
	b = binary.AppendUvarint(b, uint64(len(p.Defaults)))
	b = append(b, p.Defaults...)
	b = appendInts(b, p.Trim)
	b, err := appendExprs(b, p.Filter)
	if err != nil {
		return nil, err
	}
	var flags byte
	if p.Aggregate {
		flags |= flagAggregate
	}
	if p.DistinctInts {
		flags |= flagDistinctInts
	}
	if p.Sample != nil {
		flags |= flagSample
	}
	b = append(b, flags)
	b = appendInts(b, p.Output)
	b = binary.AppendVarint(b, p.Limit)
	b = binary.AppendUvarint(b, uint64(len(p.OrderBy)))
	for _, o := range p.OrderBy {
		b = binary.AppendVarint(b, int64(o.Col))
		b = appendBool(b, o.Desc)
	}
	if b, err = appendExprs(b, p.GroupBy); err != nil {
		return nil, err
	}
	b = appendInts(b, p.Keep)
	b = binary.AppendUvarint(b, uint64(len(p.Aggs)))
	for _, a := range p.Aggs {
		code, err := codeOf(aggCodes, a.Func, "aggregate")
		if err != nil {
			return nil, err
		}
		b = append(b, code)
		b = appendBool(b, a.Arg != nil)
		if a.Arg != nil {
			if b, err = appendExpr(b, a.Arg); err != nil {
				return nil, err
			}
		}
	}
	if s := p.Sample; s != nil {
		b = binary.AppendVarint(b, int64(s.Size))
		b = binary.AppendVarint(b, int64(s.MaxValueLen))
		b = binary.AppendUvarint(b, uint64(len(s.Tuples)))
		for _, t := range s.Tuples {
			b = appendInts(b, t)
		}
	}
	return binary.AppendVarint(b, int64(p.PageRows)), nil
}

func appendBool(b []byte, v bool) []byte {
	if v {
		return append(b, 1)
	}
	return append(b, 0)
}

func appendInts(b []byte, vs []int) []byte {
	b = binary.AppendUvarint(b, uint64(len(vs)))
	for _, v := range vs {
		b = binary.AppendVarint(b, int64(v))
	}
	return b
}

func appendInt64s(b []byte, vs []int64) []byte {
	b = binary.AppendUvarint(b, uint64(len(vs)))
	for _, v := range vs {
		b = binary.AppendVarint(b, v)
	}
	return b
}

func appendExprs(b []byte, es []Expr) ([]byte, error) {
	b = binary.AppendUvarint(b, uint64(len(es)))
	for i := range es {
		var err error
		if b, err = appendExpr(b, &es[i]); err != nil {
			return nil, err
		}
	}
	return b, nil
}

func appendExpr(b []byte, e *Expr) ([]byte, error) {
	op, err := codeOf(opCodes, e.Op, "operator")
	if err != nil {
		return nil, err
	}
	cmp, err := codeOf(cmpCodes, e.Cmp, "comparison kind")
	if err != nil {
		return nil, err
	}
	b = append(b, op)
	b = binary.AppendVarint(b, int64(e.Col))
	b = append(b, cmp)
	if d := e.Const; d != nil {
		flags := byte(constPresent)
		if d.Null {
			flags |= constNull
		}
		if d.Unsigned {
			flags |= constUnsigned
		}
		b = append(b, flags)
		b = binary.AppendVarint(b, d.Int)
		b = binary.AppendUvarint(b, d.Uint)
	} else {
		b = append(b, 0)
	}
	return appendExprs(b, e.Args)
}

// Decode reads a program from its wire form and validates it.
func Decode(b []byte) (*Program, error) {
	r := wireReader{b: b}
	p, err := r.program()
	if err == nil && len(r.b) > 0 {
		err = fmt.Errorf("%d bytes past the end", len(r.b))
	}
	if err != nil {
		return nil, fmt.Errorf("decode program: %w", err)
	}
	if err := p.Validate(); err != nil {
		return nil, err
	}
	return p, nil
}

// errTruncated is a wire form that ends inside a value.
var errTruncated = errors.New("truncated")

// wireReader reads a program's wire form; err is the first failure, after
// which every read returns zero values.
type wireReader struct {
	b   []byte
	err error
}

func (r *wireReader) fail(err error) {
	if r.err == nil {
		r.err = err
	}
	r.b = nil
}

func (r *wireReader) byte() byte {
	if len(r.b) == 0 {
		r.fail(errTruncated)
		return 0
	}
	v := r.b[0]
	r.b = r.b[1:]
	return v
}

func (r *wireReader) uvarint() uint64 { return readVarint(r, binary.Uvarint) }

func (r *wireReader) varint() int64 { return readVarint(r, binary.Varint) }

// readVarint reads one value with read (binary.Varint or Uvarint).
func readVarint[T int64 | uint64](r *wireReader, read func([]byte) (T, int)) T {
	v, n := read(r.b)
	if n <= 0 {
		r.fail(errTruncated)
		return 0
	}
	r.b = r.b[n:]
	return v
}

// int reads a varint that must fit an int.
func (r *wireReader) int() int {
	v := r.varint()
	if int64(int(v)) != v {
		r.fail(fmt.Errorf("integer %d out of range", v))
		return 0
	}
	return int(v)
}

// length reads a list's length, which cannot exceed the bytes left (every
// element takes one at least).
func (r *wireReader) length() int {
	n := r.uvarint()
	if n > uint64(len(r.b)) {
		r.fail(errTruncated)
		return 0
	}
	return int(n)
}

func (r *wireReader) bool() bool {
	switch r.byte() {
	case 0:
		return false
	case 1:
		return true
	}
	r.fail(errors.New("a flag neither 0 nor 1"))
	return false
}

func (r *wireReader) ints() []int {
	n := r.length()
	if n == 0 {
		return nil
	}
	vs := make([]int, n)
	for i := range vs {
		vs[i] = r.int()
	}
	return vs
}

func (r *wireReader) int64s() []int64 {
	n := r.length()
	if n == 0 {
		return nil
	}
	vs := make([]int64, n)
	for i := range vs {
		vs[i] = r.varint()
	}
	return vs
}

// code reads a code of codes.
func code[T any](r *wireReader, codes []T, what string) T {
	c := r.byte()
	if int(c) >= len(codes) {
		r.fail(fmt.Errorf("unknown %s code %d", what, c))
		var zero T
		return zero
	}
	return codes[c]
}

func (r *wireReader) program() (*Program, error) {
	if v := r.byte(); r.err == nil && v != wireVersion {
		return nil, fmt.Errorf("wire version %d, want %d", v, wireVersion)
	}
	p := &Program{Columns: r.int64s()}
	if n := r.length(); n > 0 {
		p.Defaults = append([]byte(nil), r.b[:n]...)
		r.b = r.b[n:]
	}
	p.Trim = r.ints()
	p.Filter = r.exprs(0)
	flags := r.byte()
	p.Aggregate = flags&flagAggregate != 0
	p.DistinctInts = flags&flagDistinctInts != 0
	p.Output = r.ints()
	p.Limit = r.varint()
	if n := r.length(); n > 0 {
		p.OrderBy = make([]Order, n)
		for i := range p.OrderBy {
			p.OrderBy[i] = Order{Col: r.int(), Desc: r.bool()}
		}
	}
	p.GroupBy = r.exprs(0)
	p.Keep = r.ints()
	if n := r.length(); n > 0 {
		p.Aggs = make([]Agg, n)
		for i := range p.Aggs {
			p.Aggs[i].Func = code(r, aggCodes, "aggregate")
			if r.bool() {
				e := r.expr(0)
				p.Aggs[i].Arg = &e
			}
		}
	}
	if flags&flagSample != 0 {
		s := &SampleSpec{Size: r.int(), MaxValueLen: r.int()}
		if n := r.length(); n > 0 {
			s.Tuples = make([][]int, n)
			for i := range s.Tuples {
				s.Tuples[i] = r.ints()
			}
		}
		p.Sample = s
	}
	p.PageRows = r.int()
	return p, r.err
}

func (r *wireReader) exprs(depth int) []Expr {
	n := r.length()
	if n == 0 {
		return nil
	}
	es := make([]Expr, n)
	for i := range es {
		es[i] = r.expr(depth)
	}
	return es
}

func (r *wireReader) expr(depth int) Expr {
	if depth >= maxExprDepth {
		r.fail(fmt.Errorf("expressions nested deeper than %d", maxExprDepth))
		return Expr{}
	}
	e := Expr{Op: code(r, opCodes, "operator"), Col: r.int(), Cmp: code(r, cmpCodes, "comparison kind")}
	if flags := r.byte(); flags&constPresent != 0 {
		e.Const = &Datum{Null: flags&constNull != 0, Unsigned: flags&constUnsigned != 0, Int: r.varint(), Uint: r.uvarint()}
	}
	e.Args = r.exprs(depth + 1)
	return e
}
