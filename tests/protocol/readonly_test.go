package protocol

import (
	"strings"
	"testing"

	"github.com/percdb/percdb/tests/isolation/testserver"
)

// TestReadOnlyTransactions turns transactions read-only every way MySQL
// offers, and checks that writes then fail with 1792 and reads work.
func TestReadOnlyTransactions(t *testing.T) {
	forEachServer(t, func(t *testing.T, s *testserver.Server) {
		c, _ := dial(t, s)
		const errRO = 1792
		steps := []step{
			{sql: "CREATE TABLE t (id INT PRIMARY KEY, v INT)", want: []uint16{ac}},
			{sql: "INSERT INTO t VALUES (1, 10)", want: []uint16{ac}},
			// The session's transactions.
			{sql: "SET SESSION TRANSACTION READ ONLY", want: []uint16{ac}},
			{sql: "SELECT @@transaction_read_only, @@session.transaction_read_only", want: []uint16{ac}, rows: "[[1 1]]"},
			{sql: "INSERT INTO t VALUES (2, 20)", err: errRO},
			{sql: "UPDATE t SET v = 11 WHERE id = 1", err: errRO},
			{sql: "UPDATE t SET v = 11", err: errRO},
			{sql: "DELETE FROM t WHERE id = 1", err: errRO},
			{sql: "SELECT v FROM t WHERE id = 1", want: []uint16{ac}, rows: "[[10]]"},
			{sql: "BEGIN", want: []uint16{ac | tx | ro}},
			{sql: "INSERT INTO t VALUES (2, 20)", err: errRO},
			{sql: "SELECT v FROM t WHERE id = 1", want: []uint16{ac | tx | ro}, rows: "[[10]]"},
			{sql: "COMMIT", want: []uint16{ac}},
			{sql: "START TRANSACTION READ WRITE", want: []uint16{ac | tx}},
			{sql: "UPDATE t SET v = 12 WHERE id = 1", want: []uint16{ac | tx}},
			{sql: "COMMIT", want: []uint16{ac}},
			{sql: "SET SESSION TRANSACTION READ WRITE", want: []uint16{ac}},
			{sql: "SELECT @@transaction_read_only", want: []uint16{ac}, rows: "[[0]]"},
			{sql: "UPDATE t SET v = 13 WHERE id = 1", want: []uint16{ac}},
			// The variable itself.
			{sql: "SET SESSION transaction_read_only = 1", want: []uint16{ac}},
			{sql: "INSERT INTO t VALUES (2, 20)", err: errRO},
			{sql: "SET SESSION transaction_read_only = OFF", want: []uint16{ac}},
			{sql: "INSERT INTO t VALUES (2, 20)", want: []uint16{ac}},
			// The next transaction only.
			{sql: "SET TRANSACTION READ ONLY", want: []uint16{ac}},
			{sql: "BEGIN", want: []uint16{ac | tx | ro}},
			{sql: "DELETE FROM t WHERE id = 2", err: errRO},
			{sql: "COMMIT", want: []uint16{ac}},
			{sql: "DELETE FROM t WHERE id = 2", want: []uint16{ac}},
			// One transaction.
			{sql: "START TRANSACTION READ ONLY", want: []uint16{ac | tx | ro}},
			{sql: "INSERT INTO t VALUES (3, 30)", err: errRO},
			{sql: "SELECT v FROM t WHERE id = 1", want: []uint16{ac | tx | ro}, rows: "[[13]]"},
			{sql: "ROLLBACK", want: []uint16{ac}},
			// Autocommit off.
			{sql: "SET autocommit = 0", want: []uint16{0}},
			{sql: "SET SESSION TRANSACTION READ ONLY", want: []uint16{0}},
			{sql: "SELECT v FROM t WHERE id = 1", want: []uint16{tx | ro}, rows: "[[13]]"},
			{sql: "UPDATE t SET v = 14 WHERE id = 1", err: errRO},
			{sql: "COMMIT", want: []uint16{0}},
			{sql: "SET SESSION TRANSACTION READ WRITE", want: []uint16{0}},
			{sql: "SET autocommit = 1", want: []uint16{ac}},
			{sql: "SELECT id, v FROM t ORDER BY id", want: []uint16{ac}, rows: "[[1 13]]"},
		}
		if s.Flavor == testserver.MariaDB {
			// MariaDB 10.11's name of the variable.
			for i := range steps {
				steps[i].sql = strings.ReplaceAll(steps[i].sql, "transaction_read_only", "tx_read_only")
			}
		}
		run(t, c, steps)
	})
}

// TestIsolationLevels sets every isolation level the ways MySQL accepts
// and reads it back from transaction_isolation (percdb runs each as
// snapshot isolation; see docs/transactions.md).
func TestIsolationLevels(t *testing.T) {
	forEachServer(t, func(t *testing.T, s *testserver.Server) {
		if s.Flavor == testserver.MariaDB {
			t.Skip("MariaDB 10.11 names the variable tx_isolation")
		}
		c, _ := dial(t, s)
		run(t, c, []step{
			{sql: "SELECT @@transaction_isolation, @@session.transaction_isolation, @@global.transaction_isolation", want: []uint16{ac},
				rows: "[[REPEATABLE-READ REPEATABLE-READ REPEATABLE-READ]]"},
			{sql: "SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED", want: []uint16{ac}},
			{sql: "SELECT @@transaction_isolation", want: []uint16{ac}, rows: "[[READ-COMMITTED]]"},
			{sql: "SET SESSION TRANSACTION ISOLATION LEVEL SERIALIZABLE, READ ONLY", want: []uint16{ac}},
			{sql: "SELECT @@transaction_isolation, @@transaction_read_only", want: []uint16{ac}, rows: "[[SERIALIZABLE 1]]"},
			{sql: "SET SESSION TRANSACTION READ WRITE, ISOLATION LEVEL READ UNCOMMITTED", want: []uint16{ac}},
			{sql: "SELECT @@transaction_isolation, @@transaction_read_only", want: []uint16{ac}, rows: "[[READ-UNCOMMITTED 0]]"},
			{sql: "SET transaction_isolation = 'REPEATABLE-READ'", want: []uint16{ac}},
			{sql: "SELECT @@transaction_isolation", want: []uint16{ac}, rows: "[[REPEATABLE-READ]]"},
			{sql: "SET TRANSACTION ISOLATION LEVEL SERIALIZABLE", want: []uint16{ac}},
			{sql: "BEGIN", want: []uint16{ac | tx}},
			{sql: "SELECT 1", want: []uint16{ac | tx}},
			{sql: "COMMIT", want: []uint16{ac}},
			{sql: "SET SESSION transaction_isolation = 'BOGUS'", err: 1231},
		})
	})
}
