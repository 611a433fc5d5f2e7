package explain

import (
	"strconv"
	"strings"

	gsql "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/vitess/go/vt/proto/query"
)

// keyName is an index's name as MySQL shows it.
func keyName(idx gsql.Index) string {
	if strings.EqualFold(idx.ID(), "primary") {
		return "PRIMARY"
	}
	return idx.ID()
}

// columnName is the column of an index expression ("table.column").
func columnName(expr string) string {
	return strings.ToLower(expr[strings.LastIndexByte(expr, '.')+1:])
}

// columnNullability reports for each index column whether the table's
// column can hold NULL.
func columnNullability(sch gsql.Schema, cols []gsql.ColumnExpressionType) []bool {
	out := make([]bool, len(cols))
	for i, c := range cols {
		if j := sch.IndexOfColName(columnName(c.Expression)); j >= 0 {
			out[i] = sch[j].Nullable
		}
	}
	return out
}

// refName is the ref of a lookup key: the outer column it comes from, or
// const.
func refName(e gsql.Expression) string {
	if gf, ok := e.(*expression.GetField); ok {
		if gf.Table() != "" {
			return strings.ToLower(gf.Table() + "." + gf.Name())
		}
		return strings.ToLower(gf.Name())
	}
	if _, ok := e.(*expression.Literal); ok {
		return "const"
	}
	return "func"
}

// constRefs is the ref of a lookup of n constant key columns.
func constRefs(n int) string {
	return strings.TrimSuffix(strings.Repeat("const,", n), ",")
}

// rangeShape is what a static lookup's ranges use of the index.
type rangeShape struct {
	// points is the fewest leading columns any range pins to one value.
	points int
	// used is the most leading columns any range constrains.
	used int
	// null reports a range that pins a column to NULL.
	null bool
}

func analyzeRanges(ctx *gsql.Context, ranges gsql.MySQLRangeCollection, ncols int) rangeShape {
	s := rangeShape{points: ncols}
	for _, r := range ranges {
		p, used := 0, 0
		for i, ce := range r {
			if i >= ncols {
				break
			}
			if isNull, ok := point(ctx, ce); ok {
				s.null = s.null || isNull
				p++
				used++
				continue
			}
			if !unbounded(ce) {
				used++
			}
			break
		}
		if p < s.points {
			s.points = p
		}
		if used > s.used {
			s.used = used
		}
	}
	return s
}

// point reports whether ce is a single value, and whether that is NULL.
func point(ctx *gsql.Context, ce gsql.MySQLRangeColumnExpr) (isNull, ok bool) {
	switch lo := ce.LowerBound.(type) {
	case gsql.BelowNull:
		_, ok := ce.UpperBound.(gsql.AboveNull)
		return ok, ok
	case gsql.Below:
		hi, ok := ce.UpperBound.(gsql.Above)
		if !ok {
			return false, false
		}
		cmp, err := ce.Typ.Compare(ctx, lo.Key, hi.Key)
		return false, err == nil && cmp == 0
	}
	return false, false
}

// unbounded reports whether ce admits every value of its column.
func unbounded(ce gsql.MySQLRangeColumnExpr) bool {
	_, lo := ce.LowerBound.(gsql.BelowNull)
	_, hi := ce.UpperBound.(gsql.AboveAll)
	return lo && hi
}

// keyLen is MySQL's key_len of the first n columns of an index: the bytes
// of each column's key image, one more for a nullable column, two more
// for a variable-length one; "" when n is 0.
func keyLen(cols []gsql.ColumnExpressionType, nullable []bool, n int) string {
	if n <= 0 {
		return ""
	}
	if n > len(cols) {
		n = len(cols)
	}
	total := 0
	for i := 0; i < n; i++ {
		total += typeLen(cols[i].Type)
		if nullable[i] {
			total++
		}
	}
	return strconv.Itoa(total)
}

// typeLen is the bytes of a value of t in an index key, as MySQL counts
// them.
func typeLen(t gsql.Type) int {
	switch t.Type() {
	case query.Type_INT8, query.Type_UINT8, query.Type_YEAR:
		return 1
	case query.Type_INT16, query.Type_UINT16:
		return 2
	case query.Type_INT24, query.Type_UINT24, query.Type_DATE, query.Type_TIME:
		return 3
	case query.Type_INT32, query.Type_UINT32, query.Type_FLOAT32, query.Type_TIMESTAMP:
		return 4
	case query.Type_DATETIME:
		return 5
	case query.Type_INT64, query.Type_UINT64, query.Type_FLOAT64:
		return 8
	case query.Type_BIT, query.Type_ENUM:
		return 2
	case query.Type_SET:
		return 8
	case query.Type_DECIMAL:
		if d, ok := t.(gsql.DecimalType); ok {
			return decimalLen(int(d.Precision()), int(d.Scale()))
		}
	}
	if st, ok := t.(gsql.StringType); ok {
		n := int(st.MaxCharacterLength()) * int(st.CharacterSet().MaxLength())
		switch t.Type() {
		case query.Type_CHAR, query.Type_BINARY:
			return n
		}
		return n + 2
	}
	return 8
}

// decimalLen is the bytes of MySQL's binary DECIMAL(precision, scale):
// four per nine digits on each side of the point, fewer for the rest.
func decimalLen(precision, scale int) int {
	digits := [...]int{0, 1, 1, 2, 2, 3, 3, 4, 4, 4}
	intg := precision - scale
	return intg/9*4 + digits[intg%9] + scale/9*4 + digits[scale%9]
}
