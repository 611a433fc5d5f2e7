package compat

import (
	"math"
	"strings"
	"unicode/utf8"

	gsql "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/expression/function"
	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/shopspring/decimal"
)

// LPAD, RPAD and FORMAT as MySQL answers them where GMS's did not
// (found by tests/difftest's TestFuncProbe):
//
//   - LPAD(s, n, pad) and RPAD of a negative n are NULL, and so are they
//     when pad is '' and s is shorter than n (nothing can fill it); GMS
//     answered ''.
//   - FORMAT(x, d) computed in float64 with an int64 whole part:
//     FORMAT(1e20, 0) was 7,766,279,631,452,241,920 (the int64 wrapped)
//     and FORMAT(12345678901234567.891, 2) 12,345,678,901,234,568.00.
//     MySQL rounds an integer or a DECIMAL exactly (half away from
//     zero) and a DOUBLE to d digits; percdb's FORMAT does that for
//     integers, DECIMALs and DOUBLEs, and writes the digits with the
//     separators GMS's FORMAT uses for the locale (GMS's own answer
//     stands for strings). A DOUBLE is rounded as MySQL's
//     my_double_round, half to even on its binary value times 10^d
//     (GMS rounded its decimal text half up: FORMAT(2.25e0, 1) 2.3,
//     MySQL 2.2).

// padFormatFunctions are percdb's LPAD, RPAD and FORMAT.
var padFormatFunctions = map[string]gsql.Function{
	"lpad": gsql.FunctionN{Name: "lpad", Fn: func(args ...gsql.Expression) (gsql.Expression, error) {
		return newMySQLPad(function.NewLeftPad, true, args)
	}},
	"rpad": gsql.FunctionN{Name: "rpad", Fn: func(args ...gsql.Expression) (gsql.Expression, error) {
		return newMySQLPad(function.NewRightPad, false, args)
	}},
	"format": gsql.FunctionN{Name: "format", Fn: newExactFormat},
}

// mysqlPad is GMS's LPAD or RPAD, evaluated as MySQL's.
type mysqlPad struct {
	gsql.Expression // GMS's *function.Pad: its name, type and collation
	left            bool
}

// newMySQLPad returns LPAD (left) or RPAD of args, built by gms first
// (which checks their number).
func newMySQLPad(gms func(...gsql.Expression) (gsql.Expression, error), left bool, args []gsql.Expression) (gsql.Expression, error) {
	e, err := gms(args...)
	if err != nil {
		return nil, err
	}
	return &mysqlPad{Expression: e, left: left}, nil
}

// WithChildren implements sql.Expression.
func (p *mysqlPad) WithChildren(children ...gsql.Expression) (gsql.Expression, error) {
	e, err := p.Expression.WithChildren(children...)
	if err != nil {
		return nil, err
	}
	return &mysqlPad{Expression: e, left: p.left}, nil
}

// FunctionName implements sql.FunctionExpression.
func (p *mysqlPad) FunctionName() string {
	return p.Expression.(gsql.FunctionExpression).FunctionName()
}

// Description implements sql.FunctionExpression.
func (p *mysqlPad) Description() string { return p.Expression.(gsql.FunctionExpression).Description() }

// CollationCoercibility implements sql.CollationCoercible.
func (p *mysqlPad) CollationCoercibility(ctx *gsql.Context) (gsql.CollationID, byte) {
	return gsql.GetCoercibility(ctx, p.Expression)
}

// Eval implements sql.Expression: s cut to n characters when it has as
// many; else s filled to n characters with pad, repeated and cut, on
// the left (LPAD) or the right; NULL for a NULL argument, a negative n,
// or an empty pad that has to fill.
func (p *mysqlPad) Eval(ctx *gsql.Context, row gsql.Row) (any, error) {
	ch := p.Children()
	vals := make([]any, len(ch))
	for i, c := range ch {
		v, err := c.Eval(ctx, row)
		if err != nil || v == nil {
			return nil, err
		}
		vals[i] = v
	}
	s, err := textOf(ctx, vals[0])
	if err != nil {
		return nil, err
	}
	nv, _, err := types.Int64.Convert(ctx, vals[1])
	if err != nil {
		return nil, err
	}
	pad, err := textOf(ctx, vals[2])
	if err != nil {
		return nil, err
	}
	n := nv.(int64)
	if n < 0 {
		return nil, nil
	}
	have := utf8.RuneCountInString(s)
	if int64(have) >= n {
		return string([]rune(s)[:n]), nil
	}
	if pad == "" {
		return nil, nil
	}
	if n*utf8.UTFMax > maxRepeatBytes && int64(len(s))+(n-int64(have))*int64(len(pad)) > maxRepeatBytes {
		ctx.Warn(1301, "Result of %s() was larger than max_allowed_packet (%d) - truncated", p.FunctionName(), maxRepeatBytes)
		return nil, nil
	}
	need := int(n) - have
	fill := strings.Repeat(pad, need/utf8.RuneCountInString(pad)+1)
	filling := string([]rune(fill)[:need])
	if p.left {
		return filling + s, nil
	}
	return s + filling, nil
}

// textOf returns v as a string, as GMS converts a function's argument.
func textOf(ctx *gsql.Context, v any) (string, error) {
	t, _, err := types.LongText.Convert(ctx, v)
	if err != nil {
		return "", err
	}
	return types.ConvertToString(ctx, t, types.LongText, nil)
}

// exactFormat is GMS's FORMAT, computed exactly for integers, DECIMALs
// and large DOUBLEs (the comment at the top of the file).
type exactFormat struct {
	*function.Format
}

// newExactFormat returns FORMAT(args...), built by GMS first (which
// checks their number).
func newExactFormat(args ...gsql.Expression) (gsql.Expression, error) {
	e, err := function.NewFormat(args...)
	if err != nil {
		return nil, err
	}
	return &exactFormat{Format: e.(*function.Format)}, nil
}

// WithChildren implements sql.Expression.
func (f *exactFormat) WithChildren(children ...gsql.Expression) (gsql.Expression, error) {
	return newExactFormat(children...)
}

// Eval implements sql.Expression.
func (f *exactFormat) Eval(ctx *gsql.Context, row gsql.Row) (any, error) {
	v, err := f.NumValue.Eval(ctx, row)
	if err != nil || v == nil {
		return nil, err
	}
	var d decimal.Decimal
	double := math.NaN() // the DOUBLE formatted, if it is one
	switch t := f.NumValue.Type(); {
	case isExact(t):
		x, ok := decimalOf(ctx, v)
		if !ok {
			return f.Format.Eval(ctx, row)
		}
		d = x
	case types.IsFloat(t):
		x, ok := doubleOf(ctx, v)
		if !ok || math.IsInf(x, 0) || math.IsNaN(x) {
			return f.Format.Eval(ctx, row)
		}
		d, double = decimal.NewFromFloat(x), x
	default:
		return f.Format.Eval(ctx, row)
	}
	dp, err := f.NumDecimalPlaces.Eval(ctx, row)
	if err != nil || dp == nil {
		return nil, err
	}
	places, ok := doubleOf(ctx, dp)
	if !ok {
		return nil, nil
	}
	n := int32(min(max(places+0.5, 0), 30)) // rounded, within MySQL's 0..30
	thousands, point, err := f.separators(ctx, row)
	if err != nil {
		return nil, err
	}
	if !math.IsNaN(double) {
		// MySQL rounds the DOUBLE's binary value half to even at n
		// digits (my_double_round), then writes it: FORMAT(2.25e0, 1)
		// is 2.2 and FORMAT(0.125e0, 2) 0.12 (GMS: 2.3 and 0.13).
		d = decimal.NewFromFloat(roundHalfEvenPlaces(double, int64(n)))
	}
	digits := d.Round(n).StringFixed(n)
	sign := ""
	if strings.HasPrefix(digits, "-") {
		sign, digits = "-", digits[1:]
	}
	whole, frac, _ := strings.Cut(digits, ".")
	var out strings.Builder
	out.WriteString(sign)
	for i := range len(whole) {
		if i > 0 && (len(whole)-i)%3 == 0 {
			out.WriteString(thousands)
		}
		out.WriteByte(whole[i])
	}
	if n > 0 {
		out.WriteString(point + frac)
	}
	return out.String(), nil
}

// separators returns the thousands separator and the decimal point of
// the FORMAT's locale, as GMS's FORMAT writes them (read from its
// answer for 1234.5).
func (f *exactFormat) separators(ctx *gsql.Context, row gsql.Row) (string, string, error) {
	args := []gsql.Expression{expression.NewLiteral(1234.5, types.Float64), expression.NewLiteral(int64(1), types.Int64)}
	if f.Locale != nil {
		args = append(args, f.Locale)
	}
	probe, err := function.NewFormat(args...)
	if err != nil {
		return "", "", err
	}
	v, err := probe.Eval(ctx, row)
	if err != nil {
		return "", "", err
	}
	s, _ := v.(string)
	// s is 1<thousands>234<point>5
	rest, ok := strings.CutPrefix(s, "1")
	if !ok || !strings.HasSuffix(rest, "5") {
		return ",", ".", nil
	}
	rest = strings.TrimSuffix(rest, "5")
	i := strings.Index(rest, "234")
	if i < 0 {
		return ",", ".", nil
	}
	return rest[:i], rest[i+3:], nil
}
