package compat

import (
	"fmt"
	"strings"
	"unicode/utf8"

	gsql "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/shopspring/decimal"
)

// GMS's INSTR and LOCATE (and POSITION, which is LOCATE) look for a
// string in another ignoring letter case whatever the collation (INSTR
// of 'B' under utf8mb4_general_ci found no 'b', LOCATE of 'a' in a
// utf8mb4_bin 'A' found it), count bytes where MySQL counts characters,
// and fail on a number ("substring must be a string"). stringSearch is
// MySQL's: both arguments as strings, compared under their aggregated
// collation window by window as MySQL's my_instr_mb does, positions in
// characters.
//
// GMS's FIELD(key, v1, v2, ...) compares the key with each value as
// text, ignoring letter case: FIELD(s, 'a', 'b') of a utf8mb4_bin 'A'
// was 1 (MySQL: 0), and FIELD(1.0, 1) was 0 ('1.0' is not '1'; MySQL:
// 1). MySQL compares them in the type of all the arguments
// (Item_func_field): strings under the collation aggregated from the
// arguments, integers as integers, integers and DECIMALs as DECIMALs,
// anything else (a DOUBLE, a string with a number) as DOUBLEs. A NULL
// key, or no equal value, gives 0; a NULL value is skipped.

// comparisonFunctions are percdb's FIELD, INSTR and LOCATE (POSITION),
// by lower-case name. It is not changed after the package is
// initialized.
var comparisonFunctions = map[string]gsql.Function{
	"field": gsql.FunctionN{Name: "field", Fn: newField},
	"instr": gsql.Function2{Name: "instr", Fn: func(str, substr gsql.Expression) gsql.Expression {
		return &stringSearch{name: "instr", args: []gsql.Expression{str, substr}}
	}},
	"locate": gsql.FunctionN{Name: "locate", Fn: newLocate},
}

// newField returns percdb's FIELD of args.
func newField(args ...gsql.Expression) (gsql.Expression, error) {
	if len(args) < 2 {
		return nil, gsql.ErrInvalidArgumentNumber.New("FIELD", "2 or more", len(args))
	}
	return &field{args: args}, nil
}

// field is MySQL's FIELD; see the comment above.
type field struct {
	args []gsql.Expression
}

var _ gsql.FunctionExpression = (*field)(nil)

// fieldCompare is how FIELD compares its arguments.
type fieldCompare int

const (
	fieldAsString fieldCompare = iota
	fieldAsInteger
	fieldAsDecimal
	fieldAsDouble
)

// compareAs returns how FIELD compares its arguments, by their types.
func (f *field) compareAs() fieldCompare {
	as, first := fieldAsString, true
	for _, a := range f.args {
		var k fieldCompare
		switch t := a.Type(); {
		case t == types.Null:
			continue
		case types.IsInteger(t) || types.IsYear(t) || types.IsBit(t):
			k = fieldAsInteger
		case types.IsDecimal(t):
			k = fieldAsDecimal
		case types.IsNumber(t):
			k = fieldAsDouble
		case types.IsText(t) || types.IsBinaryType(t):
			k = fieldAsString
		default:
			// Dates and times compare as their strings.
			k = fieldAsString
		}
		switch {
		case first || as == k:
			as, first = k, false
		case as == fieldAsString || k == fieldAsString || as == fieldAsDouble || k == fieldAsDouble:
			as = fieldAsDouble
		default:
			as = fieldAsDecimal
		}
	}
	return as
}

// comparisonCollation returns the collation strings made of args are
// compared under: the arguments' aggregated by coercibility (MySQL's
// agg_arg_charsets_for_comparison), the connection's when none is a
// string.
func comparisonCollation(ctx *gsql.Context, args []gsql.Expression) gsql.CollationID {
	coll, k := coercibility(ctx, args[0])
	binary := types.IsBinaryType(args[0].Type())
	for _, a := range args[1:] {
		c, ck := coercibility(ctx, a)
		coll, k = gsql.ResolveCoercibility(coll, k, c, ck)
		binary = binary || types.IsBinaryType(a.Type())
	}
	if coll == gsql.Collation_Unspecified || coll == gsql.Collation_binary && !binary {
		return ctx.GetCollation()
	}
	return coll
}

// FunctionName implements sql.FunctionExpression.
func (f *field) FunctionName() string { return "field" }

// Description implements sql.FunctionExpression.
func (f *field) Description() string { return "MySQL's FIELD" }

// Resolved implements sql.Expression.
func (f *field) Resolved() bool {
	for _, a := range f.args {
		if !a.Resolved() {
			return false
		}
	}
	return true
}

// String implements sql.Expression.
func (f *field) String() string {
	parts := make([]string, len(f.args))
	for i, a := range f.args {
		parts[i] = a.String()
	}
	return fmt.Sprintf("field(%s)", strings.Join(parts, ", "))
}

// Type implements sql.Expression.
func (f *field) Type() gsql.Type { return types.Int64 }

// IsNullable implements sql.Expression: FIELD is never NULL.
func (f *field) IsNullable() bool { return false }

// Children implements sql.Expression.
func (f *field) Children() []gsql.Expression { return f.args }

// WithChildren implements sql.Expression.
func (f *field) WithChildren(children ...gsql.Expression) (gsql.Expression, error) {
	if len(children) != len(f.args) {
		return nil, gsql.ErrInvalidChildrenNumber.New(f, len(children), len(f.args))
	}
	return &field{args: children}, nil
}

// Eval implements sql.Expression.
func (f *field) Eval(ctx *gsql.Context, row gsql.Row) (any, error) {
	key, err := f.args[0].Eval(ctx, row)
	if err != nil || key == nil {
		return int64(0), err
	}
	as := f.compareAs()
	var text gsql.StringType
	if as == fieldAsString {
		text = types.CreateLongText(comparisonCollation(ctx, f.args))
	}
	k, err := fieldValue(ctx, as, text, key)
	if err != nil {
		return nil, err
	}
	for i, a := range f.args[1:] {
		v, err := a.Eval(ctx, row)
		if err != nil {
			return nil, err
		}
		if v == nil {
			continue
		}
		if v, err = fieldValue(ctx, as, text, v); err != nil {
			return nil, err
		}
		if eq, err := fieldEqual(ctx, as, text, k, v); err != nil || eq {
			return int64(i + 1), err
		}
	}
	return int64(0), nil
}

// fieldValue converts v to what FIELD compares as.
func fieldValue(ctx *gsql.Context, as fieldCompare, text gsql.StringType, v any) (any, error) {
	switch as {
	case fieldAsString:
		s, _, err := text.Convert(ctx, v)
		return s, err
	case fieldAsInteger, fieldAsDecimal:
		return exactDecimal(ctx, v)
	}
	// A string that is not a number counts as its numeric prefix, as
	// in MySQL (which warns).
	d, _, err := types.Float64.Convert(ctx, v)
	if d == nil {
		return nil, err
	}
	return d, nil
}

// fieldEqual reports whether FIELD's converted values a and b are equal.
func fieldEqual(ctx *gsql.Context, as fieldCompare, text gsql.StringType, a, b any) (bool, error) {
	switch as {
	case fieldAsString:
		c, err := text.Compare(ctx, a, b)
		return c == 0, err
	case fieldAsInteger, fieldAsDecimal:
		return a.(decimal.Decimal).Equal(b.(decimal.Decimal)), nil
	}
	return a.(float64) == b.(float64), nil
}

// newLocate returns LOCATE(substr, str[, pos]).
func newLocate(args ...gsql.Expression) (gsql.Expression, error) {
	if len(args) != 2 && len(args) != 3 {
		return nil, gsql.ErrInvalidArgumentNumber.New("LOCATE", "2 or 3", len(args))
	}
	// LOCATE names the substring first; stringSearch the string.
	out := append([]gsql.Expression{args[1], args[0]}, args[2:]...)
	return &stringSearch{name: "locate", args: out}, nil
}

// stringSearch is INSTR(str, substr) or LOCATE(substr, str[, pos]),
// with args str, substr[, pos]; see the comment at the top of the file.
type stringSearch struct {
	name string
	args []gsql.Expression
}

var _ gsql.FunctionExpression = (*stringSearch)(nil)

// FunctionName implements sql.FunctionExpression.
func (s *stringSearch) FunctionName() string { return s.name }

// Description implements sql.FunctionExpression.
func (s *stringSearch) Description() string { return "MySQL's " + strings.ToUpper(s.name) }

// Resolved implements sql.Expression.
func (s *stringSearch) Resolved() bool {
	for _, a := range s.args {
		if !a.Resolved() {
			return false
		}
	}
	return true
}

// String implements sql.Expression, in the function's own argument
// order.
func (s *stringSearch) String() string {
	args := s.args
	if s.name == "locate" {
		args = append([]gsql.Expression{args[1], args[0]}, args[2:]...)
	}
	parts := make([]string, len(args))
	for i, a := range args {
		parts[i] = a.String()
	}
	return fmt.Sprintf("%s(%s)", s.name, strings.Join(parts, ", "))
}

// Type implements sql.Expression.
func (s *stringSearch) Type() gsql.Type { return types.Int64 }

// IsNullable implements sql.Expression.
func (s *stringSearch) IsNullable() bool {
	for _, a := range s.args {
		if a.IsNullable() {
			return true
		}
	}
	return false
}

// Children implements sql.Expression: str, substr[, pos].
func (s *stringSearch) Children() []gsql.Expression { return s.args }

// WithChildren implements sql.Expression.
func (s *stringSearch) WithChildren(children ...gsql.Expression) (gsql.Expression, error) {
	if len(children) != len(s.args) {
		return nil, gsql.ErrInvalidChildrenNumber.New(s, len(children), len(s.args))
	}
	return &stringSearch{name: s.name, args: children}, nil
}

// Eval implements sql.Expression: the position in characters, from 1,
// of the first occurrence of substr in str at or after pos; 0 if there
// is none; NULL if an argument is NULL. An empty substr is found at pos
// up to one past the end (MySQL 8's Item_func_locate).
func (s *stringSearch) Eval(ctx *gsql.Context, row gsql.Row) (any, error) {
	text := types.CreateLongText(comparisonCollation(ctx, s.args[:2]))
	var vals [2]string
	for i := range vals {
		v, err := s.args[i].Eval(ctx, row)
		if err != nil || v == nil {
			return nil, err
		}
		sv, _, err := types.LongText.Convert(ctx, v)
		if err != nil {
			return nil, err
		}
		vals[i], _ = sv.(string)
	}
	str, substr := vals[0], vals[1]
	start := int64(1)
	if len(s.args) == 3 {
		p, err := s.args[2].Eval(ctx, row)
		if err != nil {
			return nil, err
		}
		if p == nil {
			return nil, nil
		}
		n, _, err := types.Int64.Convert(ctx, p)
		if err != nil {
			return nil, err
		}
		start = n.(int64)
	}
	chars := int64(utf8.RuneCountInString(str))
	if start < 1 || start > chars+1 {
		return int64(0), nil
	}
	// The byte offset of character start.
	off := 0
	for i := int64(1); i < start; i++ {
		_, size := utf8.DecodeRuneInString(str[off:])
		off += size
	}
	if substr == "" {
		return start, nil
	}
	pos := start
	for b := off; b+len(substr) <= len(str); pos++ {
		// A window ending inside a character matches nothing.
		if w := str[b : b+len(substr)]; utf8.ValidString(w) {
			c, err := text.Compare(ctx, w, substr)
			if err != nil {
				return nil, err
			}
			if c == 0 {
				return pos, nil
			}
		}
		_, size := utf8.DecodeRuneInString(str[b:])
		b += size
	}
	return int64(0), nil
}
