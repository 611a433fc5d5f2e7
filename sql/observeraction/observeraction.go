package observeraction

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/dolthub/vitess/go/mysql"
	"github.com/dolthub/vitess/go/vt/sqlparser"

	"github.com/percdb/percdb/sql/catalog"
)

// A built-in observer action (ADMIN WATCH ... DO): the SQL that every SQL
// node runs, in the observer's own transaction, for each row a
// notification names (package sql's observeractions.go runs them). This file parses
// and checks the action's text.
//
//	action := statement | BEGIN statement; [statement; ...] END
//
// Each statement is an INSERT, REPLACE, UPDATE or DELETE; NEW.column
// stands for the notified row's column: its value after the change, or,
// when the change deleted the row, its value before for the primary key's
// columns and NULL for the others (as MySQL's triggers read NEW).

// Action is a parsed action.
type Action struct {
	// Stmts are its statements, in the order they run.
	Stmts []Stmt
}

// Stmt is one statement of an action: its text with each NEW.column
// replaced by a bind variable :new_<i>, and the column each stands for.
type Stmt struct {
	// Text is the statement to run.
	Text string
	// Columns[i] is the column (as written, matched case-insensitively)
	// of the bind variable NewBind(i).
	Columns []string
}

// NewBind names the bind variable of the i-th NEW reference of a
// statement.
func NewBind(i int) string { return "new_" + strconv.Itoa(i) }

// actionSyntaxHint is the grammar an action error recalls.
const actionSyntaxHint = "ADMIN WATCH [db.]table [(column, ...)] FOR OBSERVER name DO statement, or DO BEGIN statement; ... END"

// Parse parses the text after DO. Errors are MySQL's: 1064
// for what does not parse, 1235 for a statement an action may not run.
func Parse(text string) (*Action, error) {
	body := strings.TrimSpace(text)
	body = strings.TrimSpace(strings.TrimRight(body, "; \t\r\n"))
	inner, block := beginEndBody(body)
	if !block {
		inner = body
	}
	pieces, err := splitAction(inner)
	if err != nil {
		return nil, err
	}
	if !block && len(pieces) > 1 {
		return nil, errSyntax("several statements after DO must be enclosed in BEGIN ... END: " + actionSyntaxHint)
	}
	a := &Action{}
	for _, p := range pieces {
		if strings.TrimSpace(p) == "" {
			continue
		}
		st, err := rewriteNew(p)
		if err != nil {
			return nil, err
		}
		parsed, err := sqlparser.Parse(st.Text)
		if err != nil {
			return nil, mysql.NewSQLError(mysql.ERParseError, mysql.SSClientError, "observer action %q: %v", strings.TrimSpace(p), err)
		}
		switch parsed.(type) {
		case *sqlparser.Insert, *sqlparser.Update, *sqlparser.Delete:
		default:
			return nil, mysql.NewSQLError(mysql.ERNotSupportedYet, mysql.SSClientError,
				"an observer action runs INSERT, REPLACE, UPDATE and DELETE statements, not %q", strings.TrimSpace(p))
		}
		a.Stmts = append(a.Stmts, st)
	}
	if len(a.Stmts) == 0 {
		return nil, errSyntax("an empty observer action: " + actionSyntaxHint)
	}
	return a, nil
}

// CheckColumns fails with 1054 when a NEW reference names no column of
// def.
func (a *Action) CheckColumns(def *catalog.TableDef) error {
	for _, st := range a.Stmts {
		for _, name := range st.Columns {
			if _, _, ok := def.ColumnByName(name); !ok {
				return mysql.NewSQLError(mysql.ERBadFieldError, mysql.SSBadFieldError, "Unknown column '%s' in 'NEW'", name)
			}
		}
	}
	return nil
}

// beginEndBody returns what lies between BEGIN and END when body is a
// BEGIN ... END block.
func beginEndBody(body string) (string, bool) {
	if len(body) < len("BEGIN END") || !strings.EqualFold(body[:5], "begin") || !isSpace(body[5]) {
		return "", false
	}
	end := len(body) - 3
	if !strings.EqualFold(body[end:], "end") || !isSpace(body[end-1]) && body[end-1] != ';' {
		return "", false
	}
	return body[5:end], true
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// actionScanner walks an action's text a token at a time, skipping
// string literals, quoted identifiers and comments, so that what it finds
// (semicolons, NEW references) is SQL and not text inside them.
type actionScanner struct {
	s   string
	pos int
}

// skipQuoted skips the quoted text that starts at pos (a quote q), with
// doubled quotes and, except in identifiers, backslash escapes.
func (sc *actionScanner) skipQuoted(q byte) error {
	start := sc.pos
	sc.pos++
	for sc.pos < len(sc.s) {
		c := sc.s[sc.pos]
		switch {
		case c == '\\' && q != '`':
			sc.pos += 2
			continue
		case c == q && sc.pos+1 < len(sc.s) && sc.s[sc.pos+1] == q:
			sc.pos += 2
			continue
		case c == q:
			sc.pos++
			return nil
		}
		sc.pos++
	}
	return errSyntax(fmt.Sprintf("observer action: unterminated quote from %q", sc.s[start:]))
}

// skipComment skips a comment at pos, reporting whether there was one.
func (sc *actionScanner) skipComment() (bool, error) {
	rest := sc.s[sc.pos:]
	switch {
	case strings.HasPrefix(rest, "#"), strings.HasPrefix(rest, "-- "), strings.HasPrefix(rest, "--\t"), rest == "--":
		if i := strings.IndexByte(rest, '\n'); i >= 0 {
			sc.pos += i + 1
		} else {
			sc.pos = len(sc.s)
		}
		return true, nil
	case strings.HasPrefix(rest, "/*"):
		i := strings.Index(rest[2:], "*/")
		if i < 0 {
			return false, errSyntax("observer action: unterminated comment")
		}
		sc.pos += i + 4
		return true, nil
	}
	return false, nil
}

// skipNonCode skips quoted text and comments at pos, reporting whether it
// skipped anything.
func (sc *actionScanner) skipNonCode() (bool, error) {
	switch c := sc.s[sc.pos]; c {
	case '\'', '"', '`':
		return true, sc.skipQuoted(c)
	}
	return sc.skipComment()
}

// splitAction cuts s at its semicolons outside quotes and comments.
func splitAction(s string) ([]string, error) {
	sc := &actionScanner{s: s}
	var out []string
	from := 0
	for sc.pos < len(s) {
		skipped, err := sc.skipNonCode()
		if err != nil {
			return nil, err
		}
		if skipped {
			continue
		}
		if s[sc.pos] == ';' {
			out = append(out, s[from:sc.pos])
			from = sc.pos + 1
		}
		sc.pos++
	}
	if rest := s[from:]; strings.TrimSpace(rest) != "" || len(out) == 0 {
		out = append(out, rest)
	}
	return out, nil
}

func isIdentByte(c byte) bool {
	return c == '_' || c == '$' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= 0x80
}

// rewriteNew replaces each NEW.column of stmt (NEW in any case, the
// column bare or in backquotes, spaces allowed around the dot) with a bind
// variable.
func rewriteNew(stmt string) (Stmt, error) {
	sc := &actionScanner{s: stmt}
	var b strings.Builder
	var st Stmt
	from := 0
	for sc.pos < len(stmt) {
		skipped, err := sc.skipNonCode()
		if err != nil {
			return st, err
		}
		if skipped {
			continue
		}
		c := stmt[sc.pos]
		if !isIdentByte(c) {
			sc.pos++
			continue
		}
		start := sc.pos
		for sc.pos < len(stmt) && isIdentByte(stmt[sc.pos]) {
			sc.pos++
		}
		if !strings.EqualFold(stmt[start:sc.pos], "new") || start > 0 && stmt[start-1] == '.' {
			continue
		}
		col, end, ok := columnAfterDot(stmt, sc.pos)
		if !ok {
			continue
		}
		b.WriteString(stmt[from:start])
		b.WriteString(":" + NewBind(len(st.Columns)))
		st.Columns = append(st.Columns, col)
		from, sc.pos = end, end
	}
	b.WriteString(stmt[from:])
	st.Text = strings.TrimSpace(b.String())
	return st, nil
}

// columnAfterDot reads ". column" at i (spaces allowed around the dot, the
// column bare or backquoted) and returns the column and where it ends.
func columnAfterDot(s string, i int) (string, int, bool) {
	skip := func(i int) int {
		for i < len(s) && isSpace(s[i]) {
			i++
		}
		return i
	}
	i = skip(i)
	if i >= len(s) || s[i] != '.' {
		return "", 0, false
	}
	i = skip(i + 1)
	if i < len(s) && s[i] == '`' {
		sc := &actionScanner{s: s, pos: i}
		if err := sc.skipQuoted('`'); err != nil {
			return "", 0, false
		}
		return strings.ReplaceAll(s[i+1:sc.pos-1], "``", "`"), sc.pos, true
	}
	j := i
	for j < len(s) && isIdentByte(s[j]) {
		j++
	}
	if j == i {
		return "", 0, false
	}
	return s[i:j], j, true
}

// errSyntax is MySQL's error 1064 for an action that does not parse:
// usage says what it expects.
func errSyntax(usage string) error {
	return mysql.NewSQLError(mysql.ERParseError, mysql.SSClientError, "You have an error in your SQL syntax; %s", usage)
}
