package sql

import (
	"context"
	"strconv"
	"strings"

	ast "github.com/dolthub/vitess/go/vt/sqlparser"
)

// What a prepared CALL's arguments were before their placeholders were
// bound. GMS binds a placeholder as the constant it is given, so by the
// time the CALL runs (procexec.go) a placeholder and a constant written
// in the statement look the same. MySQL tells them apart:
//   - a constant written for an OUT or INOUT parameter is error 1414,
//     however the CALL is run;
//   - EXECUTE s USING @x of PREPARE s FROM 'CALL p(?)' binds the
//     placeholder to @x itself: an OUT or INOUT parameter there writes @x
//     when the procedure ends, as CALL p(@x) would (MySQL and MariaDB
//     both; GMS bound @x's value and dropped the result).
//
// The handler (callResults) reads the statement's text before it runs and
// keeps, per argument, what it was (callArg); buildCall reads it.

// callArg is what argument of a prepared CALL was as written.
type callArg struct {
	// placeholder says the argument was a placeholder (?) alone.
	placeholder bool
	// userVar is the user variable (without @) that EXECUTE ... USING
	// bound the placeholder to; "" for none.
	userVar string
}

// preparedCallArgs returns what each argument of a prepared CALL was, from
// stmt, the CALL as parsed at PREPARE, and using, the USING list of the SQL
// EXECUTE that runs it (nil for COM_STMT_EXECUTE); ok is false when stmt is
// not a CALL.
func preparedCallArgs(stmt ast.Statement, using []string) ([]callArg, bool) {
	call, ok := stmt.(*ast.Call)
	if !ok {
		return nil, false
	}
	args := make([]callArg, len(call.Params))
	for i, p := range call.Params {
		v, ok := p.(*ast.SQLVal)
		if !ok || v.Type != ast.ValArg {
			continue
		}
		args[i].placeholder = true
		// GMS names the k-th placeholder :vk and binds it to the k-th
		// USING variable.
		k, err := strconv.Atoi(strings.TrimPrefix(string(v.Val), ":v"))
		if err != nil || k < 1 || k > len(using) {
			continue
		}
		if name, ok := strings.CutPrefix(using[k-1], "@"); ok {
			args[i].userVar = name
		}
	}
	return args, true
}

// binaryCallArgs returns what each argument of query, a CALL prepared
// with COM_STMT_PREPARE, was.
func binaryCallArgs(ctx context.Context, query string) []callArg {
	stmt, _, err := ast.ParseOne(ctx, query)
	if err != nil {
		return nil
	}
	args, _ := preparedCallArgs(stmt, nil)
	return args
}

// executeOfCall returns, when query's first statement is an SQL EXECUTE of
// a statement s prepared as a CALL, what each argument of that CALL was.
// prepared finds s's parsed statement.
func executeOfCall(ctx context.Context, query string, prepared func(name string) (ast.Statement, bool)) ([]callArg, bool) {
	if !mayBeExecute(query) {
		return nil, false
	}
	stmt, _, err := ast.ParseOne(ctx, query)
	if err != nil {
		return nil, false
	}
	ex, ok := stmt.(*ast.Execute)
	if !ok {
		return nil, false
	}
	call, ok := prepared(ex.Name)
	if !ok {
		return nil, false
	}
	return preparedCallArgs(call, ex.VarList)
}
