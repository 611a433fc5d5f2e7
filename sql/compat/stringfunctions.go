package compat

import (
	"unicode/utf8"

	gsql "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/expression/function"
	"github.com/dolthub/go-mysql-server/sql/types"
)

// MySQL's string functions GMS v0.20.0 lacks (1305 "FUNCTION db.insert
// does not exist"): INSERT(str, pos, len, newstr) and OCT(n).

// missingStringFunctions are percdb's string functions by lower-case name. It
// is not changed after the package is initialized.
var missingStringFunctions = map[string]gsql.Function{
	"insert": gsql.Function4{Name: "insert", Fn: func(s, pos, n, with gsql.Expression) gsql.Expression {
		return newTemporalFunc("insert", insertString, fixedType(types.LongText), s, pos, n, with)
	}},
	// OCT(n) is CONV(n, 10, 8).
	"oct": gsql.Function1{Name: "oct", Fn: func(n gsql.Expression) gsql.Expression {
		return function.NewConv(n, expression.NewLiteral(int64(10), types.Int64), expression.NewLiteral(int64(8), types.Int64))
	}},
}

// insertString is INSERT(str, pos, len, newstr): str with the len
// characters from position pos (from 1) replaced by newstr; str itself
// when pos is not within it; the rest of it from pos when len is
// negative or reaches past its end.
func insertString(ctx *gsql.Context, vals []any, _ []gsql.Expression) (any, error) {
	var text [2]string
	for i, at := range []int{0, 3} {
		v, _, err := types.LongText.Convert(ctx, vals[at])
		if err != nil {
			return nil, err
		}
		s, err := types.ConvertToString(ctx, v, types.LongText, nil)
		if err != nil {
			return nil, err
		}
		text[i] = s
	}
	var nums [2]int64
	for i, at := range []int{1, 2} {
		v, _, err := types.Int64.Convert(ctx, vals[at])
		if err != nil {
			return nil, err
		}
		nums[i] = v.(int64)
	}
	s, with := text[0], text[1]
	pos, n := nums[0], nums[1]
	length := int64(utf8.RuneCountInString(s))
	if pos < 1 || pos > length {
		return s, nil
	}
	if n < 0 || n > length-pos+1 {
		n = length - pos + 1
	}
	runes := []rune(s)
	return string(runes[:pos-1]) + with + string(runes[pos-1+n:]), nil
}
