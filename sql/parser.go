package sql

import (
	"context"

	gsql "github.com/dolthub/go-mysql-server/sql"
	ast "github.com/dolthub/vitess/go/vt/sqlparser"

	"github.com/percdb/percdb/sql/compat"
	"github.com/percdb/percdb/sql/storedproc"
)

// literalParser wraps GMS's parser and, before parsing, doubles the
// backslash of each \% and \_ inside a quoted string: '\\_' is what MySQL
// reads '\_' as, and the vitess lexer reads it so too. Queries with no
// backslash (nearly all) are passed on as they are.
//
// A stored program whose text does not parse is parsed again with its
// GET DIAGNOSTICS and DO statements marked (storedproc.Rewrite), and a
// CREATE PROCEDURE's tree is given to GMS without what GMS's planner
// refuses (storedproc.ForGMS): percdb's interpreter runs the body.
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
	if err != nil {
		if q, ok := storedproc.Rewrite(query); ok {
			if s, rerr := p.Parser.ParseSimple(compat.KeepLikeEscapes(q)); rerr == nil {
				stmt, err = s, nil
			}
		}
	}
	return p.qualifyCalls(storedproc.ForGMS(compat.RewriteParsed(stmt))), err
}

// Parse implements sql.Parser.
func (p literalParser) Parse(ctx *gsql.Context, query string, multi bool) (ast.Statement, string, string, error) {
	stmt, q, rest, err := p.Parser.Parse(ctx, compat.KeepLikeEscapes(query), multi)
	if err != nil {
		if rq, ok := storedproc.Rewrite(query); ok {
			if s, sq, srest, rerr := p.Parser.Parse(ctx, compat.KeepLikeEscapes(rq), multi); rerr == nil {
				stmt, q, rest, err = s, sq, srest, nil
			}
		}
	}
	noteAliasSpellings(ctx, stmt)
	return p.qualifyCalls(storedproc.ForGMS(p.provider.generatedDefaults(ctx, compat.RewriteParsed(stmt)))), q, rest, err
}

// ParseWithOptions implements sql.Parser.
func (p literalParser) ParseWithOptions(ctx context.Context, query string, delimiter rune, multi bool, options ast.ParserOptions) (ast.Statement, string, string, error) {
	stmt, q, rest, err := p.Parser.ParseWithOptions(ctx, compat.KeepLikeEscapes(query), delimiter, multi, options)
	if err != nil {
		if rq, ok := storedproc.Rewrite(query); ok {
			if s, sq, srest, rerr := p.Parser.ParseWithOptions(ctx, compat.KeepLikeEscapes(rq), delimiter, multi, options); rerr == nil {
				stmt, q, rest, err = s, sq, srest, nil
			}
		}
	}
	noteAliasSpellings(ctx, stmt)
	return p.qualifyCalls(storedproc.ForGMS(p.provider.generatedDefaults(ctx, compat.RewriteParsed(stmt)))), q, rest, err
}

// ParseOneWithOptions implements sql.Parser. The index it returns is into
// the rewritten query, so a query is rewritten only when it has a
// backslash and that is the only statement (the handler's callers use
// the index to find the next statement of a multi-statement query).
func (p literalParser) ParseOneWithOptions(ctx context.Context, query string, options ast.ParserOptions) (ast.Statement, int, error) {
	q := compat.KeepLikeEscapes(query)
	if len(q) == len(query) {
		stmt, n, err := p.Parser.ParseOneWithOptions(ctx, query, options)
		if err != nil {
			// A stored program with GET DIAGNOSTICS or DO, the only
			// statement (the index is into the rewritten text).
			if rq, ok := storedproc.Rewrite(query); ok {
				if s, _, rerr := p.Parser.ParseOneWithOptions(ctx, rq, options); rerr == nil {
					stmt, n, err = s, len(query), nil
				}
			}
		}
		noteAliasSpellings(ctx, stmt)
		return p.qualifyCalls(storedproc.ForGMS(p.provider.generatedDefaults(ctx, compat.RewriteParsed(stmt)))), n, err
	}
	stmt, _, err := p.Parser.ParseOneWithOptions(ctx, q, options)
	noteAliasSpellings(ctx, stmt)
	return p.qualifyCalls(storedproc.ForGMS(p.provider.generatedDefaults(ctx, compat.RewriteParsed(stmt)))), len(query), err
}

// qualifyCalls renames the calls of db.f(...) in stmt for the stored
// functions' provider (storedproc.QualifyCalls), when any database has a
// stored function.
func (p literalParser) qualifyCalls(stmt ast.Statement) ast.Statement {
	if p.provider != nil {
		if c := p.provider.catalogs.Cached(); c != nil && hasFunctions(c) {
			storedproc.QualifyCalls(stmt)
		}
	}
	return stmt
}
