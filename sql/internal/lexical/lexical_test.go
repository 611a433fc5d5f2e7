package lexical

import (
	"strings"
	"testing"
)

// TestWordAndSpaceBytes checks the byte classes against their
// definitions, byte by byte.
func TestWordAndSpaceBytes(t *testing.T) {
	const word = "_0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
	const space = " \t\n\r\f\v"
	for c := 0; c < 256; c++ {
		if got, want := IsWordByte(byte(c)), strings.IndexByte(word, byte(c)) >= 0; got != want {
			t.Errorf("IsWordByte(%q) = %v, want %v", byte(c), got, want)
		}
		if got, want := IsSpaceByte(byte(c)), strings.IndexByte(space, byte(c)) >= 0; got != want {
			t.Errorf("IsSpaceByte(%q) = %v, want %v", byte(c), got, want)
		}
	}
}

// TestTrimLeadingAndLeadingWord checks what comes past leading space and
// comments, and the word test made on it.
func TestTrimLeadingAndLeadingWord(t *testing.T) {
	for _, c := range []struct {
		query, trimmed string
		begin          bool // LeadingWordIs(query, "begin")
	}{
		{"BEGIN", "BEGIN", true},
		{"  \tbegin;", "begin;", true},
		{"/* c */ Begin work", "Begin work", true},
		{"/* a *//* b */\nBEGIN", "BEGIN", true},
		{"beginx", "beginx", false},
		{"begin_1", "begin_1", false},
		{"/* never ends BEGIN", "", false},
		{"  ", "", false},
		{"", "", false},
		{"beg", "beg", false},
		{"(begin)", "(begin)", false},
	} {
		if got := TrimLeading(c.query, " \t\r\n"); got != c.trimmed {
			t.Errorf("TrimLeading(%q) = %q, want %q", c.query, got, c.trimmed)
		}
		if got := LeadingWordIs(c.query, "begin"); got != c.begin {
			t.Errorf("LeadingWordIs(%q, begin) = %v, want %v", c.query, got, c.begin)
		}
	}
}

// TestNextTokenAndIndexFold checks the tokens of a statement's text and
// the case-insensitive search for a keyword.
func TestNextTokenAndIndexFold(t *testing.T) {
	for _, c := range []struct{ q, tok, rest string }{
		{"  set role r", "set", " role r"},
		{"`a b` c", "a b", " c"},
		{"'x''y'", "x", "'y'"},
		{"\"unterminated", "", ""},
		{"", "", ""},
		{"(x", "", "(x"},
	} {
		if tok, rest := NextToken(c.q); tok != c.tok || rest != c.rest {
			t.Errorf("NextToken(%q) = %q, %q; want %q, %q", c.q, tok, rest, c.tok, c.rest)
		}
	}
	for _, c := range []struct {
		s, sub string
		want   int
	}{
		{"GRANT r TO Current_User()", "current_user", 11},
		{"grant r to x", "current_user", -1},
		{"ALTER USER u DEFAULT ROLE r", "default", 13},
		{"def", "default", -1},
	} {
		if got := IndexFold(c.s, c.sub); got != c.want {
			t.Errorf("IndexFold(%q, %q) = %d, want %d", c.s, c.sub, got, c.want)
		}
	}
}
