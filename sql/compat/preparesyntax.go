package compat

// PrepareSyntax returns the text vitess's grammar takes for query, a
// statement a client prepares (COM_STMT_PREPARE), and true, when query
// has MySQL syntax that grammar refuses and SyntaxParser rewrites (see
// syntax.go: the compound INTERVAL units, RESPECT NULLS, NTH_VALUE's FROM
// FIRST, the quantified comparisons' and WITH ROLLUP's stand-ins, `?`
// parameters kept where the client wrote them); false when it has none, or has a clause MySQL refuses (FROM
// LAST, IGNORE NULLS: SyntaxParser answers those with 1235 when the
// statement is prepared from its own text).
//
// vitess parses a prepared statement itself, to count its parameters,
// before any of percdb's code runs, and answers a statement it cannot
// parse with an error: the text it gets must parse. The statement is
// still prepared and run from the client's text, through SyntaxParser,
// so that its column names are the client's.
func PrepareSyntax(query string) (string, bool) {
	fix, ok := rewriteSyntax(query)
	if !ok || fix.unsupported != "" {
		return "", false
	}
	return fix.text, true
}
