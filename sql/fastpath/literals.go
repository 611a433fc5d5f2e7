package fastpath

import (
	"math"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/percdb/percdb/sql/internal/lexical"
)

// This file is the lexical half of the text protocol's cache of shapes
// (the non-prepared plan cache; package sql's fastpath_literals.go is the
// other half). A COM_QUERY's text is cut into a template, the text with
// each literal the fast path may re-bind replaced by a parameter marker,
// and the literals' values, in order. Statements with one template have
// one shape: the template parsed once by the TiDB parser, as a prepared
// statement is, its parameters bound to the literals of each execution,
// so that a repeat of a statement with other literals is a pass of this
// scanner and a map lookup instead of a parse.
//
// The scanner reads only what it is sure the TiDB lexer reads the same
// way: unsigned decimal integers (with a unary minus folded in where the
// digest folds it too) and quoted strings without escapes. Any other
// literal stays in the template as written (a decimal, a float, a hex or
// bit literal, NULL, TRUE, a typed literal such as DATE '...', a string
// after a character set introducer, a literal in the field list of a
// SELECT or in ORDER BY and GROUP BY), so that its statements get a
// template of their own. Text it does not read at all (comments, user
// variables, parameter markers, non-ASCII bytes outside strings, a
// number glued to letters or dots) makes ScanLiterals decline, and the
// statement is parsed as before.
//
// The template decides the TiDB digest (NormalizeDigest) too: the
// digest erases every literal the template replaces, and folds a unary
// minus into a number after exactly the tokens this scanner folds it
// after (TestTemplateDigest), so that a template's digest, computed once,
// is every one of its statements' digest.

// Literals is what ScanLiterals returns: the template and the replaced
// literals' values, in order. Its buffers are reused from one statement
// to the next.
type Literals struct {
	// Template is the statement's text with each replaced literal (and
	// the minus folded into it) replaced by "?".
	Template []byte
	// Values are the replaced literals, converted as literalValue
	// converts the TiDB parser's: Param is -1, OK unset for a number
	// GMS types as a DECIMAL (beyond the range of BIGINT UNSIGNED, or
	// negative beyond BIGINT's).
	Values []Value
}

// ScanLiterals cuts query into a template and its literals (Literals),
// reusing l's buffers. It returns false for text it does not read.
func ScanLiterals(query string, l *Literals) bool {
	sc := literalScanner{q: query, l: l}
	l.Template = l.Template[:0]
	l.Values = l.Values[:0]
	return sc.scan()
}

// literalScanner is one run of ScanLiterals.
type literalScanner struct {
	q string
	l *Literals
	// copied is how much of q the template holds.
	copied int
	// prev is the previous token: a word lowercased, an operator or a
	// punctuation mark, "" at the start; prevLit is set when it was a
	// literal (replaced or not).
	prev    string
	prevLit bool
	// fields: inside a SELECT's field list (from SELECT to FROM);
	// byList: inside ORDER BY or GROUP BY (to LIMIT); limit: inside
	// LIMIT or OFFSET (to the next word), where the TiDB parser takes
	// an integer (as BIGINT UNSIGNED) or a marker and no string.
	fields, byList, limit bool
	buf                   [16]byte
}

// scan runs the scanner over the whole text.
func (sc *literalScanner) scan() bool {
	q := sc.q
	i := 0
	for i < len(q) {
		c := q[i]
		switch {
		case lexical.IsSpaceByte(c):
			i++
		case c >= 0x80, c == '?', c == '@', c == '#', c == '\\':
			return false
		case c == '/' && i+1 < len(q) && q[i+1] == '*':
			return false
		case c == '-' && i+1 < len(q) && q[i+1] == '-':
			// A comment when a space follows, else two minuses: the
			// scanner reads neither.
			return false
		case c == '`':
			end, ok := quotedEnd(q, i)
			if !ok {
				return false
			}
			sc.token("`", false)
			i = end
		case c == '\'' || c == '"':
			end, ok := quotedEnd(q, i)
			if !ok || sc.prevLit && sc.prev == "'" {
				// Adjacent strings are one string to MySQL.
				return false
			}
			body := q[i+1 : end-1]
			if sc.replaceable() && !sc.limit && sc.prev != "-" && sc.prev != "+" &&
				!strings.ContainsRune(body, '\\') && utf8.ValidString(body) {
				sc.replace(i, end, Value{Param: -1, Lit: unquote(body, c), OK: true})
			}
			sc.token("'", true)
			i = end
		case c >= '0' && c <= '9':
			end := i
			for end < len(q) && q[end] >= '0' && q[end] <= '9' {
				end++
			}
			if end < len(q) && (lexical.IsWordByte(q[end]) || q[end] == '.' || q[end] == '$' || q[end] >= 0x80) {
				// 1e5, 0x1f, 1.5, 1abc: floats, hex literals, names.
				return false
			}
			if i > 0 && q[i-1] == '.' {
				return false
			}
			if sc.replaceable() {
				v := numberValue(q[i:end], false)
				if sc.limit {
					v = limitValue(q[i:end])
				}
				sc.replace(i, end, v)
			}
			sc.token("0", true)
			i = end
		case (c == '-' || c == '+') && sc.signBeforeNumber(i):
			// A sign before a number, which the digest folds into
			// it after some tokens (TiDB's isPrefixByUnary): the
			// scanner folds a minus after those a value follows and
			// declines the others (a sign after a sign, or after IS);
			// after anything else the sign is an operator.
			if sc.fields || sc.byList || !digestFoldsSign(sc.prev) {
				sc.token(q[i:i+1], false)
				i++
				continue
			}
			if c == '+' || !sc.replaceable() || sc.prev == "-" || sc.prev == "+" || sc.limit {
				// A negative LIMIT is a syntax error, left to the
				// parser.
				return false
			}
			j := i + 1
			for lexical.IsSpaceByte(q[j]) {
				j++
			}
			end := j
			for end < len(q) && q[end] >= '0' && q[end] <= '9' {
				end++
			}
			if end < len(q) && (lexical.IsWordByte(q[end]) || q[end] == '.' || q[end] == '$' || q[end] >= 0x80) {
				return false
			}
			sc.replace(i, end, numberValue(q[j:end], true))
			sc.token("0", true)
			i = end
		case lexical.IsWordByte(c) || c == '$':
			end := i
			for end < len(q) && (lexical.IsWordByte(q[end]) || q[end] == '$') {
				end++
			}
			if end < len(q) && (q[end] == '\'' || q[end] == '"') {
				// x'..', b'..', n'..', _utf8mb4'..': the scanner
				// does not read what follows.
				return false
			}
			sc.word(q[i:end])
			i = end
		case c == ';':
			// Only a last one: two statements are GMS's.
			for j := i + 1; j < len(q); j++ {
				if !lexical.IsSpaceByte(q[j]) {
					return false
				}
			}
			i = len(q)
		default:
			n := operatorLen(q[i:])
			sc.token(q[i:i+n], false)
			i += n
		}
	}
	sc.l.Template = append(sc.l.Template, q[sc.copied:]...)
	return true
}

// replaceable reports whether a literal after the previous token is one
// to replace: one that is a value of its own there (after a comparison,
// an arithmetic operator, a parenthesis, a comma, AND, OR, BETWEEN,
// LIMIT, OFFSET), outside a SELECT's field list and ORDER BY and GROUP
// BY, where the fast path reads a literal when it decides the shape
// (COUNT(1)) or the digest keeps it (ORDER BY 1).
func (sc *literalScanner) replaceable() bool {
	if sc.fields || sc.byList || sc.prevLit {
		return false
	}
	switch sc.prev {
	case "=", "<", ">", "<=", ">=", "<>", "!=", "<=>", "(", ",", "+", "-", "*", "/", "%",
		"and", "or", "xor", "between", "limit", "offset", "not":
		return true
	}
	return false
}

// signBeforeNumber reports whether the sign at q[i] is one byte (not
// ->, ->> or a comment) and a number follows it, after white space.
func (sc *literalScanner) signBeforeNumber(i int) bool {
	q := sc.q
	if operatorLen(q[i:]) != 1 {
		return false
	}
	j := i + 1
	for j < len(q) && lexical.IsSpaceByte(q[j]) {
		j++
	}
	return j < len(q) && q[j] >= '0' && q[j] <= '9'
}

// digestFoldsSign reports whether the digest folds a sign after token
// prev into the number after it (TiDB's isPrefixByUnary).
func digestFoldsSign(prev string) bool {
	switch prev {
	case "", "(", ",", "+", "-", ">=", "is", "<=", "=", "<", ">", "select":
		return true
	}
	return false
}

// token records a token that is not replaced (or was just replaced).
func (sc *literalScanner) token(tok string, lit bool) {
	sc.prev, sc.prevLit = tok, lit
}

// word records a keyword or a name.
func (sc *literalScanner) word(w string) {
	kw := keywordOf(lowerWord(&sc.buf, w))
	sc.limit = kw == "limit" || kw == "offset"
	switch kw {
	case "select":
		sc.fields = true
	case "from":
		sc.fields = false
	case "by":
		if sc.prev == "order" || sc.prev == "group" {
			sc.byList = true
		}
	case "limit", "having", "for", "lock", "union":
		sc.byList = false
	}
	sc.token(kw, false)
}

// keywordOf returns the keyword the scanner looks at that the lowercased
// word w is, or "w" for any other word (a name, another keyword), without
// allocating.
func keywordOf(w []byte) string {
	switch string(w) {
	case "select":
		return "select"
	case "from":
		return "from"
	case "order":
		return "order"
	case "group":
		return "group"
	case "by":
		return "by"
	case "limit":
		return "limit"
	case "offset":
		return "offset"
	case "having":
		return "having"
	case "for":
		return "for"
	case "lock":
		return "lock"
	case "union":
		return "union"
	case "and":
		return "and"
	case "or":
		return "or"
	case "xor":
		return "xor"
	case "not":
		return "not"
	case "between":
		return "between"
	case "is":
		return "is"
	}
	return "w"
}

// replace replaces q[from:to] in the template by a marker, and records
// its value.
func (sc *literalScanner) replace(from, to int, v Value) {
	sc.l.Template = append(sc.l.Template, sc.q[sc.copied:from]...)
	sc.l.Template = append(sc.l.Template, '?')
	sc.copied = to
	sc.l.Values = append(sc.l.Values, v)
}

// unquote returns a string literal's value: its body with doubled quotes
// undoubled (the body has no backslash).
func unquote(body string, quote byte) string {
	double := string([]byte{quote, quote})
	if !strings.Contains(body, double) {
		return body
	}
	return strings.ReplaceAll(body, double, double[:1])
}

// numberValue converts an unsigned decimal integer as the TiDB lexer
// does (toInt: BIGINT when it fits, BIGINT UNSIGNED, else DECIMAL), then
// negates it as literalValue does.
func numberValue(digits string, neg bool) Value {
	bad := Value{Param: -1}
	n, err := strconv.ParseUint(digits, 10, 64)
	if err != nil {
		return bad
	}
	if n <= math.MaxInt64 {
		v := int64(n)
		if neg {
			v = -v
		}
		return Value{Param: -1, Lit: v, OK: true}
	}
	if neg {
		return bad
	}
	return Value{Param: -1, Lit: n, OK: true}
}

// limitValue converts the integer of a LIMIT or OFFSET as the TiDB
// parser does: BIGINT UNSIGNED.
func limitValue(digits string) Value {
	n, err := strconv.ParseUint(digits, 10, 64)
	if err != nil {
		return Value{Param: -1}
	}
	return Value{Param: -1, Lit: n, OK: true}
}

// operatorLen returns the length of the operator or punctuation mark q
// starts with: the longest of MySQL's operators of two or three bytes,
// else one byte.
func operatorLen(q string) int {
	for _, op := range [...]string{"<=>", "->>", "<=", ">=", "<>", "!=", "<<", ">>", ":=", "||", "&&", "->"} {
		if strings.HasPrefix(q, op) {
			return len(op)
		}
	}
	return 1
}
