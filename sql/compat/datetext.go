package compat

import (
	"strings"
	"time"

	gsql "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/expression"
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

// dateTextArguments returns e with its DATE arguments written as MySQL
// writes a DATE in a string, when e reads its arguments as strings.
func dateTextArguments(e gsql.Expression) (gsql.Expression, bool) {
	switch f := e.(type) {
	case *expression.Like:
	case gsql.FunctionExpression:
		if !textFunctions[strings.ToLower(f.FunctionName())] {
			return e, false
		}
	default:
		return e, false
	}
	children := e.Children()
	var out []gsql.Expression
	for i, c := range children {
		if c == nil || !types.IsTime(c.Type()) {
			continue
		}
		if out == nil {
			out = append([]gsql.Expression(nil), children...)
		}
		if types.IsDateType(c.Type()) {
			out[i] = &dateText{UnaryExpression: expression.UnaryExpression{Child: c}}
			continue
		}
		// A DATETIME or TIMESTAMP: GMS's SUBSTRING, LEFT and others
		// failed on its value ("invalid type: time.Time").
		out[i] = expression.NewConvert(c, expression.ConvertToChar)
	}
	if out == nil {
		return e, false
	}
	ret, err := e.WithChildren(out...)
	if err != nil {
		return e, false
	}
	return ret, true
}

// temporalNumberBranches returns e, an IF, CASE, COALESCE or IFNULL
// whose values mix a temporal type and a number, with every value
// written as text, and whether it was one.
func temporalNumberBranches(e gsql.Expression) (gsql.Expression, bool) {
	children := e.Children()
	values, ok := choiceValues(e) // sql/compat/branchtext.go
	if !ok {
		return e, false
	}
	var temporal, number bool
	for _, i := range values {
		t := children[i].Type()
		temporal = temporal || types.IsTime(t)
		number = number || types.IsNumber(t) && !types.IsText(t)
	}
	if !temporal || !number {
		return e, false
	}
	out := append([]gsql.Expression(nil), children...)
	for _, i := range values {
		c := children[i]
		switch t := c.Type(); {
		case t == types.Null || types.IsText(t):
		case types.IsDateType(t):
			out[i] = &dateText{UnaryExpression: expression.UnaryExpression{Child: c}}
		default:
			out[i] = expression.NewConvert(c, expression.ConvertToChar)
		}
	}
	ret, err := e.WithChildren(out...)
	if err != nil {
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
