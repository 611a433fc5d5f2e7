package storedproc

import (
	"encoding/hex"
	"errors"
	"fmt"
	"regexp"
	"strings"

	gsql "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/dolthub/vitess/go/mysql"
	ast "github.com/dolthub/vitess/go/vt/sqlparser"

	"github.com/percdb/percdb/sql/compat"
)

// Stored functions. vitess's grammar has no CREATE FUNCTION, DROP FUNCTION
// or SHOW CREATE FUNCTION, so Rewrite gives GMS each as the same statement
// of a procedure whose name is the function's behind FunctionPrefix, which
// the database (package sql) stores and reads as a function:
//
//	CREATE FUNCTION f(...) ...  ->  CREATE PROCEDURE `percdb_function$f`() SELECT '<marker of the CREATE FUNCTION text>'
//	DROP FUNCTION [IF EXISTS] f ->  DROP PROCEDURE [IF EXISTS] `percdb_function$f`
//	SHOW CREATE FUNCTION f      ->  SHOW CREATE PROCEDURE `percdb_function$f`
//
// so that GMS resolves the database, takes the statement's implicit
// commit and runs the change in the DDL's transaction as for a procedure.
// A function's text is parsed (ParseFunction) by splitting its header
// (name, parameters, RETURNS type) from its characteristics and body,
// which vitess parses as a procedure's.

// FunctionPrefix starts the name under which GMS handles a stored
// function as a procedure (see above).
const FunctionPrefix = "percdb_function$"

// Function is a parsed CREATE FUNCTION statement.
type Function struct {
	// DB is the database the name is qualified with ("" for none).
	DB   string
	Name string
	// Params are the parameters (all IN).
	Params []ast.ProcedureParam
	// Returns is the type of the value returned.
	Returns gsql.Type
	// Characteristics are DETERMINISTIC, READS SQL DATA, ...
	Characteristics []ast.Characteristic
	Body            ast.Statement
	// IfNotExists says CREATE FUNCTION IF NOT EXISTS.
	IfNotExists bool
}

// functionHead matches the start of a CREATE FUNCTION statement up to its
// parameters' opening parenthesis: IF NOT EXISTS, the database and the
// name.
var functionHead = regexp.MustCompile("(?is)^\\s*CREATE\\s+(?:DEFINER\\s*=\\s*\\S+\\s+)?(?:AGGREGATE\\s+)?FUNCTION\\s+(IF\\s+NOT\\s+EXISTS\\s+)?(?:(`[^`]+`|\\w+)\\s*\\.\\s*)?(`[^`]+`|\\w+)\\s*\\(")

// functionOther matches DROP FUNCTION and SHOW CREATE FUNCTION: the
// statement up to the name, the database and the name.
var functionOther = regexp.MustCompile("(?is)^\\s*(DROP\\s+FUNCTION\\s+(?:IF\\s+EXISTS\\s+)?|SHOW\\s+CREATE\\s+FUNCTION\\s+)(?:(`[^`]+`|\\w+)\\s*\\.\\s*)?(`[^`]+`|\\w+)\\s*;?\\s*$")

// unquote returns name without its backquotes.
func unquote(name string) string {
	if len(name) >= 2 && name[0] == '`' {
		return name[1 : len(name)-1]
	}
	return name
}

// quoteName returns name as a quoted identifier.
func quoteName(name string) string {
	return "`" + strings.ReplaceAll(name, "`", "``") + "`"
}

// rewriteFunctionStatement returns a CREATE FUNCTION, DROP FUNCTION or
// SHOW CREATE FUNCTION statement as GMS's procedure statement (see the
// top of the file), and whether text was one. A CREATE FUNCTION that does
// not parse is left alone (vitess then reports the syntax error).
func rewriteFunctionStatement(text string) (string, bool) {
	if strings.Contains(text, "/*!") || strings.Contains(text, "/*M!") {
		// A dump's routine: /*!50003 CREATE*/ /*!50020 DEFINER=...*/
		// /*!50003 FUNCTION ... */.
		text = strings.TrimSpace(unwrapVersioned(text))
	}
	if m := functionOther.FindStringSubmatch(text); m != nil {
		verb := strings.ToUpper(strings.Join(strings.Fields(m[1]), " "))
		verb = strings.Replace(verb, "FUNCTION", "PROCEDURE", 1)
		name := quoteName(FunctionPrefix + unquote(m[3]))
		if m[2] != "" {
			name = quoteName(unquote(m[2])) + "." + name
		}
		return verb + " " + name, true
	}
	fn, err := ParseFunction(text)
	if err != nil {
		return text, false
	}
	name := quoteName(FunctionPrefix + fn.Name)
	if fn.DB != "" {
		name = quoteName(fn.DB) + "." + name
	}
	return "CREATE PROCEDURE " + name + "() SELECT '" + markerPrefix + hex.EncodeToString([]byte(text)) + "'", true
}

// FunctionText returns the CREATE FUNCTION text a procedure's text made by
// Rewrite stands for.
func FunctionText(procedure string) (string, bool) {
	i := strings.Index(procedure, "'"+markerPrefix)
	if i < 0 || !strings.HasSuffix(procedure, "'") {
		return "", false
	}
	return markedStatement(procedure[i+1 : len(procedure)-1])
}

// ParseFunction parses a CREATE FUNCTION statement. The header is read
// here; the return type ends where the rest parses as a procedure's
// characteristics and body (vitess's grammar has both), the type being
// the shortest run of words and parenthesised groups that parses as a
// column type.
func ParseFunction(text string) (*Function, error) {
	m := functionHead.FindStringSubmatchIndex(text)
	if m == nil {
		return nil, errors.New("not a CREATE FUNCTION statement")
	}
	fn := &Function{IfNotExists: m[2] >= 0, Name: unquote(text[m[6]:m[7]])}
	if m[4] >= 0 {
		fn.DB = unquote(text[m[4]:m[5]])
	}
	open := m[1] - 1
	end := closingParen(text, open)
	if end < 0 {
		return nil, errors.New("CREATE FUNCTION: unbalanced parentheses")
	}
	params := text[open+1 : end]
	rest := strings.TrimLeft(text[end+1:], " \t\r\n")
	if len(rest) < 8 || !strings.EqualFold(rest[:7], "RETURNS") || compat.IsTokenByte(rest[7]) {
		return nil, errors.New("CREATE FUNCTION: no RETURNS")
	}
	rest = rest[7:]
	for _, cut := range tokenEnds(rest) {
		typ, err := parseColumnType(rest[:cut])
		if err != nil {
			continue
		}
		proc := "CREATE PROCEDURE " + quoteName(fn.Name) + "(" + params + ") " + rest[cut:]
		rewritten, _ := Rewrite(proc)
		stmt, err := ast.Parse(rewritten)
		if err != nil {
			continue
		}
		ddl, ok := stmt.(*ast.DDL)
		if !ok || ddl.ProcedureSpec == nil || ddl.ProcedureSpec.Body == nil {
			continue
		}
		for _, p := range ddl.ProcedureSpec.Params {
			if p.Direction != ast.ProcedureParamDirection_In {
				return nil, errors.New("CREATE FUNCTION: a parameter with a direction")
			}
		}
		fn.Returns, fn.Params = typ, ddl.ProcedureSpec.Params
		fn.Characteristics, fn.Body = ddl.ProcedureSpec.Characteristics, ddl.ProcedureSpec.Body
		return fn, nil
	}
	return nil, errors.New("CREATE FUNCTION: the return type or the body does not parse")
}

// closingParen returns the index of the parenthesis that closes the one
// at open, or -1.
func closingParen(text string, open int) int {
	depth := 0
	for i := open; i < len(text); {
		switch text[i] {
		case '\'', '"', '`':
			i = compat.SkipQuoted(text, i)
			continue
		case '(':
			depth++
		case ')':
			depth--
			if depth == 0 {
				return i
			}
		}
		i++
	}
	return -1
}

// tokenEnds returns the ends of the first words, parenthesised groups
// and quoted strings of text (up to 12): the places a return type may end.
func tokenEnds(text string) []int {
	var ends []int
	for i := 0; i < len(text) && len(ends) < 12; {
		switch c := text[i]; {
		case c == ' ' || c == '\t' || c == '\r' || c == '\n':
			i++
			continue
		case c == '(':
			j := closingParen(text, i)
			if j < 0 {
				return ends
			}
			i = j + 1
		case c == '\'' || c == '"' || c == '`':
			i = compat.SkipQuoted(text, i)
		case compat.IsTokenByte(c):
			for i < len(text) && compat.IsTokenByte(text[i]) {
				i++
			}
		default:
			i++
		}
		ends = append(ends, i)
	}
	return ends
}

// parseColumnType parses the text of a column type.
func parseColumnType(text string) (gsql.Type, error) {
	stmt, err := ast.Parse("CREATE TABLE t (c " + text + ")")
	if err != nil {
		return nil, err
	}
	ddl, ok := stmt.(*ast.DDL)
	if !ok || ddl.TableSpec == nil || len(ddl.TableSpec.Columns) != 1 {
		return nil, errors.New("not a column type")
	}
	ct := ddl.TableSpec.Columns[0].Type
	if ct.Default != nil || bool(ct.NotNull) || bool(ct.Null) || bool(ct.Autoincrement) || ct.KeyOpt != 0 || ct.Comment != nil || ct.GeneratedExpr != nil {
		return nil, errors.New("not a bare column type")
	}
	return types.ColumnTypeToType(&ct)
}

// CheckFunction returns MySQL's error for a function body CREATE FUNCTION
// refuses: 1320 without a RETURN, 1415 with a SELECT that returns rows to
// the client; db names the function's database.
func CheckFunction(fn *Function, db string) error {
	hasReturn := false
	_ = ast.Walk(func(n ast.SQLNode) (bool, error) {
		if _, ok := n.(*ast.Return); ok {
			hasReturn = true
		}
		return !hasReturn, nil
	}, fn.Body)
	if !hasReturn {
		return mysql.NewSQLError(1320, "42000", "No RETURN found in FUNCTION %s.%s", db, fn.Name)
	}
	if returnsRows(fn.Body) {
		return mysql.NewSQLError(1415, "0A000", "Not allowed to return a result set from a function")
	}
	return nil
}

// returned is a RETURN's value travelling up to the function's call.
type returned struct {
	val any
}

func (r *returned) Error() string { return "RETURN outside a function" }

// CallFunction runs stored function fn of database db with args, in
// ctx's session, and returns its value converted to its return type:
// MySQL's 1318 for a wrong number of arguments, 1321 when the body ends
// without RETURN.
func (e *Env) CallFunction(ctx *gsql.Context, db string, fn *Function, args []any) (any, error) {
	if len(args) != len(fn.Params) {
		return nil, mysql.NewSQLError(1318, "42000", "Incorrect number of arguments for FUNCTION %s.%s; expected %d, got %d", db, fn.Name, len(fn.Params), len(args))
	}
	f := &frame{env: e, ctx: ctx, active: []string{strings.ToLower(db + "." + fn.Name)}, diag: &diagArea{}}
	root := newScope(nil)
	for i, p := range fn.Params {
		t, err := types.ColumnTypeToType(&p.Type)
		if err != nil {
			return nil, err
		}
		v := &variable{typ: t}
		if err := v.set(ctx, args[i]); err != nil {
			return nil, err
		}
		root.vars[strings.ToLower(p.Name)] = v
	}
	err := f.run([]ast.Statement{fn.Body}, root)
	var r *returned
	var x *exitBlock
	switch {
	case errors.As(err, &r):
		if r.val == nil {
			return nil, nil
		}
		v, _, err := fn.Returns.Convert(ctx, r.val)
		if err != nil {
			return nil, fmt.Errorf("value of FUNCTION %s.%s: %w", db, fn.Name, err)
		}
		return v, nil
	case err == nil, errors.As(err, &x) && x.scope == root:
		return nil, mysql.NewSQLError(1321, "2F005", "FUNCTION %s ended without RETURN", fn.Name)
	}
	var rs *raised
	if errors.As(err, &rs) {
		return nil, rs.err
	}
	return nil, err
}

// unwrapVersioned returns text with each versioned comment (/*!NNNNN
// ... */, MariaDB's /*M!NNNNNN ... */) replaced by its contents, as MySQL
// reads it; quoted strings and names are left alone.
func unwrapVersioned(text string) string {
	var out strings.Builder
	for i := 0; i < len(text); {
		c := text[i]
		if c == '\'' || c == '"' || c == '`' {
			j := compat.SkipQuoted(text, i)
			out.WriteString(text[i:j])
			i = j
			continue
		}
		start := -1
		switch {
		case strings.HasPrefix(text[i:], "/*!"):
			start = i + 3
		case strings.HasPrefix(text[i:], "/*M!"):
			start = i + 4
		}
		if start < 0 {
			out.WriteByte(c)
			i++
			continue
		}
		for start < len(text) && text[start] >= '0' && text[start] <= '9' {
			start++
		}
		end := strings.Index(text[start:], "*/")
		if end < 0 {
			out.WriteString(text[i:])
			break
		}
		// The contents, apart from their neighbours by one space.
		if b := out.String(); b != "" && !isSpace(b[len(b)-1]) {
			out.WriteByte(' ')
		}
		out.WriteString(strings.TrimSpace(text[start : start+end]))
		i = start + end + 2
		if i < len(text) && !isSpace(text[i]) {
			out.WriteByte(' ')
		}
	}
	return out.String()
}

// isSpace reports whether c is blank.
func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\r' || c == '\n' }

// QualifyCalls renames each call of a function qualified by a database
// in stmt (db.f(...)), which GMS resolves by the bare name only, to
// FunctionPrefix + "db.f", which the stored functions' provider (package
// sql) resolves in that database. Built-in functions have no qualifier.
func QualifyCalls(stmt ast.Statement) {
	if stmt == nil {
		return
	}
	_ = ast.Walk(func(n ast.SQLNode) (bool, error) {
		if f, ok := n.(*ast.FuncExpr); ok && !f.Qualifier.IsEmpty() {
			f.Name = ast.NewColIdent(FunctionPrefix + f.Qualifier.String() + "." + f.Name.String())
			f.Qualifier = ast.TableIdent{}
		}
		return true, nil
	}, stmt)
}
