package observeraction

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/dolthub/vitess/go/mysql"
)

// TestParseObserverAction: an action is one DML statement or a BEGIN ...
// END block of them; NEW.column becomes a bind variable outside strings,
// quoted identifiers and comments; anything else is MySQL's 1064 or 1235.
func TestParseObserverAction(t *testing.T) {
	for _, c := range []struct {
		text  string
		stmts []string // each statement's text, then "| columns"
		code  int
	}{
		{text: "INSERT INTO h (id, v) VALUES (NEW.id, NEW.v)",
			stmts: []string{"INSERT INTO h (id, v) VALUES (:new_0, :new_1) | id v"}},
		{text: "update h set v = new . `v w` where id = New.Id;",
			stmts: []string{"update h set v = :new_0 where id = :new_1 | v w Id"}},
		{text: "DELETE FROM h WHERE note = 'NEW.x' AND `NEW.y` = 1 /* NEW.z */ AND id = NEW.id -- NEW.q",
			stmts: []string{"DELETE FROM h WHERE note = 'NEW.x' AND `NEW.y` = 1 /* NEW.z */ AND id = :new_0 -- NEW.q | id"}},
		{text: "REPLACE INTO h SELECT id, t.renew FROM d AS t WHERE t.new_x IS NULL OR id = NEW.id",
			stmts: []string{"REPLACE INTO h SELECT id, t.renew FROM d AS t WHERE t.new_x IS NULL OR id = :new_0 | id"}},
		{text: "BEGIN DELETE FROM h WHERE id = NEW.id; INSERT INTO h VALUES (NEW.id, ';'); END",
			stmts: []string{"DELETE FROM h WHERE id = :new_0 | id", "INSERT INTO h VALUES (:new_0, ';') | id"}},
		{text: "begin\n  update h set v = 1;\nend;", stmts: []string{"update h set v = 1 | "}},
		{text: "DELETE FROM h; DELETE FROM g", code: mysql.ERParseError},
		{text: "SELECT NEW.id", code: mysql.ERNotSupportedYet},
		{text: "BEGIN DROP TABLE h; END", code: mysql.ERNotSupportedYet},
		{text: "INSERT INTO h VALUES ('unterminated)", code: mysql.ERParseError},
		{text: "INSERT INTO", code: mysql.ERParseError},
		{text: "BEGIN END", code: mysql.ERParseError},
	} {
		a, err := Parse(c.text)
		if c.code != 0 {
			var se *mysql.SQLError
			if !errors.As(err, &se) || se.Num != c.code {
				t.Errorf("%q: %v, want error %d", c.text, err, c.code)
			}
			continue
		}
		if err != nil {
			t.Errorf("%q: %v", c.text, err)
			continue
		}
		var got []string
		for _, st := range a.Stmts {
			got = append(got, st.Text+" | "+strings.Join(st.Columns, " "))
		}
		if !slices.Equal(got, c.stmts) {
			t.Errorf("%q:\n got %q\nwant %q", c.text, got, c.stmts)
		}
	}
}
