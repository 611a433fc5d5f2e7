package copr

import "github.com/percdb/percdb/executor/tablecodec"

// opcode is an Op as an evaluation switches on it. An Op is a string, and
// a switch over Ops compared strings at every node of every row: with
// them the interpretation of `q = 3` cost a filtered scan as much as
// finding the row's columns did (branch joins17's profiles).
type opcode uint8

// The opcodes, one per Op.
const (
	opColumn opcode = iota
	opConst
	opEQ
	opNE
	opLT
	opLE
	opGT
	opGE
	opNullSafe
	opAnd
	opOr
	opNot
	opIsNull
	opIsNotNull
	opMod
	opIn
)

// opcodes maps each Op to its opcode.
var opcodes = map[Op]opcode{
	OpColumn: opColumn, OpConst: opConst, OpEQ: opEQ, OpNE: opNE, OpLT: opLT, OpLE: opLE,
	OpGT: opGT, OpGE: opGE, OpNullSafe: opNullSafe, OpAnd: opAnd, OpOr: opOr, OpNot: opNot,
	OpIsNull: opIsNull, OpIsNotNull: opIsNotNull, OpMod: opMod, OpIn: opIn,
}

// cmpCode is a CmpKind as an evaluation switches on it.
type cmpCode uint8

// The comparison codes, one per CmpKind.
const (
	cmpNone cmpCode = iota
	cmpSigned
	cmpUnsigned
	cmpDouble
)

// node is an Expr compiled for evaluation (Program.Start): its operator
// and comparison kind as integers, its constant as a num.
type node struct {
	op  opcode
	cmp cmpCode
	col int
	// c is the value of an OpConst and the divisor of an OpMod.
	c    num
	args []node
	// x is the expression compiled, named in errors.
	x *Expr
	// colConst marks a comparison of a column with a non-NULL integer
	// constant of the comparison's kind (signed or unsigned), the
	// commonest filter, which columnConstTruth reads from the span.
	colConst bool
}

// compileNode compiles a valid expression.
func compileNode(x *Expr) node {
	n := node{op: opcodes[x.Op], col: x.Col, x: x}
	switch x.Cmp {
	case CmpSigned:
		n.cmp = cmpSigned
	case CmpUnsigned:
		n.cmp = cmpUnsigned
	case CmpDouble:
		n.cmp = cmpDouble
	}
	if x.Const != nil {
		n.c = x.Const.num()
	}
	if len(x.Args) > 0 {
		n.args = make([]node, len(x.Args))
		for i := range x.Args {
			n.args[i] = compileNode(&x.Args[i])
		}
	}
	switch n.op {
	case opEQ, opNE, opLT, opLE, opGT, opGE, opNullSafe:
		a, b := &n.args[0], &n.args[1]
		n.colConst = a.op == opColumn && b.op == opConst &&
			(n.cmp == cmpSigned && b.c.kind == tablecodec.SpanSigned || n.cmp == cmpUnsigned && b.c.kind == tablecodec.SpanUnsigned)
	}
	return n
}

// compileNodes compiles a list of valid expressions.
func compileNodes(xs []Expr) []node {
	if len(xs) == 0 {
		return nil
	}
	ns := make([]node, len(xs))
	for i := range xs {
		ns[i] = compileNode(&xs[i])
	}
	return ns
}
