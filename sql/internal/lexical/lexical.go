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
