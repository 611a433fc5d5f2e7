package kv

import (
	"errors"
	"fmt"
)

// The errors of a Client whose stores and router are remote (package
// kvrpc, package pd): a node that cannot be reached. The client retries
// such failures with backoff, and returns these only past its deadline, so
// that the SQL layer can answer a clear error (TiDB's 9001 "PD server
// timeout" and 9002 "TiKV server timeout") instead of waiting forever.

// StoreUnavailableError: the store at Addr, which serves the request's
// region, could not be reached before the client's deadline. Undetermined
// says the request may have been applied (it was sent and the connection
// broke before the answer), which matters for a one-phase commit: the
// transaction may have committed.
type StoreUnavailableError struct {
	Addr         string
	Undetermined bool
	Err          error
}

func (e *StoreUnavailableError) Error() string {
	if e.Undetermined {
		return fmt.Sprintf("kv store %s unreachable, result undetermined: %v", e.Addr, e.Err)
	}
	return fmt.Sprintf("kv store %s unreachable: %v", e.Addr, e.Err)
}

func (e *StoreUnavailableError) Unwrap() error { return e.Err }

// ErrRegionUnavailable is wrapped by the error of a request whose store
// answered that the region has no leader and has had none for longer
// than elections take: a quorum of its replicas is down or cut off, so
// no store can serve it until enough of them are back (TiDB's error 9005,
// "Region is unavailable"). The request was not run.
var ErrRegionUnavailable = errors.New("region is unavailable")

// RouterUnavailableError: the placement driver (pd), which routes keys to
// regions and issues timestamps, could not be reached at Addrs before the
// client's deadline.
type RouterUnavailableError struct {
	Addrs string
	Err   error
}

func (e *RouterUnavailableError) Error() string {
	return fmt.Sprintf("pd %s unreachable: %v", e.Addrs, e.Err)
}

func (e *RouterUnavailableError) Unwrap() error { return e.Err }
