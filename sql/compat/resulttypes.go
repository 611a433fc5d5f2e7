package compat

import (
	"fmt"
	"strings"
	"unicode/utf8"

	gsql "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/expression/function"
	"github.com/dolthub/go-mysql-server/sql/expression/function/aggregation"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/dolthub/vitess/go/sqltypes"
	"github.com/shopspring/decimal"
)

// MySQL types a string function's result as a VARCHAR of the most
// characters it can hold, worked out from its arguments' (each kind's
// resolve_type: CONCAT the sum of its arguments', LEFT(s, 3) at most 3,
// REPLACE(s, 'a', 'bb') s's with every character doubled, IF and CASE
// the longest value's), a number argument counting its display width
// (an INT 11, a DECIMAL(5,2) 7). GMS typed CONCAT, CONCAT_WS, LEFT,
// RIGHT, LPAD, RPAD, REPEAT, REPLACE, a string literal and CAST(x AS
// CHAR) LONGTEXT, and IF or CASE of strings TEXT, so that CREATE TABLE
// … AS SELECT CONCAT(s, 'x') of a VARCHAR(10) s made a LONGTEXT column
// (MySQL varchar(11), which an index can take whole) and the wire sent a
// BLOB of 4 GB (MySQL VAR_STRING of 11 characters).
//
// resultCharLength is that table, read for the result columns (the
// projections NullableResults rewrites): the wire's column definitions
// and CTAS's columns take the one type. A length it cannot bound (a
// count that is not a constant, a TEXT argument, an expression it does
// not know) leaves GMS's type; a length over 512 characters too, where
// MySQL makes a TEXT column (CONVERT_IF_BIGGER_TO_BLOB). The values are
// not converted: the length is a bound on them.

// maxVarcharResult is the longest string result MySQL types VARCHAR in
// a table (CONVERT_IF_BIGGER_TO_BLOB, in characters).
const maxVarcharResult = 512

// resultCharLength returns the most characters e's value can have as
// MySQL works it out, and false when it cannot be bounded.
func resultCharLength(e gsql.Expression) (int, bool) {
	switch x := e.(type) {
	case *expression.Alias:
		return resultCharLength(x.Child)
	case *expression.Literal:
		return literalCharLength(x.Value())
	case *expression.GetField:
		return typeCharLength(x.Type())
	case *expression.Convert:
		if x.Type() != nil && types.IsText(x.Type()) && !types.IsBinaryType(x.Type()) {
			if st, ok := x.Type().(gsql.StringType); ok && st.Type() == sqltypes.Char {
				// CAST(x AS CHAR(n)): n.
				return int(st.Length()), true
			}
			return resultCharLength(x.Child)
		}
		return typeCharLength(x.Type())
	case functionWrapper:
		return resultCharLength(x.wrapped())
	case *decimalCoalesce:
		return typeCharLength(x.Type())
	case *resultColumn:
		return resultCharLength(x.Child)
	case *aggregation.Max:
		// MAX and MIN of strings: one of the values (Item_sum_hybrid).
		return resultCharLength(x.Child)
	case *aggregation.Min:
		return resultCharLength(x.Child)
	case *derivedCollation:
		// The function's collation as MySQL derives it (coercion.go).
		return resultCharLength(x.Expression)
	case *expression.Case:
		return maxCharLength(caseValues(x))
	}
	f, ok := e.(gsql.FunctionExpression)
	if !ok {
		return typeCharLength(e.Type())
	}
	args := e.Children()
	switch strings.ToLower(f.FunctionName()) {
	case "concat":
		return sumCharLength(args, 0)
	case "concat_ws":
		if len(args) < 2 {
			return 0, false
		}
		sep, ok := resultCharLength(args[0])
		n, ok2 := sumCharLength(args[1:], 0)
		return n + sep*(len(args)-2), ok && ok2
	case "left", "right":
		n, ok := resultCharLength(args[0])
		if k, isConst := constantCount(args[1]); isConst {
			return min(n, k), true
		}
		return n, ok
	case "lpad", "rpad":
		if k, isConst := constantCount(args[1]); isConst {
			return k, true
		}
	case "repeat":
		n, ok := resultCharLength(args[0])
		if k, isConst := constantCount(args[1]); ok && isConst {
			return n * k, true
		}
	case "replace":
		// Item_func_replace: each occurrence of from in s may become to.
		n, ok := resultCharLength(args[0])
		from, ok2 := resultCharLength(args[1])
		to, ok3 := resultCharLength(args[2])
		if !ok || !ok2 || !ok3 {
			return 0, false
		}
		if to > from && from > 0 {
			n += n / from * (to - from)
		}
		return n, true
	case "upper", "ucase", "lower", "lcase", "trim", "ltrim", "rtrim", "reverse":
		return resultCharLength(args[0])
	case "substring", "substr", "mid":
		n, ok := resultCharLength(args[0])
		if start, isConst := constantCount(args[1]); isConst && start > 0 {
			n = max(0, n-(start-1))
		}
		if len(args) > 2 {
			if k, isConst := constantCount(args[2]); isConst {
				n = min(n, k)
			}
		}
		return n, ok
	case "if":
		return maxCharLength(args[1:])
	case "ifnull", "coalesce":
		return maxCharLength(args)
	}
	return typeCharLength(e.Type())
}

// sumCharLength returns the sum of args' lengths plus n.
func sumCharLength(args []gsql.Expression, n int) (int, bool) {
	for _, a := range args {
		k, ok := resultCharLength(a)
		if !ok {
			return 0, false
		}
		n += k
	}
	return n, true
}

// maxCharLength returns the longest of args' lengths (a CASE's values).
func maxCharLength(args []gsql.Expression) (int, bool) {
	n := 0
	for _, a := range args {
		k, ok := resultCharLength(a)
		if !ok {
			return 0, false
		}
		n = max(n, k)
	}
	return n, true
}

// constantCount returns e's value when e is a constant integer (a
// count or a position) of at most 1<<20, clamped at 0.
func constantCount(e gsql.Expression) (int, bool) {
	if !types.IsInteger(e.Type()) {
		return 0, false
	}
	v, ok := constantValue(e)
	if !ok {
		return 0, false
	}
	n, _, err := types.Int64.Convert(gsql.NewEmptyContext(), v)
	if err != nil {
		return 0, false
	}
	k := n.(int64)
	if k > 1<<20 {
		return 0, false
	}
	return int(max(k, 0)), true
}

// literalCharLength is the length of a constant's text: a string's
// characters, a number's digits and sign (MySQL's max_length of an
// Item_int or Item_decimal), 0 for NULL.
func literalCharLength(v any) (int, bool) {
	switch v := v.(type) {
	case nil:
		return 0, true
	case string:
		return utf8.RuneCountInString(v), true
	case []byte:
		return 0, false
	case decimal.Decimal:
		return len(v.String()), true
	case int8, int16, int32, int64, uint8, uint16, uint32, uint64, int, uint:
		return len(fmt.Sprint(v)), true
	}
	return 0, false
}

// typeCharLength is the most characters a value of t writes as text
// (MySQL's max_length in characters): a VARCHAR(n)'s n, an integer's
// display width with its sign, a DECIMAL(p,s)'s digits, point and sign,
// a DOUBLE's 22, a temporal type's text with its fractional digits.
// A TEXT, BLOB or any other type is not bounded here.
func typeCharLength(t gsql.Type) (int, bool) {
	switch {
	case t == nil:
		return 0, false
	case t == types.Null:
		return 0, true
	case types.IsText(t) && !types.IsTextBlob(t):
		if st, ok := t.(gsql.StringType); ok {
			return int(st.Length()), true
		}
	case types.IsInteger(t):
		switch t.Type() {
		case sqltypes.Int8:
			return 4, true
		case sqltypes.Uint8:
			return 3, true
		case sqltypes.Int16:
			return 6, true
		case sqltypes.Uint16:
			return 5, true
		case sqltypes.Int24:
			return 9, true
		case sqltypes.Uint24:
			return 8, true
		case sqltypes.Int32:
			return 11, true
		case sqltypes.Uint32:
			return 10, true
		case sqltypes.Uint64:
			return 20, true
		}
		return 20, true
	case types.IsDecimal(t):
		dt := t.(gsql.DecimalType)
		n := int(dt.Precision()) + 1
		if dt.Scale() > 0 {
			n++
		}
		return n, true
	case types.IsFloat(t):
		// MySQL's 12 and 22, and one more: the shortest text of
		// -1.7976931348623157e308 has 23 characters.
		if t.Type() == sqltypes.Float32 {
			return 13, true
		}
		return 23, true
	case types.IsDateType(t):
		return 10, true
	case isTimeType(t):
		if d := timeDigits(t); d > 0 {
			return 11 + d, true
		}
		return 10, true
	case types.IsDatetimeType(t) || types.IsTimestampType(t):
		if dt, ok := t.(gsql.DatetimeType); ok && dt.Precision() > 0 {
			return 20 + dt.Precision(), true
		}
		return 19, true
	}
	return 0, false
}

// stringResultType returns the VARCHAR MySQL types e as, a string result
// of GMS's type t, when its length is bounded and within
// maxVarcharResult and narrower than t; false to keep t.
func stringResultType(e gsql.Expression, t gsql.Type) (gsql.Type, bool) {
	st, ok := t.(gsql.StringType)
	if !ok || !types.IsText(t) || types.IsBinaryType(t) {
		return nil, false
	}
	n, ok := resultCharLength(e)
	if !ok || n > maxVarcharResult || (!types.IsTextBlob(t) && int64(n) >= st.Length()) {
		return nil, false
	}
	vt, err := types.CreateString(sqltypes.VarChar, int64(n), st.Collation())
	if err != nil {
		return nil, false
	}
	return vt, true
}

// MySQL's max_length of an integer result (Item::max_length, in
// characters with the sign) decides two things GMS gives otherwise:
//
//   - the integer column CREATE TABLE … AS SELECT makes of an
//     expression (create_tmp_field_from_item: BIGINT when max_length is
//     10 or more, INT below, however narrow: a literal 1 or a IS NULL is
//     an INT, where GMS made a TINYINT; IF and CASE of small integers an
//     INT, where GMS made a BIGINT; IFNULL(a, 1) of an INT a BIGINT);
//   - the integer part a DECIMAL result gives an integer argument
//     (decimal_precision: a literal its digits, any other integer its
//     max_length without the sign): IFNULL(d, 1) of a DECIMAL(5,2) d is a
//     DECIMAL(5,2), where percdb counted every integer 20 digits and made
//     it a DECIMAL(22,2).
//
// integerWidth is that max_length, worked out from the expression as
// MySQL's resolve_type does: a literal its text, a column its type's
// display width, a comparison or other truth value 1, + and - one digit
// more than the wider operand, * the sum of their digits, IF, CASE,
// COALESCE and IFNULL the widest value; any other expression is bounded
// by its type (a BIGINT 20), so that a width is never less than a value
// of the type can need.

// maxIntegerWidth is the longest text of a BIGINT, signed or not.
const maxIntegerWidth = 20

// integerWidth returns MySQL's max_length of e, an expression of an
// integer type.
func integerWidth(e gsql.Expression) int {
	return min(integerWidthOf(e), maxIntegerWidth)
}

func integerWidthOf(e gsql.Expression) int {
	switch x := e.(type) {
	case *expression.Alias:
		return integerWidth(x.Child)
	case *resultColumn:
		return integerWidth(x.Child)
	case functionWrapper:
		return integerWidth(x.wrapped())
	case *expression.Literal:
		if n, ok := literalCharLength(x.Value()); ok && n > 0 {
			return n
		}
	case *expression.GetField:
		return integerTypeWidth(x.Type())
	case *expression.Arithmetic:
		return arithmeticWidth(x.Op, x.LeftChild, x.RightChild, x.Type())
	case *intArithmetic:
		return arithmeticWidth(x.Op, x.LeftChild, x.RightChild, x.Type())
	case *expression.UnaryMinus:
		return integerWidth(x.Child) + signWidth(x.Child)
	case *intNegation:
		return integerWidth(x.Child) + signWidth(x.Child)
	case *function.If:
		return widestInteger(x.Children()[1:], e.Type())
	case *function.IfNull, *function.Coalesce:
		return widestInteger(x.Children(), e.Type())
	case *expression.Case:
		return widestInteger(caseValues(x), e.Type())
	}
	return integerTypeWidth(e.Type())
}

// integerTypeWidth is the display width of an integer type t, its sign
// included (a truth value 1); a type not an integer gives BIGINT's.
func integerTypeWidth(t gsql.Type) int {
	if t == types.Boolean {
		return 1
	}
	if n, ok := typeCharLength(t); ok && types.IsInteger(t) {
		return n
	}
	return maxIntegerWidth
}

// signWidth is 1 when -x of x can take a sign x's width has no room for
// (x unsigned or a literal), else 0.
func signWidth(x gsql.Expression) int {
	if _, lit := x.(*expression.Literal); lit || types.IsUnsigned(x.Type()) {
		return 1
	}
	return 0
}

// arithmeticWidth is the width of l op r for +, - and *
// (Item_func_additive_op::result_precision: one digit more than the
// wider operand; Item_func_mul: the sum of the digits), and of typ for
// any other operator.
func arithmeticWidth(op string, l, r gsql.Expression, typ gsql.Type) int {
	if !types.IsInteger(l.Type()) || !types.IsInteger(r.Type()) {
		return integerTypeWidth(typ)
	}
	sign := 1
	if types.IsUnsigned(typ) {
		sign = 0
	}
	switch op {
	case "+", "-":
		return max(integerDigits(l), integerDigits(r)) + 1 + sign
	case "*":
		return integerDigits(l) + integerDigits(r) + sign
	}
	return integerTypeWidth(typ)
}

// widestInteger is the width of a choice among values (IF, CASE,
// COALESCE): the most digits of any, with a sign unless typ is
// unsigned; a value not an integer (a NULL) adds none.
func widestInteger(values []gsql.Expression, typ gsql.Type) int {
	digits := 0
	for _, v := range values {
		if v == nil || !types.IsInteger(v.Type()) {
			if v != nil && v.Type() != types.Null {
				return integerTypeWidth(typ)
			}
			continue
		}
		digits = max(digits, integerDigits(v))
	}
	if types.IsUnsigned(typ) {
		return digits
	}
	return digits + 1
}

// integerDigits is MySQL's decimal_precision of e, an integer: a
// literal's digits, any other integer's max_length without the sign.
func integerDigits(e gsql.Expression) int {
	e = underResultNames(e)
	if x, ok := e.(*expression.Literal); ok {
		if n, ok := literalCharLength(x.Value()); ok && n > 0 {
			if s := fmt.Sprint(x.Value()); strings.HasPrefix(s, "-") {
				return n - 1
			}
			return n
		}
	}
	n := integerWidth(e)
	if types.IsUnsigned(e.Type()) || e.Type() == types.Boolean {
		return n
	}
	return max(n-1, 1)
}

// createSelectInteger is the integer column CREATE TABLE … AS SELECT
// makes of an expression of MySQL's width n (create_tmp_field_from_item):
// BIGINT from 10 characters on, INT below, unsigned as typ is.
func createSelectInteger(n int, typ gsql.Type) gsql.Type {
	unsigned := types.IsUnsigned(typ)
	switch {
	case n >= 10 && unsigned:
		return types.Uint64
	case n >= 10:
		return types.Int64
	case unsigned:
		return types.Uint32
	}
	return types.Int32
}

// aggregateStringType returns the VARCHAR MySQL types a projection's
// column gf of child as (stringResultType), when child's rows make that
// column by MAX or MIN of a string whose length is bounded: the
// aggregate is the GroupBy's, below the projection that reads its column
// (MAX(CONCAT(s, 'x')) of a VARCHAR(10) s is a VARCHAR(11), GMS's
// LONGTEXT). False for any other column.
func aggregateStringType(gf *expression.GetField, child gsql.Node) (gsql.Type, bool) {
	t := gf.Type()
	if !types.IsText(t) || !types.IsTextBlob(t) {
		return nil, false
	}
	switch e := madeBy(child, gf.Index()).(type) {
	case *aggregation.Max, *aggregation.Min:
		return stringResultType(e, t)
	}
	return nil, false
}

// madeBy returns the expression of n's GroupBy that makes column i of
// n's rows, seen through the nodes that pass their child's rows on (a
// filter, sort, limit, DISTINCT, HAVING, a projection of the column);
// nil for a column of any other node.
func madeBy(n gsql.Node, i int) gsql.Expression {
	for {
		switch x := n.(type) {
		case *plan.GroupBy:
			if i < 0 || i >= len(x.SelectedExprs) {
				return nil
			}
			e := x.SelectedExprs[i]
			if a, ok := e.(*expression.Alias); ok {
				e = a.Child
			}
			return e
		case *plan.Project:
			// A projection that passes the column on (the one HAVING
			// or ORDER BY puts between, with columns of their own).
			if i < 0 || i >= len(x.Projections) {
				return nil
			}
			gf, ok := underResultNames(x.Projections[i]).(*expression.GetField)
			if !ok {
				return nil
			}
			n, i = x.Child, gf.Index()
		case *plan.Filter, *plan.Having, *plan.Sort, *plan.Limit, *plan.Offset, *plan.Distinct, *plan.TopN:
			n = x.Children()[0]
		default:
			return nil
		}
	}
}

// caseValues returns the values a CASE may give: its THEN values and its
// ELSE.
func caseValues(c *expression.Case) []gsql.Expression {
	values := make([]gsql.Expression, 0, len(c.Branches)+1)
	for _, b := range c.Branches {
		values = append(values, b.Value)
	}
	if c.Else != nil {
		values = append(values, c.Else)
	}
	return values
}

// underResultNames returns the expression under e's aliases and result
// columns (NullableResults).
func underResultNames(e gsql.Expression) gsql.Expression {
	for {
		switch x := e.(type) {
		case *expression.Alias:
			e = x.Child
		case *resultColumn:
			e = x.Child
		default:
			return e
		}
	}
}
