package txn

import "fmt"

// TxnTooLargeError: a write would grow the transaction's buffer past its
// size limit (SetSizeLimit; MySQL-side TiDB's error 8004, "Transaction is
// too large"). The write is not buffered; the transaction goes on with
// what it had.
type TxnTooLargeError struct {
	// Size is the buffer's size in bytes the write would have made;
	// Limit the limit.
	Size, Limit int
}

func (e *TxnTooLargeError) Error() string {
	return fmt.Sprintf("txn: transaction is too large: %d bytes buffered, limit %d", e.Size, e.Limit)
}

// SetSizeLimit bounds the bytes of keys and values the transaction
// buffers (Size); 0 means no bound. A write past it fails with
// *TxnTooLargeError, so that one transaction cannot take the process's
// memory.
func (t *Txn) SetSizeLimit(limit int) { t.sizeLimit = limit }

// checkSize refuses a write of e to key that would take the buffer past
// the size limit.
func (t *Txn) checkSize(key []byte, e entry) error {
	if t.sizeLimit <= 0 {
		return nil
	}
	k := string(key)
	grown := t.buf.size + e.size(k)
	if prev, ok := t.buf.entries[k]; ok {
		grown -= prev.size(k)
	}
	if grown > t.sizeLimit {
		return &TxnTooLargeError{Size: grown, Limit: t.sizeLimit}
	}
	return nil
}
