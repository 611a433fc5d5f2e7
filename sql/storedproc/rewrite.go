package storedproc

import (
	"encoding/hex"
	"regexp"
	"strings"

	"github.com/percdb/percdb/sql/compat"
)

// markerPrefix starts the string literal that stands for a statement of a
// stored program that vitess's grammar lacks (GET DIAGNOSTICS, DO); the
// statement's text follows in hexadecimal. The marked statement is
//
//	SELECT 'percdb:stmt:<hex of the statement's text>'
//
// which parses anywhere a statement may be and which GMS's planner
// accepts.
const markerPrefix = "percdb:stmt:"

// marked finds the marked statements of a rewritten text.
var marked = regexp.MustCompile(`SELECT '` + markerPrefix + `([0-9a-f]*)'`)

// Rewrite replaces each GET [CURRENT | STACKED] DIAGNOSTICS and DO
// statement of a stored program's text by its marker (see markerPrefix),
// and reports whether it replaced any. A DO is a statement where it
// follows ';', a label or a word that ends a statement's start (BEGIN,
// THEN, ELSE, LOOP, REPEAT, DO); elsewhere DO is WHILE's. Quoted strings,
// quoted names and comments are left alone.
//
// A CREATE FUNCTION, DROP FUNCTION or SHOW CREATE FUNCTION statement is
// rewritten whole as GMS's statement of a procedure (function.go).
func Rewrite(text string) (string, bool) {
	if q, ok := rewriteFunctionStatement(text); ok {
		return q, true
	}
	var out strings.Builder
	prev := ""  // the last word or punctuation outside strings, upper case
	copied := 0 // text[:copied] is in out
	changed := false
	for i := 0; i < len(text); {
		c := text[i]
		switch {
		case c == '\'' || c == '"' || c == '`':
			i = compat.SkipQuoted(text, i)
			prev = "value"
			continue
		case c == '#' || (c == '-' && strings.HasPrefix(text[i:], "-- ")):
			for i < len(text) && text[i] != '\n' {
				i++
			}
			continue
		case c == '/' && strings.HasPrefix(text[i:], "/*"):
			end := strings.Index(text[i+2:], "*/")
			if end < 0 {
				return text, false
			}
			i += end + 4
			continue
		case c == ' ' || c == '\t' || c == '\r' || c == '\n':
			i++
			continue
		case !compat.IsTokenByte(c):
			prev = string(c)
			i++
			continue
		}
		start := i
		for i < len(text) && compat.IsTokenByte(text[i]) {
			i++
		}
		word := strings.ToUpper(text[start:i])
		isStmt := false
		switch word {
		case "GET":
			next, j := nextWord(text, i)
			if next == "CURRENT" || next == "STACKED" {
				next, _ = nextWord(text, j)
			}
			isStmt = next == "DIAGNOSTICS"
		case "DO":
			switch prev {
			case ";", ":", "BEGIN", "THEN", "ELSE", "LOOP", "REPEAT", "DO":
				isStmt = true
			}
		}
		if !isStmt {
			prev = word
			continue
		}
		end := statementEnd(text, i)
		out.WriteString(text[copied:start])
		out.WriteString("SELECT '" + markerPrefix + hex.EncodeToString([]byte(text[start:end])) + "'")
		copied, i, prev, changed = end, end, "value", true
	}
	if !changed {
		return text, false
	}
	out.WriteString(text[copied:])
	return out.String(), true
}

// Restore returns the text as written of a text GMSText or Rewrite made:
// the markers Rewrite wrote become the statements they stand for.
func Restore(text string) string {
	if orig, ok := original(text); ok {
		return orig
	}
	if !strings.Contains(text, markerPrefix) {
		return text
	}
	return marked.ReplaceAllStringFunc(text, func(m string) string {
		stmt, ok := markedStatement(m[len("SELECT '") : len(m)-1])
		if !ok {
			return m
		}
		return stmt
	})
}

// markedStatement returns the statement a marker literal stands for.
func markedStatement(lit string) (string, bool) {
	if !strings.HasPrefix(lit, markerPrefix) {
		return "", false
	}
	b, err := hex.DecodeString(lit[len(markerPrefix):])
	if err != nil {
		return "", false
	}
	return string(b), true
}

// statementEnd returns the index of the ';' that ends the statement going
// on at i (outside quotes), or the text's length.
func statementEnd(text string, i int) int {
	for i < len(text) {
		switch text[i] {
		case '\'', '"', '`':
			i = compat.SkipQuoted(text, i)
			continue
		case ';':
			return i
		}
		i++
	}
	return i
}

// nextWord returns the next word after i, upper case, and the index past
// it ("" when something else comes first).
func nextWord(text string, i int) (string, int) {
	for i < len(text) && (text[i] == ' ' || text[i] == '\t' || text[i] == '\r' || text[i] == '\n') {
		i++
	}
	start := i
	for i < len(text) && compat.IsTokenByte(text[i]) {
		i++
	}
	return strings.ToUpper(text[start:i]), i
}
