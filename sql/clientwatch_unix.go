//go:build unix

package sql

import (
	"errors"
	"syscall"
)

// clientGone reports whether the peer of the socket rc has closed it:
// a peek that reads nothing (end of stream) or fails with a reset. Bytes
// waiting to be read (a command sent ahead) mean the client is there.
func clientGone(rc syscall.RawConn) bool {
	var gone bool
	var buf [1]byte
	err := rc.Read(func(fd uintptr) bool {
		n, _, err := syscall.Recvfrom(int(fd), buf[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
		gone = (n == 0 && err == nil) || errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE)
		return true // never wait for the socket to be readable
	})
	return gone || err != nil
}
