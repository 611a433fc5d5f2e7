package sql

import (
	"context"

	gsql "github.com/dolthub/go-mysql-server/sql"
	ast "github.com/dolthub/vitess/go/vt/sqlparser"

	"github.com/percdb/percdb/sql/compat"
)

// literalParser wraps GMS's parser and, before parsing, doubles the
// backslash of each \% and \_ inside a quoted string: '\\_' is what MySQL
// reads '\_' as, and the vitess lexer reads it so too. Queries with no
// backslash (nearly all) are passed on as they are.
//
// It also writes DEFAULT for a generated column where GMS refuses it
// (DatabaseProvider.generatedDefaults, generated.go), which needs the
// tables of the provider.
type literalParser struct {
	gsql.Parser
	provider *DatabaseProvider
}

// ParseSimple implements sql.Parser.
func (p literalParser) ParseSimple(query string) (ast.Statement, error) {
	stmt, err := p.Parser.ParseSimple(compat.KeepLikeEscapes(query))
	return compat.RewriteParsed(stmt), err
}

// Parse implements sql.Parser.
func (p literalParser) Parse(ctx *gsql.Context, query string, multi bool) (ast.Statement, string, string, error) {
	stmt, q, rest, err := p.Parser.Parse(ctx, compat.KeepLikeEscapes(query), multi)
	noteAliasSpellings(ctx, stmt)
	return p.provider.generatedDefaults(ctx, compat.RewriteParsed(stmt)), q, rest, err
}

// ParseWithOptions implements sql.Parser.
func (p literalParser) ParseWithOptions(ctx context.Context, query string, delimiter rune, multi bool, options ast.ParserOptions) (ast.Statement, string, string, error) {
	stmt, q, rest, err := p.Parser.ParseWithOptions(ctx, compat.KeepLikeEscapes(query), delimiter, multi, options)
	noteAliasSpellings(ctx, stmt)
	return p.provider.generatedDefaults(ctx, compat.RewriteParsed(stmt)), q, rest, err
}

// ParseOneWithOptions implements sql.Parser. The index it returns is into
// the rewritten query, so a query is rewritten only when it has a
// backslash and that is the only statement (the handler's callers use
// the index to find the next statement of a multi-statement query).
func (p literalParser) ParseOneWithOptions(ctx context.Context, query string, options ast.ParserOptions) (ast.Statement, int, error) {
	q := compat.KeepLikeEscapes(query)
	if len(q) == len(query) {
		stmt, n, err := p.Parser.ParseOneWithOptions(ctx, query, options)
		noteAliasSpellings(ctx, stmt)
		return p.provider.generatedDefaults(ctx, compat.RewriteParsed(stmt)), n, err
	}
	stmt, _, err := p.Parser.ParseOneWithOptions(ctx, q, options)
	noteAliasSpellings(ctx, stmt)
	return p.provider.generatedDefaults(ctx, compat.RewriteParsed(stmt)), len(query), err
}
