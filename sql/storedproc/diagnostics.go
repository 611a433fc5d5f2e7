package storedproc

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	gsql "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/dolthub/vitess/go/mysql"
	ast "github.com/dolthub/vitess/go/vt/sqlparser"

	"github.com/percdb/percdb/sql/compat"
)

// diagArea is a diagnostics area: the conditions the last statement
// raised and the rows it changed.
type diagArea struct {
	conds    []*mysql.SQLError
	rowCount int64
}

// isMarker reports whether st is a marked statement (see markerPrefix).
func isMarker(st ast.Statement) bool {
	_, ok := markerText(st)
	return ok
}

// markerText returns the statement a marked SELECT stands for.
func markerText(st ast.Statement) (string, bool) {
	sel, ok := st.(*ast.Select)
	if !ok || len(sel.SelectExprs) != 1 || len(sel.From) != 0 {
		return "", false
	}
	ae, ok := sel.SelectExprs[0].(*ast.AliasedExpr)
	if !ok {
		return "", false
	}
	lit, ok := ae.Expr.(*ast.SQLVal)
	if !ok || lit.Type != ast.StrVal {
		return "", false
	}
	return markedStatement(string(lit.Val))
}

// marked runs a statement vitess's grammar lacks: GET DIAGNOSTICS or DO.
func (f *frame) marked(text string, sc *scope) error {
	word, rest := firstWord(text)
	if word == "DO" {
		stmt, err := ast.Parse("SELECT " + rest)
		if err != nil {
			return mysql.NewSQLError(mysql.ERSyntaxError, "42000", "%s", err.Error())
		}
		f.bind(sc, stmt)
		_, _, err = f.query(stmt)
		return err
	}
	return f.getDiagnostics(text, sc)
}

// getDiagnostics runs GET [CURRENT | STACKED] DIAGNOSTICS:
//
//	GET DIAGNOSTICS target = NUMBER | ROW_COUNT [, ...]
//	GET DIAGNOSTICS CONDITION n target = item [, ...]
//
// A target is a local variable, a parameter or a user variable.
func (f *frame) getDiagnostics(text string, sc *scope) error {
	_, rest := firstWord(text) // GET
	word, after := firstWord(rest)
	da := f.diag
	switch word {
	case "STACKED":
		if len(f.handling) == 0 {
			return mysql.NewSQLError(1887, "0Z002", "GET STACKED DIAGNOSTICS when handler not active")
		}
		da = f.handling[len(f.handling)-1]
		rest = after
	case "CURRENT":
		rest = after
	}
	_, rest = firstWord(rest) // DIAGNOSTICS
	var cond *mysql.SQLError
	word, after = firstWord(rest)
	if word == "CONDITION" {
		numText, items, _ := strings.Cut(strings.TrimSpace(after), " ")
		n, err := f.number(sc, numText)
		if err != nil {
			return err
		}
		if n < 1 || n > int64(len(da.conds)) {
			return mysql.NewSQLError(1758, "35000", "Invalid condition number")
		}
		cond = da.conds[n-1]
		rest = items
	}
	for _, item := range strings.Split(rest, ",") {
		target, name, ok := strings.Cut(item, "=")
		target, name = strings.TrimSpace(target), strings.ToUpper(strings.TrimSpace(name))
		if !ok || target == "" {
			return mysql.NewSQLError(mysql.ERSyntaxError, "42000", "You have an error in your SQL syntax near '%s'", strings.TrimSpace(item))
		}
		v, t, err := diagItem(da, cond, name)
		if err != nil {
			return err
		}
		if err := f.assign(sc, strings.Trim(target, "`"), v, t); err != nil {
			return err
		}
	}
	return nil
}

// GetDiagnostics runs GET [CURRENT] DIAGNOSTICS outside a stored
// program, on the conditions and row count of the session's previous
// statement: its targets are user variables (any other is MySQL's 1327),
// a CONDITION number a literal or a user variable. GET STACKED outside a
// handler is 1887.
func GetDiagnostics(ctx *gsql.Context, text string, conds []*mysql.SQLError, rowCount int64) error {
	f := &frame{ctx: ctx, diag: &diagArea{conds: conds, rowCount: rowCount}}
	return f.getDiagnostics(text, nil)
}

// diagItem returns the value of a statement item (cond nil) or condition
// item of a diagnostics area.
func diagItem(da *diagArea, cond *mysql.SQLError, name string) (any, gsql.Type, error) {
	bad := mysql.NewSQLError(mysql.ERSyntaxError, "42000", "You have an error in your SQL syntax near '%s'", name)
	if cond == nil {
		switch name {
		case "NUMBER":
			return int64(len(da.conds)), types.Int64, nil
		case "ROW_COUNT":
			return da.rowCount, types.Int64, nil
		}
		return nil, nil, bad
	}
	switch name {
	case "MYSQL_ERRNO":
		return int64(cond.Num), types.Int64, nil
	case "MESSAGE_TEXT":
		return cond.Message, types.LongText, nil
	case "RETURNED_SQLSTATE":
		return cond.State, types.LongText, nil
	case "CLASS_ORIGIN", "SUBCLASS_ORIGIN":
		if isStandardClass(cond.State) {
			return "ISO 9075", types.LongText, nil
		}
		return "MySQL", types.LongText, nil
	case "CONSTRAINT_CATALOG", "CONSTRAINT_SCHEMA", "CONSTRAINT_NAME", "CATALOG_NAME",
		"SCHEMA_NAME", "TABLE_NAME", "COLUMN_NAME", "CURSOR_NAME":
		return "", types.LongText, nil
	}
	return nil, nil, bad
}

// isStandardClass reports whether an SQLSTATE's class is one of SQL's
// (its origin is ISO 9075): a digit or A-H first, then a digit or A-H.
func isStandardClass(state string) bool {
	if len(state) < 2 {
		return false
	}
	std := func(c byte) bool { return c >= '0' && c <= '9' || c >= 'A' && c <= 'H' }
	return std(state[0]) && std(state[1])
}

// number returns the value of a CONDITION number: a literal, a local
// variable or parameter, or a user variable.
func (f *frame) number(sc *scope, text string) (int64, error) {
	if n, err := strconv.ParseInt(text, 10, 64); err == nil {
		return n, nil
	}
	var v any
	if strings.HasPrefix(text, "@") {
		_, uv, err := f.ctx.GetUserVariable(f.ctx, strings.ToLower(text[1:]))
		if err != nil {
			return 0, err
		}
		v = uv
	} else if lv := lookup(sc, text); lv != nil {
		v = lv.val
	} else {
		return 0, mysql.NewSQLError(1327, "42000", "Undeclared variable: %s", text)
	}
	n, _, err := types.Int64.Convert(f.ctx, v)
	if err != nil || n == nil {
		return 0, mysql.NewSQLError(1758, "35000", "Invalid condition number")
	}
	return n.(int64), nil
}

// firstWord splits text at its first word, which it returns upper case.
func firstWord(text string) (string, string) {
	text = strings.TrimSpace(text)
	i := 0
	for i < len(text) && compat.IsTokenByte(text[i]) {
		i++
	}
	return strings.ToUpper(text[:i]), text[i:]
}

// literal returns the syntax of value v, for GMS's planner to read as a
// constant (ColName.StoredProcVal).
func literal(v any) ast.Expr {
	switch x := v.(type) {
	case nil:
		return &ast.NullVal{}
	case bool:
		if x {
			return ast.NewIntVal([]byte("1"))
		}
		return ast.NewIntVal([]byte("0"))
	case int8, int16, int32, int64, int, uint8, uint16, uint32, uint64, uint:
		return ast.NewIntVal([]byte(fmt.Sprint(x)))
	case float32:
		return ast.NewFloatVal([]byte(strconv.FormatFloat(float64(x), 'f', -1, 32)))
	case float64:
		return ast.NewFloatVal([]byte(strconv.FormatFloat(x, 'f', -1, 64)))
	case string:
		return ast.NewStrVal([]byte(x))
	case []byte:
		return ast.NewStrVal(x)
	case time.Time:
		return ast.NewStrVal([]byte(x.Format("2006-01-02 15:04:05.999999")))
	case fmt.Stringer:
		return ast.NewStrVal([]byte(x.String()))
	}
	return ast.NewStrVal([]byte(fmt.Sprint(v)))
}
