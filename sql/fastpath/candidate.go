package fastpath

import (
	"strings"

	"github.com/percdb/percdb/sql/internal/lexical"
)

// Candidate reports whether query may have a fast shape, judging by
// its text alone, so that the statements that cannot have one skip the
// TiDB lexer and parser (and leave the plan cache to those that can). The
// first word must name a statement the fast path runs; then, outside
// string literals, quoted names and comments, the text must have nothing
// that no shape has (ShapeOf):
//
//   - a reserved word no shape uses (rejectedWord: AND, OR, NOT,
//     BETWEEN, LIKE, IS, JOIN, ON, ORDER, GROUP, LIMIT, AS, DISTINCT,
//     CASE, FOR, ...), except next to a dot, where MySQL reads any word
//     as a name, and except in a SELECT the words of a range SELECT
//     (scanWord: AND, OR, NOT, BETWEEN, IS, ORDER, GROUP, LIMIT,
//     DISTINCT);
//   - an operator other than =, +, - and * (/, %, &, |, ^, ~, @, :, and
//     <, >, ! but in a SELECT), or a + anywhere but in an UPDATE;
//   - a parenthesis in an UPDATE or DELETE;
//   - a * anywhere but as the field list of a SELECT (or SELECT ALL) or
//     right after a parenthesis in one (COUNT(*));
//   - IN in an UPDATE or DELETE, a second SELECT, or a SELECT in the
//     others;
//   - a comma between FROM and WHERE (a join), before SET in an UPDATE,
//     or anywhere in a DELETE;
//   - no WHERE in a SELECT, UPDATE or DELETE (but a SELECT with ORDER
//     BY and LIMIT, a key's first or last rows, or one naming MIN or
//     MAX); no column list before an INSERT's VALUES.
//
// It errs only on the side of letting a statement through: text it may
// not read the way the parser does (an unterminated string or comment,
// "--" without a space after it) is skipped, never judged. A statement
// it turns down is counted as ReasonShape, whether or not the TiDB
// parser would have parsed it.
func Candidate(query string) bool {
	i := 0
	for i < len(query) && lexical.IsSpaceByte(query[i]) {
		i++
	}
	j := i
	for j < len(query) && lexical.IsWordByte(query[j]) {
		j++
	}
	var buf [16]byte
	var k Kind
	switch string(lowerWord(&buf, query[i:j])) {
	case "select":
		k = Select
	case "update":
		k = Update
	case "delete":
		k = Delete
	case "insert":
		k = Insert
	case "begin", "start", "commit", "rollback":
		// The parser and ShapeOf judge these exactly, and their
		// digests stay cached.
		return true
	default:
		return false
	}
	return textAllowed(query[j:], k)
}

// textAllowed is Candidate's scan of q, the text after the first
// word of a statement of kind k.
func textAllowed(q string, k Kind) bool {
	var (
		buf [16]byte
		// afterSelect: the previous token is the word SELECT; last is
		// the previous token's last byte ('a' for a word).
		afterSelect        bool
		last               byte
		selects            int
		inFrom, where, set bool
		// ordered, limited, minMax: the words ORDER BY, LIMIT, and
		// MIN or MAX were met.
		ordered, limited, minMax bool
		// afterOrder: the previous word is ORDER; inOrder: the tokens
		// are an ORDER BY's list (until LIMIT); orderItem: the next
		// token starts one of its items.
		afterOrder, inOrder, orderItem bool
	)
	if k == Select {
		selects, afterSelect = 1, true
	}
	for i := 0; i < len(q); {
		c := q[i]
		switch {
		case lexical.IsSpaceByte(c):
			i++
			continue
		case c == '\'' || c == '"' || c == '`':
			i = skipQuoted(q, i)
			afterSelect, last = false, c
			continue
		case c == '#' || c == '-' && i+1 < len(q) && q[i+1] == '-':
			// A comment to the end of the line ("--1" is two minus
			// signs to the parser; skipped here all the same).
			for i < len(q) && q[i] != '\n' {
				i++
			}
			continue
		case c == '/' && i+1 < len(q) && q[i+1] == '*':
			// Comments, optimizer hints and /*! ... */ alike: what
			// they hold is not judged.
			end := strings.Index(q[i+2:], "*/")
			if end < 0 {
				return true
			}
			i += end + 4
			continue
		case isNameByte(c):
			j := i + 1
			for j < len(q) && isNameByte(q[j]) {
				j++
			}
			word := lowerWord(&buf, q[i:j])
			before, wasSelect := last, afterSelect
			dotted := before == '.' || j < len(q) && q[j] == '.'
			if orderItem && k == Select && allDigits(q[i:j]) {
				// ORDER BY 1: a position, which no shape orders by
				// (a range SELECT's ORDER BY names columns).
				return false
			}
			wasOrder := afterOrder
			afterSelect, last, orderItem, afterOrder = false, 'a', false, false
			switch string(word) {
			case "order":
				// The FROM clause ends (a SELECT without WHERE).
				afterOrder, inFrom = true, false
			case "by":
				inOrder, orderItem = wasOrder, wasOrder
				ordered = ordered || wasOrder
			case "limit":
				inOrder, limited = false, true
			case "min", "max":
				minMax = true
			}
			i = j
			if dotted {
				continue
			}
			switch {
			case string(word) == "and" && where:
				// WHERE c1 = v1 AND c2 = v2 over a composite key.
			case string(word) == "for" && where && k == Select:
				// SELECT ... FOR UPDATE.
			case k == Select && scanWord(word):
				// A range SELECT's conditions and clauses.
			case rejectedWord(word):
				return false
			}
			switch string(word) {
			case "select":
				if selects++; selects > 1 || k != Select {
					return false
				}
				afterSelect = true
			case "all":
				// SELECT ALL is SELECT.
				afterSelect = wasSelect
			case "from":
				inFrom = k == Select || k == Delete
			case "where":
				inFrom, where = false, true
			case "set":
				set = true
			case "in":
				if k != Select {
					return false
				}
			case "values":
				// INSERT INTO t VALUES (...) names no columns.
				if k == Insert && before != ')' {
					return false
				}
			}
			continue
		}
		switch c {
		case '<', '>', '!':
			// A range SELECT's comparisons.
			if k != Select {
				return false
			}
		case '/', '%', '&', '|', '^', '~', '@', ':', '{', '}':
			return false
		case '(':
			// A SELECT's IN lists, parenthesized conditions and
			// aggregates.
			if k == Update || k == Delete {
				return false
			}
		case '*':
			// SELECT *, COUNT(*).
			if !afterSelect && !(k == Select && last == '(') {
				return false
			}
		case '+':
			if k != Update {
				return false
			}
		case ',':
			if inFrom || k == Delete || k == Update && !set {
				return false
			}
		}
		afterSelect, last = false, c
		orderItem, afterOrder = c == ',' && inOrder, false
		i++
	}
	return where || k == Insert || k == Select && (ordered && limited || minMax)
}

// allDigits reports whether w is a number without sign or point.
func allDigits(w string) bool {
	for i := 0; i < len(w); i++ {
		if w[i] < '0' || w[i] > '9' {
			return false
		}
	}
	return w != ""
}

// scanWord reports whether word (lower case) is a reserved word that a
// range SELECT's shape (scanshape.go) may have, which rejectedWord
// turns down in the other statements.
func scanWord(word []byte) bool {
	switch string(word) {
	case "and", "or", "not", "between", "is", "order", "group", "limit", "distinct":
		return true
	}
	return false
}

// rejectedWord reports whether word (lower case) is a reserved word
// that no fast shape has: a statement with it outside strings, quoted
// names and comments is not one the fast path runs. Each is reserved in
// the TiDB parser, so it cannot be an unquoted name
// (TestFastCandidateWordsReserved).
func rejectedWord(word []byte) bool {
	switch string(word) {
	case "and", "or", "not", "xor", "between", "like", "regexp", "rlike", "is",
		"join", "cross", "inner", "left", "right", "natural", "straight_join", "outer", "on", "using",
		"order", "group", "having", "limit", "union", "except", "intersect", "window", "over",
		"as", "distinct", "distinctrow", "case", "exists", "div", "mod", "interval",
		"for", "lock", "with", "convert", "collate", "binary", "default":
		return true
	}
	return false
}

// lowerWord returns s in ASCII lower case, in buf, or nil when s is
// longer than buf (no word Candidate looks for is).
func lowerWord(buf *[16]byte, s string) []byte {
	if len(s) > len(buf) {
		return nil
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		buf[i] = c
	}
	return buf[:len(s)]
}

// skipQuoted returns the index after the string literal or quoted
// identifier that starts at q[i], or len(q) when it does not end. A
// doubled quote, or (in a literal) one after a backslash, does not end
// it.
func skipQuoted(q string, i int) int {
	end, _ := quotedEnd(q, i)
	return end
}

// quotedEnd is skipQuoted, which also reports whether the string or
// name ends (false: it runs to the end of q, and len(q) is returned).
func quotedEnd(q string, i int) (int, bool) {
	quote := q[i]
	for i++; i < len(q); i++ {
		switch q[i] {
		case '\\':
			if quote != '`' {
				i++
			}
		case quote:
			if i+1 < len(q) && q[i+1] == quote {
				i++
				continue
			}
			return i + 1, true
		}
	}
	return len(q), false
}

// isNameByte reports whether c may be part of an unquoted word: MySQL's
// names also take $ and any byte of a multi-byte UTF-8 character.
func isNameByte(c byte) bool {
	return lexical.IsWordByte(c) || c == '$' || c >= 0x80
}
