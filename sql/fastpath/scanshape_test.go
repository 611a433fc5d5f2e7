package fastpath

import (
	"fmt"
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"
)

// TestScanShapes reads range SELECTs (testdata/scanshapes): each
// statement's shape as the handler learns it (Candidate, then the TiDB
// parser and ShapeOf), printed by describeScan, or why it has none.
//
//	shape
//	SELECT ...
//	----
//	<the shape>
//
// Rewrite the expected output with -rewrite.
func TestScanShapes(t *testing.T) {
	datadriven.RunTest(t, "testdata/scanshapes", func(t *testing.T, d *datadriven.TestData) string {
		if d.Cmd != "shape" {
			t.Fatalf("unknown command %q", d.Cmd)
		}
		q := strings.TrimSpace(d.Input)
		if !Candidate(q) {
			return "not a candidate"
		}
		s := shapeOf(q)
		switch {
		case s == nil:
			return "no shape"
		case s.Kind != Scan:
			return fmt.Sprintf("kind %d (a point shape)", s.Kind)
		}
		return describeScan(s)
	})
}

// describeScan prints a range SELECT's shape, one clause a line.
func describeScan(s *Shape) string {
	var b strings.Builder
	sc := s.Scan
	fmt.Fprintf(&b, "table %s.%s params %d\n", s.DB, s.Table, s.Params)
	if sc.Fields == nil {
		b.WriteString("fields *\n")
	}
	for _, f := range sc.Fields {
		fmt.Fprintf(&b, "field %s %q agg=%d\n", f.Col, f.Text, f.Agg)
	}
	if sc.Distinct {
		b.WriteString("distinct\n")
	}
	for i := range sc.Where {
		fmt.Fprintf(&b, "where %s\n", describeCond(&sc.Where[i]))
	}
	if sc.GroupBy != "" {
		fmt.Fprintf(&b, "group by %s\n", sc.GroupBy)
	}
	for _, o := range sc.Order {
		fmt.Fprintf(&b, "order %s desc=%v\n", o.Col, o.Desc)
	}
	if sc.Limit != nil {
		fmt.Fprintf(&b, "limit %s\n", describeValue(*sc.Limit))
	}
	if sc.Offset != nil {
		fmt.Fprintf(&b, "offset %s\n", describeValue(*sc.Offset))
	}
	if sc.ForUpdate {
		b.WriteString("for update\n")
	}
	return b.String()
}

func describeCond(c *Cond) string {
	ops := make([]string, len(c.Ops))
	for i := range c.Ops {
		if c.Ops[i].IsCol() {
			ops[i] = c.Ops[i].Col
		} else {
			ops[i] = describeValue(c.Ops[i].Val)
		}
	}
	not := ""
	if c.Not {
		not = "not "
	}
	switch c.Op {
	case CondCmp:
		return fmt.Sprintf("%s %s %s", ops[0], [...]string{"", "=", "<>", "<", "<=", ">", ">=", "<=>"}[c.Cmp], ops[1])
	case CondBetween:
		return fmt.Sprintf("%s %sbetween %s and %s", ops[0], not, ops[1], ops[2])
	case CondIn:
		return fmt.Sprintf("%s %sin (%s)", ops[0], not, strings.Join(ops[1:], ", "))
	case CondIsNull:
		return fmt.Sprintf("%s is %snull", ops[0], not)
	case CondRowIn:
		n := 0
		for n < len(c.Ops) && c.Ops[n].IsCol() {
			n++
		}
		var tuples []string
		for i := n; i+n <= len(ops) && n > 0; i += n {
			tuples = append(tuples, "("+strings.Join(ops[i:i+n], ", ")+")")
		}
		return fmt.Sprintf("(%s) in (%s)", strings.Join(ops[:n], ", "), strings.Join(tuples, ", "))
	case CondNot:
		return "not (" + describeCond(&c.Args[0]) + ")"
	case CondAnd, CondOr:
		op := map[CondOp]string{CondAnd: "and", CondOr: "or"}[c.Op]
		return "(" + describeCond(&c.Args[0]) + ") " + op + " (" + describeCond(&c.Args[1]) + ")"
	}
	return "?"
}

func describeValue(v Value) string {
	switch {
	case v.Param >= 0:
		return fmt.Sprintf("?%d", v.Param+1)
	case !v.OK:
		return "<not evaluated>"
	case v.Lit == nil:
		return "NULL"
	}
	return fmt.Sprintf("%v:%T", v.Lit, v.Lit)
}
