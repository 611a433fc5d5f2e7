package compat

import (
	gsql "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/rowexec"
)

// SkipQuoted returns the offset after the quoted string or name that
// starts at query[i] (see skipQuoted), for the other packages that read
// statement text (sql/storedproc).
func SkipQuoted(query string, i int) int { return skipQuoted(query, i) }

// IsTokenByte reports whether c can be part of an unquoted word (see
// isTokenByte).
func IsTokenByte(c byte) bool { return isTokenByte(c) }

// DefaultRows runs node n with GMS's own row-iterator builder (percdb's
// would come back to the caller) and returns all its rows.
func DefaultRows(ctx *gsql.Context, n gsql.Node, row gsql.Row) ([]gsql.Row, error) {
	iter, err := rowexec.DefaultBuilder.Build(ctx, n, row)
	if err != nil {
		return nil, err
	}
	return gsql.RowIterToRows(ctx, iter)
}

// DoubleText writes f as MySQL writes a DOUBLE (bits 64) or a FLOAT
// (bits 32) as text (see doubleText), for the text protocol's results.
func DoubleText(f float64, bits int) string { return doubleText(f, bits) }

// HasWord reports whether query has word (upper case) outside its
// quoted strings and names and its comments (the text of a /*! ... */
// comment counts, as MySQL runs it).
func HasWord(query, word string) bool {
	for _, t := range syntaxTokens(query) {
		if t.word == word {
			return true
		}
	}
	return false
}

// FromOnlyDual reports whether every FROM of query (outside its quoted
// strings and names and its comments) is FROM DUAL, MySQL's name for no
// table (a query with none is such a query too).
func FromOnlyDual(query string) bool {
	toks := syntaxTokens(query)
	for i, t := range toks {
		if t.word == "FROM" && (i+1 >= len(toks) || toks[i+1].word != "DUAL") {
			return false
		}
	}
	return true
}
