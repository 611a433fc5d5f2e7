package sql

import (
	"context"
	"regexp"

	gsql "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/vitess/go/mysql"

	"github.com/percdb/percdb/executor/tablecodec"
	"github.com/percdb/percdb/kv"
	"github.com/percdb/percdb/sql/internal/lexical"
)

// OPTIMIZE TABLE and REPAIR TABLE (mariadb-check --optimize, --repair),
// which vitess's grammar does not have (1064). Each is run as the ANALYZE
// TABLE of the same tables, so that GMS resolves them as it does for
// ANALYZE (databases, temporary tables, a missing table's Error and
// "Operation failed" rows), with the session's maintenanceOp telling
// buildAnalyze (statsinfo.go) which statement it runs:
//
//   - OPTIMIZE compacts the table's key range through the kv.Client
//     contract (kv.Compactor: every version, lock and write record of the
//     table's rows and indexes rewritten into the store's bottom level, so
//     that what garbage collection deleted gives its space back), then
//     collects its statistics as ANALYZE does, and answers "status OK".
//     Where the client cannot compact (a cluster's KV nodes take no such
//     request yet) a note says so and the statistics are collected.
//     InnoDB answers a note that it recreates the table instead, then OK.
//   - REPAIR answers InnoDB's note: percdb's tables, like InnoDB's, have
//     nothing to repair (CHECK TABLE compares the indexes with the rows,
//     checktable.go).

// Ops of the maintenance statements.
const (
	opAnalyze  = "analyze"
	opOptimize = "optimize"
	opRepair   = "repair"
)

// maintenanceStatement matches OPTIMIZE and REPAIR TABLE: the verb, and
// the table list with REPAIR's options (QUICK, EXTENDED, USE_FRM), which
// change nothing here, after it.
var maintenanceStatement = regexp.MustCompile(`(?is)^\s*(optimize|repair)\s+(?:(?:no_write_to_binlog|local)\s+)?tables?\s+(.+?)((?:\s+(?:quick|extended|use_frm))*)\s*;?\s*$`)

// parseMaintenance recognises OPTIMIZE and REPAIR TABLE in query, and
// returns the op and the ANALYZE TABLE to run for it.
func parseMaintenance(query string) (op, analyze string, ok bool) {
	// Every text statement comes here: the regular expression only
	// for the two.
	if !lexical.LeadingWordIs(query, "optimize") && !lexical.LeadingWordIs(query, "repair") {
		return "", "", false
	}
	m := maintenanceStatement.FindStringSubmatch(query)
	if m == nil {
		return "", "", false
	}
	op = opOptimize
	if m[1][0]|0x20 == 'r' {
		op = opRepair
	}
	return op, "ANALYZE TABLE " + m[2], true
}

// maintain does what OPTIMIZE or REPAIR (op) does to table t of database
// db before its statistics are collected, and returns the rows of its
// answer that come first, and whether the statistics are to be collected.
func maintain(ctx context.Context, op string, t *Table, name string) (rows []gsql.Row, analyze bool, err error) {
	switch op {
	case opRepair:
		return []gsql.Row{{name, op, "note", "The storage engine for the table doesn't support repair"}}, false, nil
	case opOptimize:
		cp, ok := kv.AsCompactor(t.db.provider.store.Client())
		if !ok {
			return []gsql.Row{{name, op, "note", "Table does not support optimize on this node's store client, doing analyze only"}}, true, nil
		}
		start, end := tablecodec.TableRange(t.meta.Def.ID)
		if err := cp.CompactRange(ctx, start, end); err != nil {
			return nil, false, mysql.NewSQLError(codeUnknown, stateGeneral, "optimize %s: %v", name, err)
		}
	}
	return nil, true, nil
}
