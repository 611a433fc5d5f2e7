package lexical

import "strings"

// IsWordByte reports whether c may be part of a keyword or an unquoted
// name made of ASCII letters, digits and underscores (the ASCII bytes of
// Perl's \w too).
func IsWordByte(c byte) bool {
	return c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

// IsSpaceByte reports whether c is white space between tokens.
func IsSpaceByte(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'
}

// TrimLeading returns query without the bytes of cutset and the /* */
// comments it starts with; "" when a comment there does not end. cutset
// must hold no word byte (IsWordByte).
func TrimLeading(query, cutset string) string {
	// Most statements start with their first word: nothing to trim, and
	// no byte set for TrimLeft to build (every statement is classified
	// here, some several times).
	if query != "" && IsWordByte(query[0]) {
		return query
	}
	q := strings.TrimLeft(query, cutset)
	for strings.HasPrefix(q, "/*") {
		end := strings.Index(q, "*/")
		if end < 0 {
			return ""
		}
		q = strings.TrimLeft(q[end+2:], cutset)
	}
	return q
}

// LeadingWordIs reports whether query, past its leading white space and
// comments, starts with word (any case) followed by a byte that is not a
// word byte, or by its end: a test that allocates nothing, made before a
// query is split into words.
func LeadingWordIs(query, word string) bool {
	q := TrimLeading(query, " \t\r\n")
	if len(q) < len(word) || !strings.EqualFold(q[:len(word)], word) {
		return false
	}
	return len(q) == len(word) || !IsWordByte(q[len(word)])
}

// NextToken returns the word or quoted name ('x', "x", `x`, without its
// quotes) at the start of q, after blanks, and the rest of q; "" when
// there is none.
func NextToken(q string) (string, string) {
	q = strings.TrimLeft(q, " \t\r\n")
	if q == "" {
		return "", ""
	}
	if c := q[0]; c == '\'' || c == '"' || c == '`' {
		end := strings.IndexByte(q[1:], c)
		if end < 0 {
			return "", ""
		}
		return q[1 : 1+end], q[2+end:]
	}
	i := 0
	for i < len(q) && IsWordByte(q[i]) {
		i++
	}
	return q[:i], q[i:]
}

// IndexFold is strings.Index, ASCII case-insensitive, for a sub that
// starts with a lower-case letter.
func IndexFold(s, sub string) int {
	n := len(sub)
	for i := 0; i+n <= len(s); i++ {
		// Compare the first byte before calling EqualFold: this runs on
		// every statement.
		if s[i]|0x20 == sub[0] && strings.EqualFold(s[i:i+n], sub) {
			return i
		}
	}
	return -1
}
