package sql

import (
	"fmt"

	gsql "github.com/dolthub/go-mysql-server/sql"
	ast "github.com/dolthub/vitess/go/vt/sqlparser"
)

// Dump files write a value for every column of a row, generated ones
// included: mariadb-dump (of MariaDB and of percdb alike) writes `INSERT
// INTO t VALUES (…)` with the computed values of generated columns, and
// MariaDB ignores a value written to a generated column with warning
// 1906 when sql_mode is not strict, which every dump sets
// (SQL_MODE='NO_AUTO_VALUE_ON_ZERO'). MySQL 8 refuses such a value with
// 3105 in every mode (its mysqldump leaves generated columns out), so
// such dumps did not load into percdb. percdb does as MariaDB when
// sql_mode has neither STRICT_TRANS_TABLES nor STRICT_ALL_TABLES: the
// value of a generated column in an INSERT or REPLACE … VALUES becomes
// DEFAULT (the column is computed), with MariaDB's warning 1906 for each
// value; in strict mode it stays MySQL's 3105.
//
// The rewrite is made when the statement is parsed (generatedDefaults,
// generated.go); GMS clears the warnings after binding, so they wait in
// the session (Session.ignoredGenerated) until the INSERT's iterator is
// built (compat_exec.go).

// codeGeneratedValueIgnored is MariaDB's
// ER_WARNING_NON_DEFAULT_VALUE_FOR_GENERATED_COLUMN.
const codeGeneratedValueIgnored = 1906

// ignoreGeneratedValues returns ins with the values of its generated
// columns made DEFAULT, and notes a warning for each, when sql_mode is
// not strict; ok is false when nothing is to change.
func (p *DatabaseProvider) ignoreGeneratedValues(ctx *gsql.Context, ins *ast.Insert) (*ast.Insert, bool) {
	mode := gsql.LoadSqlMode(ctx)
	if mode.ModeEnabled("STRICT_TRANS_TABLES") || mode.ModeEnabled("STRICT_ALL_TABLES") {
		return nil, false
	}
	var vals ast.Values
	switch r := ins.Rows.(type) {
	case ast.Values:
		vals = r
	case *ast.AliasedValues:
		vals = r.Values
	default:
		return nil, false
	}
	sch, ok := p.generatedSchema(ctx, ins.Table)
	if !ok {
		return nil, false
	}
	// generated[i] names the table's generated column written at
	// position i of a row.
	generated := make([]string, len(ins.Columns))
	if len(ins.Columns) == 0 {
		generated = make([]string, len(sch))
		for i, c := range sch {
			if c.Generated != nil {
				generated[i] = c.Name
			}
		}
	} else {
		for i, c := range ins.Columns {
			if j := sch.IndexOfColName(c.String()); j >= 0 && sch[j].Generated != nil {
				generated[i] = sch[j].Name
			}
		}
	}
	var warnings []string
	for _, row := range vals {
		if len(row) != len(generated) {
			return nil, false // GMS's column count error
		}
		for i, e := range row {
			if _, isDefault := e.(*ast.Default); isDefault || generated[i] == "" {
				continue
			}
			warnings = append(warnings, fmt.Sprintf("The value specified for generated column '%s' in table '%s' has been ignored", generated[i], ins.Table.Name.String()))
		}
	}
	if len(warnings) == 0 {
		return nil, false
	}
	rows := make(ast.Values, len(vals))
	for r, row := range vals {
		rows[r] = append(ast.ValTuple(nil), row...)
		for i := range row {
			if generated[i] != "" {
				rows[r][i] = &ast.Default{}
			}
		}
	}
	out := *ins
	if a, ok := ins.Rows.(*ast.AliasedValues); ok {
		av := *a
		av.Values = rows
		out.Rows = &av
	} else {
		out.Rows = rows
	}
	if len(out.Columns) == 0 {
		out.Columns = make(ast.Columns, len(sch))
		for i, c := range sch {
			out.Columns[i] = ast.NewColIdent(c.Name)
		}
	}
	if s, ok := ctx.Session.(*Session); ok {
		s.ignoredGenerated = warnings
	}
	return &out, true
}

// warnIgnoredGenerated gives the warnings ignoreGeneratedValues noted for
// the statement whose INSERT is being built.
func warnIgnoredGenerated(ctx *gsql.Context) {
	s, ok := ctx.Session.(*Session)
	if !ok || len(s.ignoredGenerated) == 0 {
		return
	}
	// In the order noted: SHOW WARNINGS lists warnings in the order
	// raised (compat_warnings.go), as MySQL's diagnostics area.
	for _, w := range s.ignoredGenerated {
		ctx.Warn(codeGeneratedValueIgnored, "%s", w)
	}
	s.ignoredGenerated = nil
}
