package sql

import (
	"errors"
	"strings"

	gsql "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/vitess/go/mysql"

	"github.com/percdb/percdb/txn"
)

// MySQL error codes and SQLSTATEs percdb returns itself (GMS maps the rest).
const (
	codeDupEntry         = 1062 // ER_DUP_ENTRY
	codeLockWaitTimeout  = 1205 // ER_LOCK_WAIT_TIMEOUT
	codeDeadlock         = 1213 // ER_LOCK_DEADLOCK
	codeUnknown          = 1105 // ER_UNKNOWN_ERROR
	stateIntegrity       = "23000"
	stateSerialization   = "40001"
	stateGeneral         = "HY000"
	msgDeadlock          = "Deadlock found when trying to get lock; try restarting transaction"
	msgLockWaitTimeout   = "Lock wait timeout exceeded; try restarting transaction"
	dupPrimaryKeyPrefix  = "duplicate primary key given: "
	dupUniqueKeyPrefix   = "duplicate unique key given: "
	duplicateEntryPrefix = "Duplicate entry "
)

// toSQLError turns an error of the transaction layer into the MySQL error
// a client expects, so that drivers and sysbench recognise a retryable
// conflict (1213, SQLSTATE 40001) or a lock wait timeout (1205). Other
// errors are returned unchanged for GMS to map. GMS recognises a
// *mysql.SQLError only when it is not wrapped, so this is applied at the
// boundary where an error leaves percdb's code for GMS.
func toSQLError(err error) error {
	if err == nil {
		return nil
	}
	var se *mysql.SQLError
	if errors.As(err, &se) {
		return se
	}
	switch {
	case errors.Is(err, txn.ErrWriteConflict), errors.Is(err, txn.ErrTxnAborted):
		return mysql.NewSQLError(codeDeadlock, stateSerialization, "%s (%s)", msgDeadlock, err.Error())
	case errors.Is(err, txn.ErrLockWaitTimeout):
		return mysql.NewSQLError(codeLockWaitTimeout, stateGeneral, "%s", msgLockWaitTimeout)
	case errors.Is(err, txn.ErrAlreadyExists):
		// A concurrent transaction inserted the same key after this one
		// checked it; MySQL would have waited and then failed the same way.
		return mysql.NewSQLError(codeDupEntry, stateIntegrity, "Duplicate entry for key (%s)", err.Error())
	}
	return err
}

// finishSQLError adjusts the error GMS produced for a command so that it
// reads as MySQL's: GMS prefixes duplicate-key messages with its own text
// and leaves their SQLSTATE empty.
func finishSQLError(err error) error {
	if err == nil {
		return nil
	}
	se, ok := err.(*mysql.SQLError)
	if !ok {
		return err
	}
	if se.Num == codeDupEntry {
		msg := se.Message
		msg = strings.TrimPrefix(msg, dupPrimaryKeyPrefix)
		msg = strings.TrimPrefix(msg, dupUniqueKeyPrefix)
		return mysql.NewSQLError(codeDupEntry, stateIntegrity, "%s", msg)
	}
	return se
}

// duplicateKeyError is the error an editor returns when a write would
// duplicate a primary or unique key. GMS needs sql.UniqueKeyError with the
// existing row to run INSERT ... ON DUPLICATE KEY UPDATE and REPLACE; its
// key string is MySQL's whole message, which the handler unwraps.
func duplicateKeyError(table, index, value string, primary bool, existing gsql.Row) error {
	msg := duplicateEntryPrefix + "'" + value + "' for key '" + table + "." + index + "'"
	return gsql.NewUniqueKeyErr(msg, primary, existing)
}
