package sql

import (
	"context"
	"errors"
	"io/fs"
	"regexp"
	"strings"
	"syscall"

	gsql "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/vitess/go/mysql"
	goerrors "gopkg.in/src-d/go-errors.v1"

	"github.com/percdb/percdb/executor"
	"github.com/percdb/percdb/kv"
	"github.com/percdb/percdb/sql/compat"
	"github.com/percdb/percdb/sql/schemalease"
	"github.com/percdb/percdb/tso"
	"github.com/percdb/percdb/txn"
)

// gcTimeLayout formats the times of error 9006 as TiDB does.
const gcTimeLayout = "2006-01-02 15:04:05.000 -0700"

// MySQL error codes and SQLSTATEs percdb returns itself (GMS maps the rest).
const (
	codeDupEntry          = 1062 // ER_DUP_ENTRY
	codeTableNeedsRebuild = 1707 // ER_TABLE_NEEDS_REBUILD
	codeDiskFull          = 1021 // ER_DISK_FULL
	codeLockWaitTimeout   = 1205 // ER_LOCK_WAIT_TIMEOUT
	codeDeadlock          = 1213 // ER_LOCK_DEADLOCK
	codeUnknown           = 1105 // ER_UNKNOWN_ERROR
	codeParseError        = 1064 // ER_PARSE_ERROR
	codeGCTooEarly        = 9006 // TiDB's ErrGCTooEarly
	codePDTimeout         = 9001 // TiDB's ErrPDServerTimeout
	codeKVTimeout         = 9002 // TiDB's ErrTiKVServerTimeout
	codeRegionDown        = 9005 // TiDB's ErrRegionUnavailable
	codeTableAccess       = 1142 // ER_TABLEACCESS_DENIED_ERROR
	codeLockNoWait        = 3572 // ER_LOCK_NOWAIT
	stateIntegrity        = "23000"
	stateSerialization    = "40001"
	stateGeneral          = "HY000"
	msgDeadlock           = "Deadlock found when trying to get lock; try restarting transaction"
	msgLockWaitTimeout    = "Lock wait timeout exceeded; try restarting transaction"
	msgLockNoWait         = "Statement aborted because lock(s) could not be acquired immediately and NOWAIT is set."
	dupPrimaryKeyPrefix   = "duplicate primary key given: "
	dupUniqueKeyPrefix    = "duplicate unique key given: "
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
	var (
		diskFull *kv.DiskFullError
		tooOld   *kv.GCTooOldError
		tooLarge *txn.TxnTooLargeError
		kvDown   *kv.StoreUnavailableError
		pdDown   *kv.RouterUnavailableError
		stale    *executor.StaleKeysError
	)
	switch {
	case errors.As(err, &tooLarge):
		return mysql.NewSQLError(codeTxnTooLarge, stateGeneral, "Transaction is too large, size: %d", tooLarge.Size)
	case errors.As(err, &tooOld):
		// TiDB's message: the transaction outlived the GC life time (or
		// the GC's wait for it), so the versions it reads may be gone.
		return mysql.NewSQLError(codeGCTooEarly, stateGeneral, "GC life time is shorter than transaction duration, transaction starts at %s, GC safe point is %s",
			tso.Time(tooOld.TS).Format(gcTimeLayout), tso.Time(tooOld.SafePoint).Format(gcTimeLayout))
	case errors.Is(err, txn.ErrWriteConflict), errors.Is(err, txn.ErrTxnAborted), errors.Is(err, txn.ErrDeadlock):
		return mysql.NewSQLError(codeDeadlock, stateSerialization, "%s (%s)", msgDeadlock, err.Error())
	case errors.Is(err, txn.ErrLockWaitTimeout):
		return mysql.NewSQLError(codeLockWaitTimeout, stateGeneral, "%s", msgLockWaitTimeout)
	case errors.As(err, &diskFull) && errors.Is(err, txn.ErrUndetermined):
		// The store refused writes for a stall on the full disk while
		// it held the commit's write (kv.WriteInDoubtError): the commit
		// may still take effect once space is freed.
		return mysql.NewSQLError(codeDiskFull, stateGeneral, "Disk full (%s); %s; the commit was under way and may still take effect once space is freed", diskFull.Dir, diskFull.Reason())
	case errors.As(err, &diskFull):
		return mysql.NewSQLError(codeDiskFull, stateGeneral, "Disk full (%s); %s", diskFull.Dir, diskFull.Reason())
	case errors.Is(err, syscall.ENOSPC):
		// A file outside the store's own guard could not be written for
		// want of space: the timestamp oracle's window file beside the
		// store, above all, when a full disk stops it extending its
		// window. The statement fails as the store's refusals do; the
		// file is written again on the next try once space is freed.
		return mysql.NewSQLError(codeDiskFull, stateGeneral, "Disk full (%s); %s", fullPath(err), err.Error())
	case errors.Is(err, kv.ErrRegionUnavailable):
		// A cluster's region whose quorum is lost: no store can serve it
		// until enough of its replicas are back (TiDB's 9005).
		return mysql.NewSQLError(codeRegionDown, stateGeneral, "Region is unavailable (%s)", err.Error())
	case errors.As(err, &kvDown):
		// A cluster's KV node that stayed unreachable past the client's
		// retries (TiDB's 9002; undetermined: a commit may have happened).
		return mysql.NewSQLError(codeKVTimeout, stateGeneral, "TiKV server timeout (%s)", kvDown.Error())
	case errors.Is(err, txn.ErrUndetermined) && errors.Is(err, context.Canceled):
		// KILL, or the client gone, while the store held the commit's
		// write (Pebble's write stall on a full disk): the statement is
		// interrupted as MySQL's, and the message says the commit may
		// still take effect (kv.WriteInDoubtError).
		return mysql.NewSQLError(codeQueryInterrupted, stateQueryInterrupted, "%s; the commit was under way and may still take effect (%s)", msgQueryInterrupted, err.Error())
	case errors.As(err, &pdDown):
		return mysql.NewSQLError(codePDTimeout, stateGeneral, "PD server timeout (%s)", pdDown.Error())
	case errors.Is(err, schemalease.ErrLeaseExpired):
		return schemaExpiredError(err)
	case errors.Is(err, schemalease.ErrSchemaChanged):
		return schemaChangedError(err)
	case errors.As(err, &stale):
		// Keys written before PAD SPACE strings dropped their trailing
		// spaces (catalog.KeyFormatPadSpace).
		return mysql.NewSQLError(codeTableNeedsRebuild, stateGeneral, "%s", stale.Error())
	case errors.Is(err, txn.ErrAlreadyExists):
		// A concurrent transaction inserted the same key after this one
		// checked it; MySQL would have waited and then failed the same way.
		return mysql.NewSQLError(codeDupEntry, stateIntegrity, "Duplicate entry for key (%s)", err.Error())
	}
	return err
}

// fullPath is the file an ENOSPC error names, or "the data directory"
// when it names none.
func fullPath(err error) string {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Path
	}
	return "the data directory"
}

// finishSQLError adjusts the error GMS produced for a command so that it
// reads as MySQL's: GMS prefixes duplicate-key messages with its own text
// and leaves their SQLSTATE empty, and gives the codes it maps itself the
// general SQLSTATE (errstates.go).
func finishSQLError(err error) error {
	if err == nil {
		return nil
	}
	se, ok := err.(*mysql.SQLError)
	if !ok {
		// An error of percdb's layers that reached the client without
		// passing toSQLError on its way (the timestamp oracle's, when a
		// statement begins its transaction) still gets its MySQL code.
		if se, ok = toSQLError(err).(*mysql.SQLError); !ok {
			return err
		}
	}
	switch se.Num {
	case codeDupEntry:
		msg := se.Message
		msg = strings.TrimPrefix(msg, dupPrimaryKeyPrefix)
		msg = strings.TrimPrefix(msg, dupUniqueKeyPrefix)
		return mysql.NewSQLError(codeDupEntry, stateIntegrity, "%s", msg)
	case codeUnknown:
		for _, c := range gmsErrorCodes {
			if c.pattern.MatchString(se.Message) {
				msg := se.Message
				switch {
				case c.message != "":
					msg = c.message
				case c.rewrite != "":
					msg = c.pattern.ReplaceAllString(msg, c.rewrite)
				}
				return mysql.NewSQLError(c.code, c.state, "%s", msg)
			}
		}
	}
	if se.Num == mysql.ERBadNullError {
		// GMS's words for MySQL's "Column 'c' cannot be null"
		// (compat_ignorewarn.go).
		if w := badNullWarning(&gsql.Warning{Code: se.Num, Message: se.Message}); w.Message != se.Message {
			return mysql.NewSQLError(se.Num, "23000", "%s", w.Message)
		}
	}
	if state, ok := mysqlStates[se.Num]; ok && se.State == stateGeneral {
		return mysql.NewSQLError(se.Num, state, "%s", se.Message)
	}
	return se
}

// gmsErrorCode gives the MySQL code of a GMS error kind that GMS's own
// mapping (sql.CastSQLError) leaves as 1105, recognised by its message.
type gmsErrorCode struct {
	pattern *regexp.Regexp
	code    int
	state   string
	// message replaces GMS's message when not empty.
	message string
	// rewrite, when not empty, is MySQL's message as a replacement
	// template of pattern (regexp.Expand: $1 is its first group).
	rewrite string
}

// gmsErrorCodes is built once and never changed.
var gmsErrorCodes = []gmsErrorCode{
	kindCode(gsql.ErrTableAlreadyExists, 1050, "42S01"),         // ER_TABLE_EXISTS_ERROR
	kindCode(gsql.ErrExistingView, 1050, "42S01"),               // ER_TABLE_EXISTS_ERROR
	kindCode(gsql.ErrViewDoesNotExist, 1146, "42S02"),           // ER_NO_SUCH_TABLE
	kindCode(gsql.ErrTableColumnNotFound, 1054, "42S22"),        // ER_BAD_FIELD_ERROR
	kindCode(gsql.ErrColumnNotFound, 1054, "42S22"),             // ER_BAD_FIELD_ERROR
	kindCode(gsql.ErrUnknownColumn, 1054, "42S22"),              // ER_BAD_FIELD_ERROR
	kindCode(gsql.ErrDuplicateColumn, 1060, "42S21"),            // ER_DUP_FIELDNAME
	kindCode(gsql.ErrDuplicateKey, 1061, "42000"),               // ER_DUP_KEYNAME
	kindCode(gsql.ErrIndexNotFound, 1091, "42000"),              // ER_CANT_DROP_FIELD_OR_KEY
	kindCode(gsql.ErrUnsupportedFeature, 1235, "42000"),         // ER_NOT_SUPPORTED_YET
	kindCode(gsql.ErrReadOnlyTransaction, 1792, "25006"),        // ER_CANT_EXECUTE_IN_READ_ONLY_TRANSACTION
	kindCode(gsql.ErrInvalidSystemVariableValue, 1231, "42000"), // ER_WRONG_VALUE_FOR_VAR
	kindCode(gsql.ErrSystemVariableGlobalOnly, 1229, "HY000"),   // ER_GLOBAL_VARIABLE
	kindCode(gsql.ErrSystemVariableReadOnly, 1238, "HY000"),     // ER_INCORRECT_GLOBAL_LOCAL_VAR
	kindCode(gsql.ErrTableNotFound, 1146, "42S02"),              // ER_NO_SUCH_TABLE
	kindCode(gsql.ErrUnknownTable, 1051, "42S02"),               // ER_BAD_TABLE_ERROR
	kindCode(gsql.ErrDatabaseNotFound, 1049, "42000"),           // ER_BAD_DB_ERROR
	kindCode(gsql.ErrCantDropFieldOrKey, 1091, "42000"),         // ER_CANT_DROP_FIELD_OR_KEY
	kindCode(gsql.ErrDatabaseExists, 1007, "HY000"),             // ER_DB_CREATE_EXISTS
	kindCode(gsql.ErrUnsupportedSyntax, 1149, "42000"),          // ER_SYNTAX_ERROR
	kindCode(gsql.ErrCheckConstraintViolated, 3819, "HY000"),    // ER_CHECK_CONSTRAINT_VIOLATED
	kindCode(gsql.ErrSavepointDoesNotExist, 1305, "42000"),      // ER_SP_DOES_NOT_EXIST
	kindCode(gsql.ErrUnknownPreparedStatement, 1243, "HY000"),   // ER_UNKNOWN_STMT_HANDLER
	kindMessage(gsql.ErrTriggerDoesNotExist, codeTriggerDoesNotExist, stateGeneral, msgTriggerDoesNotExist),
	kindCode(gsql.ErrStoredProcedureDoesNotExist, codeProcedureDoesNotExist, stateSyntax),
	// DROP EVENT of an event there is not (routines.go):
	// ER_EVENT_DOES_NOT_EXIST.
	{pattern: regexp.MustCompile(`^Event '(.*)' does not exist$`), code: 1539, state: stateGeneral, rewrite: "Unknown event '$1'"},
	// A name without a database and no current one: MySQL's
	// ER_NO_DB_ERROR (GMS's was 1105).
	kindMessage(gsql.ErrNoDatabaseSelected, 1046, "3D000", "No database selected"),
	// ER_NON_DEFAULT_VALUE_FOR_GENERATED_COLUMN, names quoted as MySQL
	// quotes them.
	{pattern: regexp.MustCompile(`^The value specified for generated column "(.*)" in table "(.*)" is not allowed\.$`), code: 3105, state: stateGeneral, rewrite: "The value specified for generated column '$1' in table '$2' is not allowed."},
	// A key made from a column of a table written in an older key format
	// (executor.StaleKeysError), wherever the reads that met it wrapped
	// it: MySQL's ER_TABLE_NEEDS_REBUILD, its own text.
	{pattern: regexp.MustCompile(`(?s)^.*(Table rebuild required\. Please do "ALTER TABLE .*" or dump/reload to fix it!)$`), code: codeTableNeedsRebuild, state: stateGeneral, rewrite: "$1"},
	// ADD COLUMN of a column the table has (GORM's AutoMigrate tells it by
	// the code): MySQL's ER_DUP_FIELDNAME.
	{pattern: regexp.MustCompile(`^Column "(.*)" already exists$`), code: 1060, state: "42S21", rewrite: "Duplicate column name '$1'"},
	// A table or alias named twice in a FROM clause or a LOCK TABLES:
	// MySQL's ER_NONUNIQ_TABLE.
	{pattern: regexp.MustCompile(`^Not unique table/alias: (.*)$`), code: 1066, state: stateSyntax, rewrite: "Not unique table/alias: '$1'"},
	// GROUPING() misused (sql/compat/rollup.go), an error of the
	// parser's that GMS passes on as its message: MySQL's
	// ER_INVALID_GROUP_FUNC_USE and ER_FIELD_IN_GROUPING_NOT_GROUP_BY.
	{pattern: regexp.MustCompile(`^Invalid use of group function$`), code: 1111, state: stateGeneral},
	{pattern: regexp.MustCompile(`^Argument #\d+ of GROUPING function is not in GROUP BY$`), code: 3602, state: stateGeneral},
	// LOAD DATA LOCAL with the global local_infile off: MySQL's
	// ER_CLIENT_LOCAL_FILES_DISABLED (package loaddata).
	{pattern: regexp.MustCompile(`^local_infile needs to be set to 1 to use LOCAL$`), code: 3948, state: stateSyntax, message: "Loading local data is disabled; this must be enabled on both the client and server sides"},
	// vitess's parser errors (GMS's ErrSyntaxError, whose "%s" format
	// says nothing): MySQL's ER_PARSE_ERROR, with vitess's message.
	{pattern: regexp.MustCompile(`^syntax error at position \d+`), code: codeParseError, state: stateSyntax},
	// Syntax MySQL parses and refuses (sql/compat/syntax.go), which GMS
	// wraps as a parser error: MySQL's ER_NOT_SUPPORTED_YET.
	{pattern: regexp.MustCompile(`^This version of MySQL doesn't yet support '[^']*'$`), code: 1235, state: stateSyntax},
	// A typed literal whose text is no value of its type
	// (sql/compat/typedliterals.go), a parser's error as well: MySQL's
	// ER_WRONG_VALUE.
	{pattern: regexp.MustCompile(`^Incorrect (DATE|TIME|DATETIME) value: '.*'$`), code: 1525, state: stateGeneral},
	// The statement's context was cancelled: by KILL QUERY or KILL
	// CONNECTION (GMS's process list cancels it), or because its client
	// went away (stmtctx.go). MySQL's ER_QUERY_INTERRUPTED. (A deadline
	// of max_execution_time is "context deadline exceeded", which
	// limitHandler makes 3024.)
	{pattern: regexp.MustCompile(`context canceled$`), code: codeQueryInterrupted, state: stateQueryInterrupted, message: msgQueryInterrupted},
}

// kindMessage is kindCode with MySQL's message instead of GMS's.
func kindMessage(k *goerrors.Kind, code int, state, message string) gmsErrorCode {
	c := kindCode(k, code, state)
	c.message = message
	return c
}

// kindCode turns a GMS error kind's printf format into a pattern of the
// messages it produces.
func kindCode(k *goerrors.Kind, code int, state string) gmsErrorCode {
	return gmsErrorCode{pattern: compat.KindPattern(k, ".*"), code: code, state: state}
}
