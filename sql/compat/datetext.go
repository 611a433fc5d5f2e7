package compat

import (
	"strings"
	"time"

	gsql "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/transform"
	"github.com/dolthub/go-mysql-server/sql/types"
)

// GMS holds a DATE as a time.Time and writes one as text the way it
// writes a DATETIME: CONCAT(d, 'x') of a DATE d was
// '2021-06-15 00:00:00x', LENGTH(CURDATE()) was 19, and so for every
// function that reads its argument as a string (CONCAT(LAST_DAY(d), ''),
// SUBSTRING(d, 9), d LIKE '%-15'). MySQL writes a DATE as '2021-06-15'.
// A DATETIME failed outright in SUBSTRING and LEFT ("invalid type:
// time.Time"); it is given as its text too.
// dateTextArguments gives such functions the DATE as MySQL's text.
//
// LEFT, RIGHT, SUBSTRING (MID, SUBSTR), REVERSE and BIT_LENGTH of a
// number failed the same way ("invalid type: int32", "expected end of
// string" for REVERSE of a negative DECIMAL) or counted the Go value's
// bits (BIT_LENGTH(17) was 32); MySQL reads the number as its text
// (LEFT(17, 1) is '1', BIT_LENGTH(17) 16). Those arguments are given as
// text too (numberTextPositions).
//
// Each argument given as text keeps its own text as its name (argText):
// a select item is named by its text, and GMS finds the columns of a
// union's side by their names, so LEFT(CONVERT(dt, CHAR), 7) in a UNION
// side read the side's first column instead (found by the application
// run of the differential tester: SELECT x.a, LEFT(x.dt, 7) FROM t x
// UNION ALL SELECT x.a, 'x' FROM t x gave a twice).
//
// IF, CASE, COALESCE and IFNULL of a DATE, DATETIME or TIMESTAMP and a
// number are strings in MySQL (the aggregate of a temporal type and a
// number is VARCHAR): IF(d IS NULL, 0, d) is '2020-02-29'. GMS gave the
// DATE as a Unix timestamp (1582934400) in IF and as a DATETIME in CASE
// and IFNULL. temporalNumberBranches writes each branch as MySQL's text.

// textFunctions are the functions, by lower-case name, that read their
// arguments as strings. It is not changed after the package is
// initialized.
var textFunctions = map[string]bool{
	"concat": true, "concat_ws": true, "length": true, "char_length": true, "character_length": true,
	"octet_length": true, "bit_length": true, "substring": true, "substr": true, "mid": true,
	"substring_index": true, "left": true, "right": true, "lpad": true, "rpad": true, "replace": true,
	"lower": true, "lcase": true, "upper": true, "ucase": true, "reverse": true, "repeat": true,
	"trim": true, "ltrim": true, "rtrim": true, "instr": true, "locate": true, "position": true,
	"hex": true, "md5": true, "sha1": true, "sha": true, "sha2": true, "to_base64": true, "ascii": true,
	"ord": true, "strcmp": true, "insert": true, "soundex": true, "quote": true, "crc32": true,
}

// numberTextPositions are the arguments, by function (lower-case name),
// that GMS's function does not read as text when they are numbers, and
// MySQL does. It is not changed after the package is initialized.
var numberTextPositions = map[string]int{
	"left": 0, "right": 0, "substring": 0, "substr": 0, "mid": 0, "reverse": 0, "bit_length": 0,
}

// dateTextArguments returns e with its DATE arguments written as MySQL
// writes a DATE in a string, when e reads its arguments as strings, and
// the numbers of numberTextPositions as text.
func dateTextArguments(e gsql.Expression) (gsql.Expression, bool) {
	numberAt := -1
	switch f := e.(type) {
	case *expression.Like:
	case gsql.FunctionExpression:
		name := strings.ToLower(f.FunctionName())
		if !textFunctions[name] {
			return e, false
		}
		if i, ok := numberTextPositions[name]; ok {
			numberAt = i
		}
	default:
		return e, false
	}
	return withReplacedChildren(e, func(i int, c gsql.Expression) gsql.Expression {
		switch {
		case c == nil:
			return nil
		case i == numberAt && types.IsFloat(c.Type()):
			// A DOUBLE as MySQL writes it, a DOUBLE(M,D)'s with its D
			// digits (doubletext.go, fixeddecimals.go).
			if _, done := c.(*doubleString); done {
				return nil
			}
			return &doubleString{UnaryExpression: expression.UnaryExpression{Child: c}, decimals: notFixedDec}
		case i == numberAt && types.IsNumber(c.Type()) && !types.IsText(c.Type()):
			return &argText{UnaryExpression: expression.UnaryExpression{Child: c}}
		case !types.IsTime(c.Type()):
			return nil
		case types.IsDateType(c.Type()):
			return &dateText{UnaryExpression: expression.UnaryExpression{Child: c}}
		}
		// A DATETIME or TIMESTAMP: GMS's SUBSTRING, LEFT and others
		// failed on its value ("invalid type: time.Time").
		return &argText{UnaryExpression: expression.UnaryExpression{Child: c}}
	})
}

// temporalNumberBranches returns e, an IF, CASE, COALESCE or IFNULL
// whose values mix a temporal type and a number, with every value
// written as text, and whether it was one.
func temporalNumberBranches(e gsql.Expression) (gsql.Expression, bool) {
	// MySQL's aggregate of the values' types (mergedtypes.go), as the
	// TemporalBranches rule types them.
	values, ok := choiceValues(e) // sql/compat/branchtext.go
	if !ok || mergeTemporal(childTypes(e, values)).kind != mergeText {
		return e, false
	}
	ret, same, err := branchValues(e)
	if err != nil || same == transform.SameTree {
		return e, false
	}
	return ret, true
}

// dateText is a DATE as text, '2021-06-15'.
type dateText struct {
	expression.UnaryExpression
}

var _ gsql.Expression = (*dateText)(nil)

// Type implements sql.Expression.
func (d *dateText) Type() gsql.Type { return types.LongText }

// String implements sql.Expression: the DATE's own text, which names a
// column of the select list.
func (d *dateText) String() string { return d.Child.String() }

// Eval implements sql.Expression.
func (d *dateText) Eval(ctx *gsql.Context, row gsql.Row) (any, error) {
	v, err := d.Child.Eval(ctx, row)
	if err != nil || v == nil {
		return nil, err
	}
	t, ok := v.(time.Time)
	if !ok {
		c, _, err := types.Date.Convert(ctx, v)
		if err != nil {
			return nil, err
		}
		t = c.(time.Time)
	}
	return t.Format("2006-01-02"), nil
}

// WithChildren implements sql.Expression.
func (d *dateText) WithChildren(children ...gsql.Expression) (gsql.Expression, error) {
	if len(children) != 1 {
		return nil, gsql.ErrInvalidChildrenNumber.New(d, len(children), 1)
	}
	return &dateText{UnaryExpression: expression.UnaryExpression{Child: children[0]}}, nil
}

// argText is CAST(x AS CHAR) of an argument percdb gives a function as
// text, named by the argument's own text: the function's text, which
// names a select item, stays what the statement wrote (see
// dateTextArguments).
type argText struct {
	expression.UnaryExpression
}

var _ gsql.Expression = (*argText)(nil)
var _ gsql.CollationCoercible = (*argText)(nil)

// conversion is the CAST this is.
func (a *argText) conversion() *expression.Convert {
	return expression.NewConvert(a.Child, expression.ConvertToChar)
}

// Type implements sql.Expression.
func (a *argText) Type() gsql.Type { return types.LongText }

// CollationCoercibility implements sql.CollationCoercible: the CAST's.
func (a *argText) CollationCoercibility(ctx *gsql.Context) (gsql.CollationID, byte) {
	return a.conversion().CollationCoercibility(ctx)
}

// String implements sql.Expression: the argument's own text.
func (a *argText) String() string { return a.Child.String() }

// Eval implements sql.Expression: a DATETIME(n) or TIMESTAMP(n) is
// written with its n digits (GMS's text dropped trailing zeros,
// '...00.1' for the DATETIME(3) MySQL writes '...00.100').
func (a *argText) Eval(ctx *gsql.Context, row gsql.Row) (any, error) {
	v, err := a.conversion().Eval(ctx, row)
	if s, ok := v.(string); ok && err == nil {
		if dt, ok := a.Child.Type().(gsql.DatetimeType); ok && !types.IsDateType(dt) {
			return padDatetimeFraction(s, dt.Precision()), nil // groupconcat.go
		}
	}
	return v, err
}

// WithChildren implements sql.Expression.
func (a *argText) WithChildren(children ...gsql.Expression) (gsql.Expression, error) {
	if len(children) != 1 {
		return nil, gsql.ErrInvalidChildrenNumber.New(a, len(children), 1)
	}
	return &argText{UnaryExpression: expression.UnaryExpression{Child: children[0]}}, nil
}
