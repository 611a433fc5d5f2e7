package storedproc

import (
	"encoding/hex"
	"strings"

	ast "github.com/dolthub/vitess/go/vt/sqlparser"
)

// originalPrefix starts the comment GMSText ends a text with: the text as
// written follows in hexadecimal.
const originalPrefix = "/*percdb:original:"

// GMSText returns the text of CREATE PROCEDURE statement text that GMS
// reads: GMS parses a procedure's text with its own parser, not percdb's
// (sql.GlobalParser, at every CALL and for information_schema.ROUTINES)
// and plans it. A text that GMS would refuse (see ForGMS, Rewrite) is
// given as the statement ForGMS makes of it, written out by vitess, and
// ended with a comment that holds the text as written, which Restore
// returns and the interpreter runs. Other texts are returned as they are.
func GMSText(text string) string {
	rewritten, changed := Rewrite(text)
	stmt, err := ast.Parse(rewritten)
	if err != nil {
		return text
	}
	if !forGMSChanges(stmt) && !changed {
		return text
	}
	return ast.String(ForGMS(stmt)) + " " + originalPrefix + hex.EncodeToString([]byte(text)) + "*/"
}

// original returns the text as written that a GMSText ends with.
func original(text string) (string, bool) {
	i := strings.LastIndex(text, originalPrefix)
	if i < 0 || !strings.HasSuffix(text, "*/") {
		return "", false
	}
	b, err := hex.DecodeString(text[i+len(originalPrefix) : len(text)-2])
	if err != nil {
		return "", false
	}
	return string(b), true
}

// forGMSChanges reports whether ForGMS would change stmt.
func forGMSChanges(stmt ast.Statement) bool {
	changed := false
	var check func(st ast.Statement)
	checkList := func(stmts ast.Statements) {
		for _, st := range stmts {
			check(st)
		}
	}
	check = func(st ast.Statement) {
		switch st := st.(type) {
		case *ast.DDL:
			if st.ProcedureSpec != nil && st.ProcedureSpec.Body != nil {
				check(st.ProcedureSpec.Body)
			}
		case *ast.BeginEndBlock:
			checkList(st.Statements)
		case *ast.IfStatement:
			for _, c := range st.Conditions {
				checkList(c.Statements)
			}
			checkList(st.Else)
		case *ast.CaseStatement:
			for _, c := range st.Cases {
				checkList(c.Statements)
			}
			checkList(st.Else)
		case *ast.While:
			checkList(st.Statements)
		case *ast.Repeat:
			checkList(st.Statements)
		case *ast.Loop:
			checkList(st.Statements)
		case *ast.Resignal:
			changed = true
		case *ast.Set:
			changed = changed || len(st.Exprs) > 1
		case *ast.Declare:
			if st.Condition != nil && st.Condition.MysqlErrorCode != nil {
				changed = true
			}
			if h := st.Handler; h != nil {
				changed = changed || refusedHandler(h)
				check(h.Statement)
			}
		}
	}
	check(stmt)
	return changed
}

// refusedHandler reports whether GMS's planner refuses handler h.
func refusedHandler(h *ast.DeclareHandler) bool {
	return len(h.ConditionValues) != 1 || (h.ConditionValues[0].ValueType != ast.DeclareHandlerCondition_NotFound &&
		h.ConditionValues[0].ValueType != ast.DeclareHandlerCondition_SqlException)
}

// ForGMS returns stmt as GMS's planner accepts it when stmt is a CREATE
// PROCEDURE. GMS plans a procedure's body at CREATE PROCEDURE and at
// every CALL, though percdb's interpreter runs it, and refuses with 1149
// what it cannot run: a handler for an error number, an SQLSTATE, a named
// condition, SQLWARNING or several conditions, a condition of an error
// number, RESIGNAL. In the tree GMS gets (never the text the catalog
// keeps, nor the tree the interpreter parses for itself), such handlers
// are for SQLEXCEPTION, such conditions for SQLSTATE '45000' and a
// RESIGNAL is a SIGNAL. Other statements are returned as they are.
func ForGMS(stmt ast.Statement) ast.Statement {
	ddl, ok := stmt.(*ast.DDL)
	if !ok || ddl.ProcedureSpec == nil || ddl.ProcedureSpec.Body == nil {
		return stmt
	}
	ddl.ProcedureSpec.Body = forGMS(ddl.ProcedureSpec.Body)
	return stmt
}

// forGMS is ForGMS of one statement of a body.
func forGMS(st ast.Statement) ast.Statement {
	switch st := st.(type) {
	case *ast.BeginEndBlock:
		forGMSList(st.Statements)
	case *ast.IfStatement:
		for i := range st.Conditions {
			forGMSList(st.Conditions[i].Statements)
		}
		forGMSList(st.Else)
	case *ast.CaseStatement:
		for i := range st.Cases {
			forGMSList(st.Cases[i].Statements)
		}
		forGMSList(st.Else)
	case *ast.While:
		forGMSList(st.Statements)
	case *ast.Repeat:
		forGMSList(st.Statements)
	case *ast.Loop:
		forGMSList(st.Statements)
	case *ast.Resignal:
		return &ast.Signal{SqlStateValue: "45000"}
	case *ast.Set:
		// GMS's interpreter panics on a SET of several variables.
		if len(st.Exprs) > 1 {
			block := &ast.BeginEndBlock{}
			for _, e := range st.Exprs {
				block.Statements = append(block.Statements, &ast.Set{Exprs: ast.SetVarExprs{e}})
			}
			return block
		}
	case *ast.Declare:
		if c := st.Condition; c != nil && c.MysqlErrorCode != nil {
			c.MysqlErrorCode, c.SqlStateValue = nil, "45000"
		}
		if h := st.Handler; h != nil {
			if refusedHandler(h) {
				h.ConditionValues = []ast.DeclareHandlerCondition{{ValueType: ast.DeclareHandlerCondition_SqlException}}
			}
			h.Statement = forGMS(h.Statement)
		}
	}
	return st
}

// forGMSList is forGMS of each statement of a list, in place.
func forGMSList(stmts ast.Statements) {
	for i, st := range stmts {
		stmts[i] = forGMS(st)
	}
}
