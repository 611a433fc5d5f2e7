package compat

import (
	"fmt"
	"strconv"
	"strings"

	gsql "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/expression/function"
	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/dolthub/vitess/go/sqltypes"
)

// GMS converts a DOUBLE or FLOAT to a string in positional notation with
// all of the value's digits: CAST(1e15 AS CHAR) was
// '1000000000000000', CONCAT(123456789012345678e0) '123456789012345680'
// and CAST(1e300 AS CHAR) three hundred digits. MySQL writes it as
// my_gcvt does (doubleText: 1e15, 1.2345678901234568e17; a FLOAT with
// six significant digits). doubleStrings puts a doubleString, MySQL's
// text of the number, in place of a DOUBLE or FLOAT operand of CAST(x
// AS CHAR) and of CONCAT and CONCAT_WS, where the number becomes text.

// doubleStrings returns e with its DOUBLE and FLOAT operands written as
// MySQL writes them, when it is a CAST to CHAR, CONCAT or CONCAT_WS that
// has such an operand.
func doubleStrings(e gsql.Expression) (gsql.Expression, bool) {
	var positions map[int]bool // nil: every operand
	switch x := e.(type) {
	case *expression.Convert:
		switch convertTarget(x) {
		case expression.ConvertToChar, expression.ConvertToNChar:
		default:
			return e, false
		}
	case *function.Concat, *function.ConcatWithSeparator:
	case gsql.FunctionExpression:
		positions = stringArguments[strings.ToLower(x.FunctionName())]
		if positions == nil {
			return e, false
		}
	default:
		return e, false
	}
	return withReplacedChildren(e, func(i int, c gsql.Expression) gsql.Expression {
		if !types.IsFloat(c.Type()) || positions != nil && !positions[i] {
			return nil
		}
		if _, done := c.(*doubleString); done {
			return nil
		}
		return &doubleString{UnaryExpression: expression.UnaryExpression{Child: c}, decimals: notFixedDec}
	})
}

// stringArguments are the string functions that read some of their
// arguments as strings, by function name: the positions of those
// arguments. A DOUBLE there is its text as MySQL writes it (with a
// DOUBLE(M,D) column's D digits: LENGTH(x) of a DOUBLE(8,3) 1.5 is 5,
// LPAD(x, 8, '*') '***1.500'), where GMS wrote its shortest digits. The
// other arguments (LEFT's length, LPAD's) are numbers.
var stringArguments = map[string]map[int]bool{
	"length": {0: true}, "octet_length": {0: true}, "char_length": {0: true}, "character_length": {0: true},
	"bit_length": {0: true}, "upper": {0: true}, "ucase": {0: true}, "lower": {0: true}, "lcase": {0: true},
	"reverse": {0: true}, "trim": {0: true}, "ltrim": {0: true}, "rtrim": {0: true}, "md5": {0: true},
	"sha": {0: true}, "sha1": {0: true}, "sha2": {0: true}, "to_base64": {0: true}, "soundex": {0: true},
	"quote": {0: true}, "ascii": {0: true}, "ord": {0: true}, "crc32": {0: true},
	"left": {0: true}, "right": {0: true}, "repeat": {0: true},
	"substring": {0: true}, "substr": {0: true}, "mid": {0: true},
	"lpad": {0: true, 2: true}, "rpad": {0: true, 2: true},
	"replace": {0: true, 1: true, 2: true}, "instr": {0: true, 1: true},
	"locate": {0: true, 1: true}, "position": {0: true, 1: true},
	"insert": {0: true, 3: true}, "strcmp": {0: true, 1: true},
}

// doubleString is a DOUBLE or FLOAT as MySQL writes it in a string.
type doubleString struct {
	expression.UnaryExpression
	// decimals is the number's fixed decimals, notFixedDec when it
	// has none (fixeddecimals.go): with them it is written with that
	// many digits after the point (12.50), as Item::val_str does.
	decimals int
}

var _ gsql.CollationCoercible = (*doubleString)(nil)

// String implements sql.Expression: the number's, so that names stay
// as written.
func (d *doubleString) String() string { return d.Child.String() }

// DebugString shows the conversion.
func (d *doubleString) DebugString() string { return fmt.Sprintf("double_text(%s)", d.Child) }

// Type implements sql.Expression: a string long enough for any double
// (23 characters: -1.7976931348623157e308).
func (d *doubleString) Type() gsql.Type {
	return types.MustCreateStringWithDefaults(sqltypes.VarChar, 23)
}

// CollationCoercibility implements sql.CollationCoercible: a number's.
func (d *doubleString) CollationCoercibility(ctx *gsql.Context) (gsql.CollationID, byte) {
	return gsql.GetCoercibility(ctx, d.Child)
}

// Eval implements sql.Expression.
func (d *doubleString) Eval(ctx *gsql.Context, row gsql.Row) (any, error) {
	v, err := d.Child.Eval(ctx, row)
	if err != nil || v == nil {
		return v, err
	}
	if d.decimals < notFixedDec {
		switch f := v.(type) {
		case float64:
			return strconv.FormatFloat(f, 'f', d.decimals, 64), nil
		case float32:
			return strconv.FormatFloat(float64(f), 'f', d.decimals, 64), nil
		}
	}
	switch f := v.(type) {
	case float64:
		bits := 64
		if d.Child.Type() == types.Float32 {
			bits = 32
		}
		return doubleText(f, bits), nil
	case float32:
		return doubleText(float64(f), 32), nil
	}
	return v, nil
}

// WithChildren implements sql.Expression.
func (d *doubleString) WithChildren(children ...gsql.Expression) (gsql.Expression, error) {
	if len(children) != 1 {
		return nil, gsql.ErrInvalidChildrenNumber.New(d, len(children), 1)
	}
	return &doubleString{UnaryExpression: expression.UnaryExpression{Child: children[0]}, decimals: d.decimals}, nil
}
