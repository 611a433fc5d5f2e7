package compat

import (
	"context"
	"errors"
	"fmt"
	"strings"

	gsql "github.com/dolthub/go-mysql-server/sql"
	ast "github.com/dolthub/vitess/go/vt/sqlparser"
)

// MySQL syntax the vitess grammar GMS parses with rejects (1064, or 1105
// for a prepared statement):
//
//   - the compound INTERVAL units (HOUR_MINUTE, DAY_SECOND, YEAR_MONTH,
//     ...) in an expression, DATE_ADD(d, INTERVAL '1:30' HOUR_MINUTE) or
//     d + INTERVAL '1-2' YEAR_MONTH: the grammar takes an identifier
//     there and the compound units are reserved words (EXTRACT, which
//     has a rule of its own, takes them);
//   - NTH_VALUE(x, n) FROM FIRST and the null treatment RESPECT NULLS of
//     NTH_VALUE, FIRST_VALUE, LAST_VALUE, LEAD and LAG, which MySQL
//     takes and which change nothing; their FROM LAST and IGNORE NULLS,
//     which MySQL refuses with 1235;
//   - the column type YEAR(4) (MySQL 8 takes it as YEAR, deprecated),
//     which every dump of MariaDB and of MySQL before 8.0.19 writes for
//     a YEAR column: `yr` year(4) DEFAULT NULL. The (4) is blanked out
//     after a column's name (a type), never after an expression's
//     keyword (YEAR(4) there is the function);
//   - a version comment inside another (nestedcomments.go);
//   - the locking clauses FOR UPDATE [OF t] NOWAIT and FOR SHARE
//     (lockclause.go);
//   - a comparison with ANY, SOME or ALL of a subquery: x = ANY (SELECT
//     ...) and x = SOME (...) are x IN (...), x <> ALL (...) is x NOT
//     IN (...), exactly (NULLs included); the other comparisons, which
//     GMS cannot evaluate, an expression of percdb's (quantified.go),
//     <=> ANY 1235;
//   - GROUP BY ... WITH ROLLUP, which GMS cannot evaluate either: a
//     UNION ALL of its levels (rollup.go);
//   - the ODBC units of TIMESTAMPDIFF and TIMESTAMPADD (SQL_TSI_MONTH,
//     ...), written as the units they name (sqlTSIUnits);
//   - the function INTERVAL(N, N1, ...) (intervalfunc.go);
//   - SUBSTRING(s FROM n [FOR m]) but on a column (and SUBSTR, MID):
//     FROM and FOR become commas;
//   - x IS [NOT] UNKNOWN, which is x IS [NOT] NULL.
//   - N'...' and n'...', a string in the national character set: MySQL
//     8's is utf8mb3, so it is _utf8mb3'...'.
//
// A statement that parses is refused with MySQL's 1235 when it has an
// IN subquery with a LIMIT (x IN (SELECT c ... LIMIT 2)), as MySQL 8
// refuses it; GMS ran it (found by the difftest's application run).
//
// SyntaxParser wraps GMS's parser. When a statement fails to parse it
// writes such a unit after an expression in backquotes (an identifier,
// which the grammar takes and GMS's INTERVAL reads by its name) and
// blanks those clauses out, and parses again; if that parses, the
// statement is that one (FROM LAST and IGNORE NULLS are then 1235), else
// the first error stands. A statement that parses is never rewritten, so
// the rewrite costs nothing on the way of an ordinary query. The column
// names of the select list (the text of each item) are those of the
// statement as written.

// compoundIntervalUnits are MySQL's INTERVAL units made of two or more
// fields, by upper-case name.
var compoundIntervalUnits = map[string]bool{
	"YEAR_MONTH": true, "DAY_HOUR": true, "DAY_MINUTE": true, "DAY_SECOND": true, "DAY_MICROSECOND": true,
	"HOUR_MINUTE": true, "HOUR_SECOND": true, "HOUR_MICROSECOND": true, "MINUTE_SECOND": true,
	"MINUTE_MICROSECOND": true, "SECOND_MICROSECOND": true,
}

// nullTreatmentFunctions are the window functions that take RESPECT
// NULLS or IGNORE NULLS after their arguments.
var nullTreatmentFunctions = map[string]bool{
	"NTH_VALUE": true, "FIRST_VALUE": true, "LAST_VALUE": true, "LEAD": true, "LAG": true,
}

// SyntaxParser is GMS's parser with the rewrites above on a parse error.
type SyntaxParser struct {
	gsql.Parser
	// Columns, when set, gives the columns of the tables a rollup's
	// select list names with * (rollup.go); without it such a rollup
	// is 1235.
	Columns TableColumns
}

// TableColumns returns the names of the columns of table table of
// database db (the session's current one when db is empty), in order:
// none (nil, nil) for a name it cannot expand (a view), an error when
// ctx's session sees no table or view of that name (GMS's 1146).
type TableColumns func(ctx context.Context, db, table string) ([]string, error)

// columnsFor returns p.Columns for the statement ctx parses, nil
// without it.
func (p SyntaxParser) columnsFor(ctx context.Context) func(db, table string) ([]string, error) {
	if p.Columns == nil || ctx == nil {
		return nil
	}
	return func(db, table string) ([]string, error) { return p.Columns(ctx, db, table) }
}

// ParseSimple implements sql.Parser.
func (p SyntaxParser) ParseSimple(query string) (ast.Statement, error) {
	if lit, ok, err := typedLiterals(query); err != nil {
		return nil, err
	} else if ok {
		stmt, err := p.ParseSimple(lit.text)
		return lit.restoreNames(stmt), err
	}
	stmt, err := p.Parser.ParseSimple(query)
	if err == nil {
		if err := limitInSubquery(stmt, query); err != nil {
			return nil, err
		}
		return compoundIntervals(stmt, query), nil
	}
	fix, ok := rewriteSyntax(query)
	if !ok {
		return stmt, err
	}
	fixed, ferr := p.Parser.ParseSimple(fix.text)
	if ferr != nil {
		return stmt, fixError(err, ferr)
	}
	if fix.unsupported != "" {
		return nil, errNotSupportedYet(fix.unsupported)
	}
	return fix.finish(fixed, nil)
}

// Parse implements sql.Parser.
func (p SyntaxParser) Parse(ctx *gsql.Context, query string, multi bool) (ast.Statement, string, string, error) {
	if lit, ok, err := typedLiterals(query); err != nil {
		return nil, query, "", err
	} else if ok {
		stmt, parsed, rest, err := p.Parse(ctx, lit.text, multi)
		parsed, rest = lit.originalParts(query, parsed, rest, ';')
		return lit.restoreNames(stmt), parsed, rest, err
	}
	stmt, parsed, rest, err := p.Parser.Parse(ctx, query, multi)
	if err == nil {
		if err := limitInSubquery(stmt, parsed); err != nil {
			return nil, parsed, rest, err
		}
		if err := groupingOutsideRollup(stmt, parsed); err != nil {
			return nil, parsed, rest, err
		}
		return compoundIntervals(stmt, query), parsed, rest, nil
	}
	fix, ok := rewriteSyntax(query)
	if !ok {
		return stmt, parsed, rest, err
	}
	fixed, fparsed, frest, ferr := p.Parser.Parse(ctx, fix.text, multi)
	if ferr != nil {
		return stmt, parsed, rest, fixError(err, ferr)
	}
	if fix.unsupported != "" {
		return nil, parsed, rest, errNotSupportedYet(fix.unsupported)
	}
	fparsed, frest = fix.originalParts(query, fparsed, frest, ';')
	if fixed, err = fix.finish(fixed, p.columnsFor(ctx)); err != nil {
		return nil, parsed, rest, err
	}
	return fixed, fparsed, frest, nil
}

// ParseWithOptions implements sql.Parser.
func (p SyntaxParser) ParseWithOptions(ctx context.Context, query string, delimiter rune, multi bool, options ast.ParserOptions) (ast.Statement, string, string, error) {
	if lit, ok, err := typedLiterals(query); err != nil {
		return nil, query, "", err
	} else if ok {
		stmt, parsed, rest, err := p.ParseWithOptions(ctx, lit.text, delimiter, multi, options)
		parsed, rest = lit.originalParts(query, parsed, rest, delimiter)
		return lit.restoreNames(stmt), parsed, rest, err
	}
	stmt, parsed, rest, err := p.Parser.ParseWithOptions(ctx, query, delimiter, multi, options)
	if err == nil {
		if err := limitInSubquery(stmt, parsed); err != nil {
			return nil, parsed, rest, err
		}
		if err := groupingOutsideRollup(stmt, parsed); err != nil {
			return nil, parsed, rest, err
		}
		return compoundIntervals(stmt, query), parsed, rest, nil
	}
	fix, ok := rewriteSyntax(query)
	if !ok {
		return stmt, parsed, rest, err
	}
	fixed, fparsed, frest, ferr := p.Parser.ParseWithOptions(ctx, fix.text, delimiter, multi, options)
	if ferr != nil {
		return stmt, parsed, rest, fixError(err, ferr)
	}
	if fix.unsupported != "" {
		return nil, parsed, rest, errNotSupportedYet(fix.unsupported)
	}
	fparsed, frest = fix.originalParts(query, fparsed, frest, delimiter)
	if fixed, err = fix.finish(fixed, p.columnsFor(ctx)); err != nil {
		return nil, parsed, rest, err
	}
	return fixed, fparsed, frest, nil
}

// ParseOneWithOptions implements sql.Parser. The index it returns is
// into query.
func (p SyntaxParser) ParseOneWithOptions(ctx context.Context, query string, options ast.ParserOptions) (ast.Statement, int, error) {
	if lit, ok, err := typedLiterals(query); err != nil {
		return nil, 0, err
	} else if ok {
		stmt, n, err := p.ParseOneWithOptions(ctx, lit.text, options)
		return lit.restoreNames(stmt), lit.original(n), err
	}
	stmt, n, err := p.Parser.ParseOneWithOptions(ctx, query, options)
	if err == nil {
		if err := limitInSubquery(stmt, query); err != nil {
			return nil, n, err
		}
		if err := groupingOutsideRollup(stmt, query); err != nil {
			return nil, n, err
		}
		return compoundIntervals(stmt, query), n, nil
	}
	fix, ok := rewriteSyntax(query)
	if !ok {
		return stmt, n, err
	}
	fixed, fn, ferr := p.Parser.ParseOneWithOptions(ctx, fix.text, options)
	if ferr != nil {
		return stmt, n, fixError(err, ferr)
	}
	if fix.unsupported != "" {
		return nil, n, errNotSupportedYet(fix.unsupported)
	}
	if fixed, err = fix.finish(fixed, p.columnsFor(ctx)); err != nil {
		return nil, n, err
	}
	return fixed, fix.original(fn), nil
}

// finish returns the statement parsed from f's text as the client's:
// the quantified comparisons' and WITH ROLLUP's stand-ins rewritten
// (quantified.go, rollup.go), the compound INTERVAL units read, the
// select items named as the client wrote them. columns gives a table's
// columns for a rollup of * (nil: none).
func (f *syntaxFix) finish(stmt ast.Statement, columns func(db, table string) ([]string, error)) (ast.Statement, error) {
	stmt, err := quantifiedComparisons(stmt)
	if err != nil {
		return nil, err
	}
	stmt, err = rollupSelects(f.restoreNames(compoundIntervals(stmt, f.text)), columns)
	if err != nil {
		return nil, err
	}
	return stmt, groupingOutsideRollup(stmt, f.text)
}

// fixError is the error of a statement whose rewrite did not parse
// either (ferr): the first error, err, unless the rewrite is empty (a
// comment MySQL does not run, such as MariaDB's /*M! ... */), which is
// the parser's ErrEmpty, as for any statement that is only a comment.
func fixError(err, ferr error) error {
	if errors.Is(ferr, ast.ErrEmpty) {
		return ferr
	}
	return err
}

// errNotSupportedYet is MySQL's 1235 for what. GMS wraps a parser's
// error in one of its own, so it is a plain error whose message the
// error mapping knows (errors.go).
func errNotSupportedYet(what string) error {
	return fmt.Errorf("This version of MySQL doesn't yet support '%s'", what)
}

// syntaxFix is a statement rewritten by rewriteSyntax.
type syntaxFix struct {
	query, text string
	// orig maps each byte offset of text (and len(text)) to the offset
	// of the query's byte it came from (an inserted byte: the next one).
	orig []int
	// unsupported names the first clause MySQL refuses (1235), empty if
	// none.
	unsupported string
}

// original returns the offset into the query of offset i of the text.
func (f *syntaxFix) original(i int) int {
	if i < 0 {
		return i
	}
	if i >= len(f.orig) {
		return f.orig[len(f.orig)-1] + i - (len(f.orig) - 1)
	}
	return f.orig[i]
}

// originalParts returns the statement GMS parsed and the remainder
// (parsed and rest, parts of the text) as parts of query, as GMS's
// parser cuts them (delimiter ends a statement).
func (f *syntaxFix) originalParts(query, parsed, rest string, delimiter rune) (string, string) {
	if rest == "" {
		return gsql.RemoveSpaceAndDelimiter(query, delimiter), ""
	}
	end := strings.LastIndex(f.text, rest)
	if end < 0 {
		return parsed, rest
	}
	o := f.original(end)
	return gsql.RemoveSpaceAndDelimiter(query[:o], delimiter), query[o:]
}

// restoreNames writes the select items' text (their column names) as the
// query has it, without the backquotes and blanks rewriteSyntax made.
func (f *syntaxFix) restoreNames(stmt ast.Statement) ast.Statement {
	if stmt == nil {
		return stmt
	}
	_ = ast.Walk(func(node ast.SQLNode) (bool, error) {
		a, ok := node.(*ast.AliasedExpr)
		if !ok || a.InputExpression == "" {
			return true, nil
		}
		if i := strings.Index(f.text, a.InputExpression); i >= 0 {
			a.InputExpression = f.query[f.original(i):f.original(i+len(a.InputExpression))]
		}
		return true, nil
	}, stmt)
	return stmt
}

// syntaxToken is a token of the query as rewriteSyntax reads it: a word,
// or one byte of punctuation; strings, quoted names and comments are
// skipped.
type syntaxToken struct {
	start, end int
	word       string // upper case; empty for punctuation
	punct      byte
}

// rewriteSyntax returns query rewritten as described at the top of the
// file, and false when nothing in it is to be rewritten.
func rewriteSyntax(original string) (*syntaxFix, bool) {
	// Nested version comments first (nestedcomments.go); unnested maps
	// the offsets of query into original's.
	query, unnested, changed := unnestVersionComments(original)
	toks := syntaxTokens(query)
	quote := map[int]bool{}     // tokens to write in backquotes
	blank := map[int]bool{}     // tokens to blank out
	replace := map[int]string{} // tokens to write as other text
	var unsupported string
	unsupport := func(what string) {
		if unsupported == "" {
			unsupported = what
		}
	}
	// opened[i] is the index of the token before the '(' of the group
	// open at depth i (-1 when none).
	var opened []int
	for i, t := range toks {
		switch {
		case t.punct == '(':
			before := -1
			if i > 0 && toks[i-1].word != "" {
				before = i - 1
			}
			opened = append(opened, before)
		case t.punct == ')':
			if len(opened) == 0 {
				continue
			}
			fn := opened[len(opened)-1]
			opened = opened[:len(opened)-1]
			if fn < 0 || !nullTreatmentFunctions[toks[fn].word] {
				continue
			}
			j := i + 1
			if toks[fn].word == "NTH_VALUE" && j+1 < len(toks) && toks[j].word == "FROM" && (toks[j+1].word == "FIRST" || toks[j+1].word == "LAST") {
				if toks[j+1].word == "LAST" && unsupported == "" {
					unsupported = "FROM LAST"
				}
				blank[j], blank[j+1] = true, true
				j += 2
			}
			if j+1 < len(toks) && (toks[j].word == "RESPECT" || toks[j].word == "IGNORE") && toks[j+1].word == "NULLS" {
				if toks[j].word == "IGNORE" && unsupported == "" {
					unsupported = "IGNORE NULLS"
				}
				blank[j], blank[j+1] = true, true
			}
		case t.word == "WITH" && i+1 < len(toks) && toks[i+1].word == "ROLLUP":
			// a last grouping item the grammar takes (rollup.go)
			replace[i] = ", " + rollupMarker + "()"
			blank[i+1] = true
		case (t.word == "ANY" || t.word == "SOME" || t.word == "ALL") && i+2 < len(toks) && toks[i+1].punct == '(' &&
			(toks[i+2].word == "SELECT" || toks[i+2].word == "WITH" || toks[i+2].punct == '('):
			op, first := comparisonBefore(query, toks, i)
			switch {
			case op == "":
				continue
			case op == "=" && t.word != "ALL":
				replace[first] = "IN"
			case (op == "<>" || op == "!=") && t.word == "ALL":
				replace[first] = "NOT IN"
				blank[first+1] = true
			case op == "<=>":
				unsupport(t.word + " subquery with " + op)
			default:
				// a stand-in the grammar takes (quantified.go)
				if end := closingParen(toks, i+1); end > 0 {
					marker := quantifiedAnyMarker
					if t.word == "ALL" {
						marker = quantifiedAllMarker
					}
					replace[i] = marker + "("
					replace[end] = "))"
					continue
				}
				unsupport(t.word + " subquery with " + op)
			}
			blank[i] = true
		case t.word == "YEAR" && i+3 < len(toks) && toks[i+1].punct == '(' && toks[i+2].word == "4" && toks[i+3].punct == ')' && afterColumnName(query, toks, i):
			blank[i+1], blank[i+2], blank[i+3] = true, true, true
		case sqlTSIUnits[t.word] != "" && i >= 2 && toks[i-1].punct == '(' && (toks[i-2].word == "TIMESTAMPDIFF" || toks[i-2].word == "TIMESTAMPADD"):
			replace[i] = sqlTSIUnits[t.word] // bitops.go
		case t.word == "INTERVAL" && i+1 < len(toks) && toks[i+1].punct == '(' && notQualified(toks, i) && len(topLevel(toks, i+1, ",")) > 0:
			// INTERVAL(N, N1, ...), the function (intervalfunc.go)
			replace[i] = intervalIndexName + "("
			blank[i+1] = true
		case substringNames[t.word] && i+1 < len(toks) && toks[i+1].punct == '(' && notQualified(toks, i):
			// SUBSTRING(s FROM n FOR m) is SUBSTRING(s, n, m)
			for _, j := range topLevel(toks, i+1, "FROM", "FOR") {
				replace[j] = ","
			}
		case t.word == "N" && t.end < len(query) && query[t.end] == '\'':
			// N'...' (typedliterals.go), for COM_STMT_PREPARE, whose
			// statement vitess parses before percdb's parser
			replace[i] = nationalIntroducer
		case t.word == "UNKNOWN" && i > 0 && (toks[i-1].word == "IS" || toks[i-1].word == "NOT" && i > 1 && toks[i-2].word == "IS"):
			// x IS [NOT] UNKNOWN is x IS [NOT] NULL (x a truth value)
			replace[i] = "NULL"
		case compoundIntervalUnits[t.word]:
			// after an expression: not EXTRACT(unit FROM ...), nor a
			// qualified name's part
			if i > 0 && toks[i-1].punct != '(' && toks[i-1].punct != '.' && toks[i-1].punct != ',' {
				quote[i] = true
			}
		}
	}
	// @name := expr inside expressions (assignvar.go).
	closeBefore := assignments(query, toks, replace, blank)
	// Locking clauses GMS's grammar does not know (lockclause.go):
	// blankTo[i] blanks from token i's start to a byte offset.
	blankTo := map[int]int{}
	for _, c := range lockClauses(query, toks) {
		if c.ofEnd > 0 {
			blankTo[c.forAt+2] = c.ofEnd
		}
		switch {
		case c.share:
			blank[c.forAt], blank[c.forAt+1] = true, true
			if c.wait == LockSkipLocked {
				blank[c.waitAt], blank[c.waitAt+1] = true, true
			} else if c.wait == LockNoWait {
				blank[c.waitAt] = true
			}
		case c.wait == LockNoWait:
			blank[c.waitAt] = true
		}
	}
	if len(quote) == 0 && len(blank) == 0 && len(blankTo) == 0 && len(replace) == 0 && !changed {
		return nil, false
	}
	fix := &syntaxFix{query: original, unsupported: unsupported}
	var b strings.Builder
	next := 0 // the next byte of query to copy
	copyTo := func(end int) {
		for ; next < end; next++ {
			b.WriteByte(query[next])
			fix.orig = append(fix.orig, next)
		}
	}
	for i, t := range toks {
		if n := closeBefore[i]; n > 0 {
			copyTo(t.start)
			for ; n > 0; n-- {
				b.WriteByte(')')
				fix.orig = append(fix.orig, t.start)
			}
		}
		switch {
		case replace[i] != "":
			copyTo(t.start)
			b.WriteByte(' ')
			fix.orig = append(fix.orig, t.start)
			for j := 0; j < len(replace[i]); j++ {
				b.WriteByte(replace[i][j])
				fix.orig = append(fix.orig, t.start)
			}
			// the byte after the replacement is the token's end (a
			// name that ends with it ends there)
			b.WriteByte(' ')
			fix.orig = append(fix.orig, t.end)
			next = t.end
		case quote[i]:
			copyTo(t.start)
			b.WriteByte('`')
			fix.orig = append(fix.orig, t.start)
			copyTo(t.end)
			b.WriteByte('`')
			fix.orig = append(fix.orig, t.end)
		case blank[i]:
			copyTo(t.start)
			for ; next < t.end; next++ {
				b.WriteByte(' ')
				fix.orig = append(fix.orig, next)
			}
		case blankTo[i] > 0:
			copyTo(t.start)
			for ; next < blankTo[i]; next++ {
				b.WriteByte(' ')
				fix.orig = append(fix.orig, next)
			}
		}
	}
	copyTo(len(query))
	if n := closeBefore[len(toks)]; n > 0 {
		// after a line break: the statement may end in a -- comment
		b.WriteString("\n" + strings.Repeat(")", n))
		for ; n >= 0; n-- {
			fix.orig = append(fix.orig, len(query))
		}
	}
	fix.orig = append(fix.orig, len(query))
	fix.text = b.String()
	if changed {
		for i, o := range fix.orig {
			fix.orig[i] = unnested[o]
		}
	}
	return fix, true
}

// substringNames are SUBSTRING and its synonyms, which take FROM and
// FOR in place of commas.
var substringNames = map[string]bool{"SUBSTRING": true, "SUBSTR": true, "MID": true}

// notQualified reports whether token i is not the part of a qualified
// name after a dot (t.interval, a column's name).
func notQualified(toks []syntaxToken, i int) bool {
	return i == 0 || toks[i-1].punct != '.'
}

// topLevel returns the indexes of the tokens inside the parenthesis
// opened at token open, outside any nested one, that are one of what
// (a word, or one byte of punctuation).
func topLevel(toks []syntaxToken, open int, what ...string) []int {
	end := closingParen(toks, open)
	var out []int
	depth := 0
	for j := open + 1; j < end; j++ {
		switch toks[j].punct {
		case '(':
			depth++
			continue
		case ')':
			depth--
			continue
		}
		if depth > 0 {
			continue
		}
		for _, w := range what {
			if toks[j].word == w || toks[j].punct != 0 && string(toks[j].punct) == w {
				out = append(out, j)
			}
		}
	}
	return out
}

// comparisonBefore returns the comparison operator right before token i
// (=, <>, !=, <, <=, >, >=, written without a space inside) and the
// index of its first token; "" when there is none.
func comparisonBefore(query string, toks []syntaxToken, i int) (string, int) {
	// The run of operator bytes, with no space between them, that ends
	// right before token i.
	j := i
	for j > 0 && toks[j-1].punct != 0 && strings.IndexByte("<>=!", toks[j-1].punct) >= 0 && (j == i || toks[j-1].end == toks[j].start) {
		j--
	}
	if j == i {
		return "", 0
	}
	switch op := query[toks[j].start:toks[i-1].end]; op {
	case "=", "<>", "!=", "<", "<=", ">", ">=", "<=>":
		return op, j
	}
	return "", 0
}

// closingParen returns the index of the ')' closing the '(' at toks[open],
// 0 when it is not closed.
func closingParen(toks []syntaxToken, open int) int {
	depth := 0
	for j := open; j < len(toks); j++ {
		switch toks[j].punct {
		case '(':
			depth++
		case ')':
			depth--
			if depth == 0 {
				return j
			}
		}
	}
	return 0
}

// limitInSubquery returns MySQL's 1235 for a statement with an IN or
// NOT IN subquery that has a LIMIT, which MySQL 8 refuses ("LIMIT &
// IN/ALL/ANY/SOME subquery"); nil otherwise, and at once for a
// statement with no LIMIT.
func limitInSubquery(stmt ast.Statement, query string) error {
	if stmt == nil || !containsFoldASCII(query, "limit") {
		return nil
	}
	var found bool
	_ = ast.Walk(func(node ast.SQLNode) (bool, error) {
		c, ok := node.(*ast.ComparisonExpr)
		if !ok || found || (c.Operator != ast.InStr && c.Operator != ast.NotInStr) {
			return !found, nil
		}
		sq, ok := c.Right.(*ast.Subquery)
		if !ok {
			return true, nil
		}
		switch s := sq.Select.(type) {
		case *ast.Select:
			found = s.Limit != nil
		case *ast.SetOp:
			found = s.Limit != nil
		}
		return !found, nil
	}, stmt)
	if found {
		return errNotSupportedYet("LIMIT & IN/ALL/ANY/SOME subquery")
	}
	return nil
}

// expressionKeywords are the words after which a name is an expression
// (a function call), not a column's type.
var expressionKeywords = map[string]bool{
	"SELECT": true, "WHERE": true, "AND": true, "OR": true, "NOT": true, "XOR": true, "ON": true, "BY": true,
	"WHEN": true, "THEN": true, "ELSE": true, "SET": true, "VALUES": true, "VALUE": true, "HAVING": true,
	"DEFAULT": true, "RETURN": true, "IN": true, "IS": true, "LIKE": true, "BETWEEN": true, "DIV": true,
	"MOD": true, "CASE": true, "DISTINCT": true, "ALL": true, "INTERVAL": true, "BINARY": true, "AS": true,
}

// afterColumnName reports whether token i follows a column's name: a
// quoted name, or a word that is not a keyword of expressions.
func afterColumnName(query string, toks []syntaxToken, i int) bool {
	j := toks[i].start
	for j > 0 && strings.IndexByte(" \t\n\r\f", query[j-1]) >= 0 {
		j--
	}
	switch {
	case j == 0:
		return false
	case query[j-1] == '`':
		return true
	}
	return i > 0 && toks[i-1].end == j && toks[i-1].word != "" && !expressionKeywords[toks[i-1].word]
}

// syntaxTokens returns the words and punctuation of query, skipping
// quoted strings and names, comments and spaces. A /*! ... */ comment's
// text is read as statement text, as MySQL runs it.
func syntaxTokens(query string) []syntaxToken {
	var toks []syntaxToken
	for i := 0; i < len(query); {
		c := query[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f':
			i++
		case c == '\'' || c == '"' || c == '`':
			i = skipQuoted(query, i)
		case c == '#' || c == '-' && strings.HasPrefix(query[i:], "-- "):
			end := strings.IndexByte(query[i:], '\n')
			if end < 0 {
				return toks
			}
			i += end + 1
		case c == '/' && strings.HasPrefix(query[i:], "/*!"):
			i += 3
			for i < len(query) && query[i] >= '0' && query[i] <= '9' {
				i++
			}
		case c == '/' && strings.HasPrefix(query[i:], "/*"):
			end := strings.Index(query[i+2:], "*/")
			if end < 0 {
				return toks
			}
			i += 2 + end + 2
		case c == '*' && strings.HasPrefix(query[i:], "*/"):
			i += 2 // the end of a /*! comment
		case isTokenByte(c):
			start := i
			for i < len(query) && isTokenByte(query[i]) {
				i++
			}
			toks = append(toks, syntaxToken{start: start, end: i, word: strings.ToUpper(query[start:i])})
		default:
			toks = append(toks, syntaxToken{start: i, end: i + 1, punct: c})
			i++
		}
	}
	return toks
}

// skipQuoted returns the offset after the quoted string or name that
// starts at i: a doubled quote is part of it, and a backslash escapes
// the next byte of a string.
func skipQuoted(query string, i int) int {
	q := query[i]
	for i++; i < len(query); i++ {
		switch c := query[i]; {
		case c == '\\' && q != '`':
			i++
		case c == q:
			if i+1 < len(query) && query[i+1] == q {
				i++
				continue
			}
			return i + 1
		}
	}
	return len(query)
}

// isTokenByte reports whether c can be part of an unquoted word (a
// keyword, name or number); bytes of multi-byte characters are.
func isTokenByte(c byte) bool {
	return c == '_' || c == '$' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= 0x80
}
