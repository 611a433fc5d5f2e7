package bench

import (
	"fmt"
	"slices"
	"strings"
)

// isolationLevels are the values ValidateIsolation accepts, as the
// servers' isolation variables spell them.
var isolationLevels = []string{"READ-UNCOMMITTED", "READ-COMMITTED", "REPEATABLE-READ", "SERIALIZABLE"}

// ValidateIsolation refuses a transaction isolation level the servers'
// variables would not take ("" is the servers' default and passes). It
// runs before any server starts, so a typo costs nothing, and the level
// is then safe to put into a SET statement.
func ValidateIsolation(level string) error {
	if level != "" && !slices.Contains(isolationLevels, level) {
		return fmt.Errorf("isolation level %q: want one of %s", level, strings.Join(isolationLevels, ", "))
	}
	return nil
}

// IsolationVariable is the name of server's global transaction isolation
// variable: MariaDB 10.11 has only tx_isolation; percdb, like MySQL 8,
// has transaction_isolation (and tx_isolation as the same variable).
func IsolationVariable(server string) string {
	if server == MariaDB {
		return "tx_isolation"
	}
	return "transaction_isolation"
}
