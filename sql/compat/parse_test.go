package compat

import "testing"

func TestKeepLikeEscapes(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{`SELECT 1`, `SELECT 1`},
		{`SELECT 'a\_b'`, `SELECT 'a\\_b'`},
		{`SELECT "a\%b", 'a\nb', 'a\\_b'`, `SELECT "a\\%b", 'a\nb', 'a\\_b'`},
		{`SELECT 'it''s \_'`, `SELECT 'it''s \\_'`},
		{"SELECT `a\\_b` FROM t", "SELECT `a\\_b` FROM t"},
		{"SELECT 1 -- '\\_\nFROM t WHERE s LIKE '\\_'", "SELECT 1 -- '\\_\nFROM t WHERE s LIKE '\\\\_'"},
		{`SELECT /* '\_ */ 'x\_'`, `SELECT /* '\_ */ 'x\\_'`},
		{`SELECT 'x\'\_'`, `SELECT 'x\'\\_'`},
	} {
		got := KeepLikeEscapes(c.in)
		if got != c.want {
			t.Errorf("keepLikeEscapes(%q) = %q, want %q", c.in, got, c.want)
		}
		if again := KeepLikeEscapes(got); again != got {
			t.Errorf("keepLikeEscapes is not idempotent on %q: %q", got, again)
		}
	}
}
