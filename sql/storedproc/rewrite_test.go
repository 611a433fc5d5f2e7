package storedproc

import (
	"fmt"
	"strings"
	"testing"

	"github.com/dolthub/vitess/go/mysql"
	ast "github.com/dolthub/vitess/go/vt/sqlparser"
)

// TestRewriteRestore checks that Rewrite marks exactly the GET
// DIAGNOSTICS and DO statements of a body, that the result parses, and that
// Restore gives the text back as written.
func TestRewriteRestore(t *testing.T) {
	for _, tc := range []struct {
		text    string
		markers int
	}{
		{"CREATE PROCEDURE p() BEGIN GET DIAGNOSTICS @n = NUMBER; END", 1},
		{"CREATE PROCEDURE p() BEGIN DECLARE EXIT HANDLER FOR SQLEXCEPTION BEGIN GET STACKED DIAGNOSTICS CONDITION 1 @m = MESSAGE_TEXT; END; DO 1; END", 2},
		{"CREATE PROCEDURE p() BEGIN WHILE 1 = 0 DO DO SLEEP(0); END WHILE; END", 1},
		{"CREATE PROCEDURE p() BEGIN IF 1 THEN do get_lock('a;b', 1); END IF; l: LOOP LEAVE l; END LOOP; END", 1},
		{"CREATE PROCEDURE p() BEGIN SELECT 'GET DIAGNOSTICS; DO 1' /* DO 2; */; END", 0},
		{"CREATE PROCEDURE p() BEGIN DECLARE x INT; WHILE x < 3 DO SET x = x + 1; END WHILE; END", 0},
	} {
		got, changed := Rewrite(tc.text)
		if n := strings.Count(got, markerPrefix); n != tc.markers || changed != (tc.markers > 0) {
			t.Errorf("Rewrite(%q) = %q: %d markers, want %d", tc.text, got, n, tc.markers)
			continue
		}
		if _, err := ast.Parse(got); err != nil {
			t.Errorf("Rewrite(%q) = %q does not parse: %v", tc.text, got, err)
		}
		if back := Restore(got); back != tc.text {
			t.Errorf("Restore(%q) = %q, want %q", got, back, tc.text)
		}
	}
}

// TestGMSText checks that a procedure GMS would refuse is given to it in a
// form its parser reads and without what its planner refuses, and that
// Restore returns the text as written; one GMS reads is left as it is.
func TestGMSText(t *testing.T) {
	plain := "CREATE PROCEDURE p(IN a INT) BEGIN DECLARE CONTINUE HANDLER FOR NOT FOUND SET a = 1; SELECT a; END"
	if got := GMSText(plain); got != plain {
		t.Errorf("GMSText(%q) = %q, want it unchanged", plain, got)
	}
	for _, text := range []string{
		"CREATE PROCEDURE p() BEGIN DECLARE CONTINUE HANDLER FOR 1062 SELECT 1; INSERT INTO t VALUES (1); END",
		"CREATE PROCEDURE p() BEGIN DECLARE dup CONDITION FOR 1062; DECLARE EXIT HANDLER FOR dup RESIGNAL; END",
		"CREATE PROCEDURE p() BEGIN DECLARE a, b INT; SET a = 1, b = 2; GET DIAGNOSTICS @n = NUMBER; END",
	} {
		got := GMSText(text)
		stmt, err := ast.Parse(got)
		if err != nil {
			t.Errorf("GMSText(%q) = %q does not parse: %v", text, got, err)
			continue
		}
		if forGMSChanges(stmt) {
			t.Errorf("GMSText(%q) = %q still has what GMS refuses", text, got)
		}
		if back := Restore(got); back != text {
			t.Errorf("Restore(GMSText(%q)) = %q", text, back)
		}
	}
}

// TestHandlerChoice checks MySQL's choice of handler: the innermost block
// with one first, then the most specific in that block; classes by
// SQLSTATE (02 is NOT FOUND only, 01 SQLWARNING only).
func TestHandlerChoice(t *testing.T) {
	errno := func(n int) handlerCond {
		return handlerCond{kind: ast.DeclareHandlerCondition_MysqlErrorCode, errno: n}
	}
	state := func(s string) handlerCond { return handlerCond{kind: ast.DeclareHandlerCondition_SqlState, state: s} }
	class := func(k ast.DeclareHandlerConditionValue) handlerCond { return handlerCond{kind: k} }
	outer := newScope(nil)
	inner := newScope(outer)
	hOuterDup := &handler{scope: outer, conds: []handlerCond{errno(1062)}}
	hOuterNF := &handler{scope: outer, conds: []handlerCond{class(ast.DeclareHandlerCondition_NotFound)}}
	hInnerExc := &handler{scope: inner, conds: []handlerCond{class(ast.DeclareHandlerCondition_SqlException)}}
	hInnerState := &handler{scope: inner, conds: []handlerCond{state("42S02")}}
	hInnerWarn := &handler{scope: inner, conds: []handlerCond{class(ast.DeclareHandlerCondition_SqlWarning)}}
	outer.handlers = []*handler{hOuterDup, hOuterNF}
	inner.handlers = []*handler{hInnerExc, hInnerState, hInnerWarn}
	for _, tc := range []struct {
		c    *mysql.SQLError
		from *scope
		want *handler
	}{
		{mysql.NewSQLError(1062, "23000", "dup"), inner, hInnerExc}, // innermost block first
		{mysql.NewSQLError(1062, "23000", "dup"), outer, hOuterDup},
		{mysql.NewSQLError(1146, "42S02", "no table"), inner, hInnerState}, // most specific
		{mysql.NewSQLError(1329, "02000", "no data"), inner, hOuterNF},     // not an exception
		{mysql.NewSQLError(1642, "01000", "warn"), inner, hInnerWarn},
		{mysql.NewSQLError(1329, "02000", "no data"), nil, nil},
	} {
		if got := findHandler(tc.from, tc.c); got != tc.want {
			t.Errorf("findHandler(%v): got %p, want %p", tc.c, got, tc.want)
		}
	}
	// A handler's own block's handlers are not for its statement's errors.
	inner.suspended++
	if got := findHandler(inner, mysql.NewSQLError(1062, "23000", "dup")); got != hOuterDup {
		t.Errorf("with the inner block's handlers running: got %p, want the outer block's", got)
	}
}

// TestReturnsRows checks which bodies return result sets (MySQL's 1312
// for a client without CLIENT_MULTI_RESULTS).
func TestReturnsRows(t *testing.T) {
	for text, want := range map[string]bool{
		"CREATE PROCEDURE p() BEGIN INSERT INTO t SELECT * FROM u; END":                              false,
		"CREATE PROCEDURE p() BEGIN DECLARE x INT; SELECT 1 INTO x; SET x = (SELECT 2); END":         false,
		"CREATE PROCEDURE p() BEGIN DECLARE c CURSOR FOR SELECT 1; GET DIAGNOSTICS @n = NUMBER; END": false,
		"CREATE PROCEDURE p() BEGIN IF 1 THEN WHILE 0 DO SELECT 1; END WHILE; END IF; END":           true,
		"CREATE PROCEDURE p() BEGIN DECLARE EXIT HANDLER FOR SQLEXCEPTION SELECT 'failed'; END":      true,
		"CREATE PROCEDURE p() SELECT 1 UNION SELECT 2":                                               true,
	} {
		spec, err := parseProcedure(text)
		if err != nil {
			t.Fatal(err)
		}
		if got := returnsRows(spec.Body); got != want {
			t.Errorf("returnsRows(%s) = %v, want %v", text, got, want)
		}
	}
}

// TestParseFunction splits CREATE FUNCTION statements into their header
// (database, name, parameters, return type) and body, and gives GMS the
// statements of functions as procedure statements under FunctionPrefix,
// the CREATE FUNCTION text kept whole.
func TestParseFunction(t *testing.T) {
	for _, tc := range []struct {
		text, want string
	}{
		{"CREATE FUNCTION f(a INT) RETURNS INT DETERMINISTIC RETURN a + 1", "f [a] int return"},
		{"create definer=`root`@`%` function if not exists db1.`g h`(a int, b varchar(10)) returns decimal(10,2) unsigned reads sql data comment 'x' begin declare c int default 1; return a * c; end",
			"db1.g h [a b] decimal(10,2) begin"},
		{"CREATE FUNCTION s() RETURNS VARCHAR(20) CHARSET utf8mb4 COLLATE utf8mb4_bin NO SQL RETURN 'x'", "s [] varchar(20) COLLATE utf8mb4_bin return"},
		{"CREATE FUNCTION n() RETURNS BIGINT RETURN (SELECT COUNT(*) FROM t)", "n [] bigint return"},
	} {
		fn, err := ParseFunction(tc.text)
		if err != nil {
			t.Errorf("ParseFunction(%q): %v", tc.text, err)
			continue
		}
		var params []string
		for _, p := range fn.Params {
			params = append(params, p.Name)
		}
		name := fn.Name
		if fn.DB != "" {
			name = fn.DB + "." + name
		}
		body := strings.ToLower(strings.Fields(ast.String(fn.Body))[0])
		if got := fmt.Sprintf("%s [%s] %s %s", name, strings.Join(params, " "), fn.Returns.String(), body); got != tc.want {
			t.Errorf("ParseFunction(%q) = %s, want %s", tc.text, got, tc.want)
		}
		rewritten, ok := Rewrite(tc.text)
		if !ok || !strings.HasPrefix(rewritten, "CREATE PROCEDURE ") {
			t.Errorf("Rewrite(%q) = %q, %v", tc.text, rewritten, ok)
		}
		if back, ok := FunctionText(rewritten); !ok || back != tc.text {
			t.Errorf("FunctionText(%q) = %q, %v; want the text as written", rewritten, back, ok)
		}
	}
	for _, bad := range []string{
		"CREATE FUNCTION f(a INT) RETURN a",
		"CREATE FUNCTION f(OUT a INT) RETURNS INT RETURN 1",
		"CREATE FUNCTION f(a INT RETURNS INT RETURN 1",
		"CREATE FUNCTION f() RETURNS NOSUCHTYPE RETURN 1",
	} {
		if fn, err := ParseFunction(bad); err == nil {
			t.Errorf("ParseFunction(%q) = %+v, want an error", bad, fn)
		}
	}
	// A dump's function, its parts in versioned comments.
	dumped := "/*!50003 CREATE*/ /*!50020 DEFINER=`root`@`localhost`*/ /*!50003 FUNCTION `f`(a INT) RETURNS int(11)\n    DETERMINISTIC\nRETURN a + 1 */"
	rewritten, ok := Rewrite(dumped)
	back, _ := FunctionText(rewritten)
	if want := "CREATE DEFINER=`root`@`localhost` FUNCTION `f`(a INT) RETURNS int(11)\n    DETERMINISTIC\nRETURN a + 1"; !ok || back != want {
		t.Errorf("Rewrite of a dumped function: %q (%v), want the text %q", back, ok, want)
	}
	for text, want := range map[string]string{
		"DROP FUNCTION f":                "DROP PROCEDURE `percdb_function$f`",
		"drop function if exists d.`f`;": "DROP PROCEDURE IF EXISTS `d`.`percdb_function$f`",
		"SHOW CREATE FUNCTION d.f":       "SHOW CREATE PROCEDURE `d`.`percdb_function$f`",
	} {
		if got, ok := Rewrite(text); !ok || got != want {
			t.Errorf("Rewrite(%q) = %q, %v; want %q", text, got, ok, want)
		}
	}
}
