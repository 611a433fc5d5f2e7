package sql

import (
	"strings"

	gsql "github.com/dolthub/go-mysql-server/sql"
)

// GMS's information_schema.COLUMNS differs from MySQL 8's in facts that
// ORMs' and GUIs' introspection reads (Django's inspectdb, SQLAlchemy's
// reflection, DBeaver's column editor):
//
//   - CHARACTER_MAXIMUM_LENGTH of TINYTEXT, TEXT, MEDIUMTEXT and LONGTEXT
//     is the octet length divided by the bytes per character (16383 for
//     a utf8mb4 TEXT); MySQL gives the octet length, 65535, whatever the
//     character set;
//   - NUMERIC_PRECISION of MEDIUMINT UNSIGNED is 7, MySQL's is 8 (its
//     largest value has 8 digits);
//   - PRIVILEGES lists the privileges in alphabetical order
//     ("insert,references,select,update"), MySQL in its own
//     ("select,insert,update,references").
//
// mysqlColumnFacts corrects a row of COLUMNS (generationExpressionIter,
// generated.go, reads them all).

// mysqlColumnPrivileges is MySQL's order of the column privileges.
var mysqlColumnPrivileges = []string{"select", "insert", "update", "references"}

// mysqlColumnFacts returns row, a row of information_schema.COLUMNS whose
// columns are at pos, with the facts above as MySQL gives them; row is
// copied before it is changed.
func mysqlColumnFacts(row gsql.Row, pos map[string]int) gsql.Row {
	out, copied := row, false
	set := func(col string, v any) {
		i, ok := pos[col]
		if !ok || out[i] == v {
			return
		}
		if !copied {
			out, copied = append(gsql.Row(nil), row...), true
		}
		out[i] = v
	}
	dataType, _ := row[pos["DATA_TYPE"]].(string)
	switch strings.ToLower(dataType) {
	case "tinytext", "text", "mediumtext", "longtext":
		set("CHARACTER_MAXIMUM_LENGTH", row[pos["CHARACTER_OCTET_LENGTH"]])
	case "mediumint":
		if ct, _ := row[pos["COLUMN_TYPE"]].(string); strings.Contains(strings.ToLower(ct), "unsigned") {
			if _, ok := row[pos["NUMERIC_PRECISION"]].(int); ok { // GMS's type
				set("NUMERIC_PRECISION", 8)
			}
		}
	}
	if privs, ok := row[pos["PRIVILEGES"]].(string); ok && privs != "" {
		have := map[string]bool{}
		for _, p := range strings.Split(privs, ",") {
			have[p] = true
		}
		var ordered []string
		for _, p := range mysqlColumnPrivileges {
			if have[p] {
				ordered = append(ordered, p)
				delete(have, p)
			}
		}
		if len(have) == 0 {
			set("PRIVILEGES", strings.Join(ordered, ","))
		}
	}
	return out
}
