package sql

import (
	"sync"

	gsql "github.com/dolthub/go-mysql-server/sql"
)

// DefaultSQLMode is MySQL 8's default sql_mode, percdb's too. GMS's is
// NO_ENGINE_SUBSTITUTION,ONLY_FULL_GROUP_BY,STRICT_TRANS_TABLES: without
// NO_ZERO_DATE, NO_ZERO_IN_DATE (sql/compat/zerodates.go) and
// ERROR_FOR_DIVISION_BY_ZERO, so a zero date was stored where MySQL 8
// refuses it.
const DefaultSQLMode = "ONLY_FULL_GROUP_BY,STRICT_TRANS_TABLES,NO_ZERO_IN_DATE,NO_ZERO_DATE,ERROR_FOR_DIVISION_BY_ZERO,NO_ENGINE_SUBSTITUTION"

var registerSQLModeOnce sync.Once

// registerSQLMode makes DefaultSQLMode the default (and so the global
// value at start) of GMS's sql_mode variable, once per process, before
// any session reads it.
func registerSQLMode() {
	registerSQLModeOnce.Do(func() {
		sv, _, ok := gsql.SystemVariables.GetGlobal("sql_mode")
		if !ok {
			return
		}
		mv, ok := sv.(*gsql.MysqlSystemVariable)
		if !ok {
			return
		}
		v := *mv
		v.Default = DefaultSQLMode
		gsql.SystemVariables.AddSystemVariables([]gsql.SystemVariable{&v})
	})
}
