package compat

import (
	"strings"
	"testing"

	gsql "github.com/dolthub/go-mysql-server/sql"
	ast "github.com/dolthub/vitess/go/vt/sqlparser"
)

// TestRewriteSyntax checks the statements syntaxParser parses again:
// compound INTERVAL units after an expression in backquotes (not
// EXTRACT's), FROM FIRST and RESPECT NULLS blanked out, FROM LAST and
// IGNORE NULLS named for 1235, and offsets mapped back to the query.
func TestRewriteSyntax(t *testing.T) {
	for _, c := range []struct {
		query, text, unsupported string
	}{
		{"SELECT DATE_ADD(d, INTERVAL '1:30' HOUR_MINUTE) FROM t", "SELECT DATE_ADD(d, INTERVAL '1:30' `HOUR_MINUTE`) FROM t", ""},
		{"SELECT d + interval (x) day_second, EXTRACT(DAY_SECOND FROM d) FROM t", "SELECT d + interval (x) `day_second`, EXTRACT(DAY_SECOND FROM d) FROM t", ""},
		{"SELECT 'HOUR_MINUTE', `HOUR_MINUTE` FROM t -- HOUR_MINUTE", "", ""},
		{"SELECT NTH_VALUE(x, 2) FROM FIRST RESPECT NULLS OVER w FROM t", "SELECT NTH_VALUE(x, 2)                          OVER w FROM t", ""},
		{"SELECT NTH_VALUE(x, 2) FROM LAST OVER w FROM t", "SELECT NTH_VALUE(x, 2)           OVER w FROM t", "FROM LAST"},
		{"SELECT LAG(x) IGNORE NULLS OVER w FROM t", "SELECT LAG(x)              OVER w FROM t", "IGNORE NULLS"},
		{"SELECT f(x) FROM FIRST", "", ""},
		{"CREATE TABLE t (`yr` year(4) DEFAULT NULL, y2 YEAR(4) NOT NULL)", "CREATE TABLE t (`yr` year    DEFAULT NULL, y2 YEAR    NOT NULL)", ""},
		{"ALTER TABLE t MODIFY y YEAR ( 4 )", "ALTER TABLE t MODIFY y YEAR      ", ""},
		{"SELECT YEAR(4), x + YEAR(4) FROM t WHERE YEAR(4) AND (YEAR(4))", "", ""},
		{"CREATE TABLE t (y YEAR(2))", "", ""},
		// A version comment nested in one, as mariadb-dump writes roles.
		{"/*!80001 CREATE ROLE 'r1'/*!80001 @'%'*/ */", "/*!80001 CREATE ROLE 'r1'@'%' */", ""},
		{"/*!80001 CREATE ROLE '/*!1'/*!80001 @'*/'*/ */", "/*!80001 CREATE ROLE '/*!1'@'*/' */", ""},
		{"/*!80001 CREATE ROLE r */ /* /*!1 x */", "", ""},
		{"SELECT 1/*M!100005 CREATE ROLE 'r1'/*!80001 @'%'*/ WITH ADMIN a */+2", "SELECT 1 +2", ""},
		// N'...' is _utf8mb3'...'; an N ending a word, or inside a
		// string or name, stays.
		{"SELECT N'abc', n'x' FROM t WHERE s = N'y'", "SELECT  _utf8mb3 'abc',  _utf8mb3 'x' FROM t WHERE s =  _utf8mb3 'y'", ""},
		{"SELECT colN'x', 'N''a', `N'` FROM t", "", ""},
		// Locking clauses (lockclause.go).
		{"SELECT id FROM t WHERE id = 1 FOR UPDATE NOWAIT", "SELECT id FROM t WHERE id = 1 FOR UPDATE       ", ""},
		{"SELECT * FROM t, `u` FOR UPDATE OF t, `u` SKIP LOCKED", "SELECT * FROM t, `u` FOR UPDATE           SKIP LOCKED", ""},
		{"SELECT * FROM t FOR SHARE OF t NOWAIT", "SELECT * FROM t                      ", ""},
		{"SELECT * FROM t for share skip locked", "SELECT * FROM t                      ", ""},
		{"SELECT 'FOR UPDATE NOWAIT' FROM t", "", ""},
		{"SELECT * FROM t FOR UPDATE SKIP LOCKED", "", ""},
		// Quantified comparisons: = ANY and <> ALL are IN and NOT IN,
		// the others a stand-in (quantified.go), <=> 1235; ALL
		// elsewhere stays.
		{"SELECT a FROM t WHERE c = ANY (SELECT c FROM u)", "SELECT a FROM t WHERE c  IN      (SELECT c FROM u)", ""},
		{"SELECT a FROM t WHERE c=some(SELECT c FROM u)", "SELECT a FROM t WHERE c IN     (SELECT c FROM u)", ""},
		{"SELECT a FROM t WHERE c <> ALL (SELECT c FROM u)", "SELECT a FROM t WHERE c  NOT IN       (SELECT c FROM u)", ""},
		{"SELECT a FROM t WHERE c != ALL ((SELECT c FROM u))", "SELECT a FROM t WHERE c  NOT IN       ((SELECT c FROM u))", ""},
		{"SELECT a FROM t WHERE c >= ALL (SELECT c FROM u)", "SELECT a FROM t WHERE c >=  percdb_all(  (SELECT c FROM u )) ", ""},
		{"SELECT a FROM t WHERE c < ANY (WITH w AS (SELECT 1) SELECT * FROM w)", "SELECT a FROM t WHERE c <  percdb_any(  (WITH w AS (SELECT 1) SELECT * FROM w )) ", ""},
		{"SELECT a FROM t WHERE c <=> ANY (SELECT c FROM u)", "SELECT a FROM t WHERE c <=>     (SELECT c FROM u)", "ANY subquery with <=>"},
		{"SELECT a FROM t UNION ALL (SELECT a FROM t)", "", ""},
		{"SELECT c, COUNT(*) FROM t GROUP BY c WITH ROLLUP", "SELECT c, COUNT(*) FROM t GROUP BY c  , percdb_rollup()        ", ""},
	} {
		fix, ok := rewriteSyntax(c.query)
		if c.text == "" {
			if ok {
				t.Errorf("%s: rewritten as %q, want no rewrite", c.query, fix.text)
			}
			continue
		}
		if !ok {
			t.Errorf("%s: not rewritten", c.query)
			continue
		}
		if fix.text != c.text || fix.unsupported != c.unsupported {
			t.Errorf("%s:\n got %q (%q)\nwant %q (%q)", c.query, fix.text, fix.unsupported, c.text, c.unsupported)
		}
		if got := fix.original(len(fix.text)); got != len(c.query) {
			t.Errorf("%s: end maps to %d, want %d", c.query, got, len(c.query))
		}
		if i := strings.Index(fix.text, " FROM t"); i >= 0 {
			if got, want := fix.original(i), strings.Index(c.query, " FROM t"); got != want {
				t.Errorf("%s: offset %d maps to %d, want %d", c.query, i, got, want)
			}
		}
	}
}

// TestParseCompoundInterval checks MySQL's reading of compound INTERVAL
// values (get_interval_info) as a count of the unit's smallest field.
func TestParseCompoundInterval(t *testing.T) {
	for _, c := range []struct {
		value, unit string
		want        int64
		ok          bool
	}{
		{"1:30", "HOUR_MINUTE", 90, true},
		{"-1:30", "HOUR_MINUTE", -90, true},
		{" 1 : 30 ", "HOUR_MINUTE", 90, true},
		{"90", "HOUR_MINUTE", 90, true},
		{"1:2:3", "HOUR_MINUTE", 0, false},
		{"1-1", "YEAR_MONTH", 13, true},
		{"1 1:1:1", "DAY_SECOND", 90061, true},
		{"1:30", "DAY_SECOND", 90, true},
		{"1.5", "SECOND_MICROSECOND", 1_500_000, true},
		{"1.000005", "SECOND_MICROSECOND", 1_000_005, true},
		{"5", "SECOND_MICROSECOND", 500_000, true},
		{"1 2", "DAY_HOUR", 26, true},
		{"", "MINUTE_SECOND", 0, true},
		{"99999999999999999999:1", "HOUR_MINUTE", 0, false},
	} {
		got, ok := parseCompoundInterval(c.value, compoundUnitFields[c.unit])
		if got != c.want || ok != c.ok {
			t.Errorf("%q %s: %d %v, want %d %v", c.value, c.unit, got, ok, c.want, c.ok)
		}
	}
}

// TestLockWaitOf: the wait option of a FOR UPDATE clause, not of FOR
// SHARE nor of words in strings.
func TestLockWaitOf(t *testing.T) {
	for q, want := range map[string]LockWait{
		"SELECT * FROM t FOR UPDATE":                   LockWaitDefault,
		"SELECT * FROM t FOR UPDATE NOWAIT":            LockNoWait,
		"select * from t for update of t, `u` nowait":  LockNoWait,
		"SELECT * FROM t FOR UPDATE SKIP LOCKED":       LockSkipLocked,
		"SELECT * FROM t FOR SHARE NOWAIT":             LockWaitDefault,
		"SELECT 'FOR UPDATE NOWAIT' FROM t FOR UPDATE": LockWaitDefault,
		"SELECT * FROM t /* FOR UPDATE SKIP LOCKED */": LockWaitDefault,
	} {
		if got := LockWaitOf(q); got != want {
			t.Errorf("LockWaitOf(%q) = %d, want %d", q, got, want)
		}
	}
}

// TestLimitInSubquery checks that an IN subquery with a LIMIT is
// refused with MySQL's message for 1235, and that one without, or with
// the LIMIT in a derived table inside it, is not.
func TestLimitInSubquery(t *testing.T) {
	p := SyntaxParser{Parser: gsql.NewMysqlParser()}
	for _, c := range []struct {
		query   string
		refused bool
	}{
		{"SELECT a FROM t WHERE c IN (SELECT c FROM u ORDER BY a LIMIT 1)", true},
		{"SELECT a FROM t WHERE c NOT IN (SELECT c FROM u LIMIT 2) AND a > 0", true},
		{"SELECT c IN (SELECT c FROM u UNION SELECT 1 LIMIT 1) FROM t", true},
		{"SELECT a FROM t WHERE c IN (SELECT c FROM (SELECT c FROM u LIMIT 1) d)", false},
		{"SELECT a FROM t WHERE EXISTS (SELECT c FROM u LIMIT 1) LIMIT 3", false},
		{"SELECT a FROM t WHERE c IN (1, 2) LIMIT 1", false},
	} {
		_, err := p.ParseSimple(c.query)
		switch {
		case c.refused && (err == nil || !strings.Contains(err.Error(), "doesn't yet support 'LIMIT & IN/ALL/ANY/SOME subquery'")):
			t.Errorf("%s: %v, want 1235's message", c.query, err)
		case !c.refused && err != nil:
			t.Errorf("%s: %v", c.query, err)
		}
	}
}

// TestTypedLiterals checks that DATE, TIME and TIMESTAMP before a string
// make a cast of the value read as MySQL reads the literal, that the
// select items keep the names the client wrote and the statement's
// remainder its text, and that the same words elsewhere (a column
// named date, a string's text, a cast's type) are left alone.
func TestTypedLiterals(t *testing.T) {
	p := SyntaxParser{Parser: gsql.NewMysqlParser()}
	for _, c := range []struct {
		query, names string
	}{
		{"SELECT DATE'2020-1-1' + 1, time  \"10:00:00.5\" AS x, TIMESTAMP '2020-01-01 10:00:00.25'", "DATE'2020-1-1' + 1|x|TIMESTAMP '2020-01-01 10:00:00.25'"},
		{"SELECT 'a date', `date` 'b', CAST(s AS DATE) FROM t WHERE d = DATE'20200101'", "a date|b|CAST(s AS DATE)"},
	} {
		stmt, err := p.ParseSimple(c.query)
		if err != nil {
			t.Fatalf("%s: %v", c.query, err)
		}
		var names []string
		_ = ast.Walk(func(node ast.SQLNode) (bool, error) {
			if a, ok := node.(*ast.AliasedExpr); ok {
				name := a.InputExpression
				if !a.As.IsEmpty() {
					name = a.As.String()
				}
				names = append(names, name)
			}
			return true, nil
		}, stmt)
		if got := strings.Join(names, "|"); got != c.names {
			t.Errorf("%s: names %q, want %q", c.query, got, c.names)
		}
	}
	stmt, _, rest, err := p.Parse(gsql.NewEmptyContext(), "SELECT DATE'2020-01-01'; SELECT TIME'10:00'", true)
	if err != nil || strings.TrimSpace(rest) != "SELECT TIME'10:00'" {
		t.Errorf("multi: rest %q, %v", rest, err)
	}
	if s := ast.String(stmt); !strings.Contains(strings.ToLower(s), "cast('2020-01-01' as date)") {
		t.Errorf("multi: parsed %s, want the cast", s)
	}
	for q, want := range map[string]string{
		"SELECT DATE'2020-02-30'":              "Incorrect DATE value: '2020-02-30'",
		"SELECT TIMESTAMP'2020-01-01'":         "Incorrect DATETIME value: '2020-01-01'",
		"SELECT 1 FROM t WHERE TIME'10:60:00'": "Incorrect TIME value: '10:60:00'",
	} {
		if _, err := p.ParseSimple(q); err == nil || err.Error() != want {
			t.Errorf("%s: %v, want %s", q, err, want)
		}
	}
}
