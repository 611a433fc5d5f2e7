package tpcc

import (
	"context"
	"database/sql/driver"
	"errors"
	"strconv"

	"github.com/go-sql-driver/mysql"
)

// Error codes a client retries: a deadlock or write conflict (1213,
// ER_LOCK_DEADLOCK), a lock wait timeout (1205, ER_LOCK_WAIT_TIMEOUT) and
// TiDB's "information schema is changed" (8028), which percdb also uses
// for a transaction that met a schema change.
var retryableCodes = []uint16{1213, 1205, 8028}

// Retryable reports whether err is one of the errors a well-behaved client
// answers by running the transaction again.
func Retryable(err error) bool {
	var me *mysql.MySQLError
	if !errors.As(err, &me) {
		return false
	}
	for _, c := range retryableCodes {
		if me.Number == c {
			return true
		}
	}
	return false
}

// Code names err for the error counts: its MySQL error number, or
// "timeout" (the run's deadline cancelled it), "connection" (the driver
// lost the connection), "app" (a result the transaction cannot go on
// with, see errApp) or "other".
func Code(err error) string {
	var me *mysql.MySQLError
	var app errApp
	switch {
	case errors.As(err, &me):
		return strconv.Itoa(int(me.Number))
	case errors.As(err, &app):
		return "app"
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, context.Canceled):
		return "timeout"
	case badConn(err):
		return "connection"
	default:
		return "other"
	}
}

// badConn reports an error after which the connection cannot be used.
func badConn(err error) bool {
	return errors.Is(err, driver.ErrBadConn) || errors.Is(err, mysql.ErrInvalidConn)
}

// errApp is a result that breaks a rule of the workload (a customer name
// with no customer, a new-order row deleted under a lock): the server
// returned something a correct implementation cannot.
type errApp string

func (e errApp) Error() string { return string(e) }

// errRollback is New-Order's intended rollback on an unused item number
// (clause 2.4.2.3): not an error.
var errRollback = errors.New("tpcc: new-order rolled back on an unused item")
