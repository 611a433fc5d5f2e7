package wire

import "encoding/binary"

// noteClientCaps keeps the capability flags of handshake response payload
// (its first 4 bytes, little endian).
func (c *Conn) noteClientCaps(payload []byte) {
	if len(payload) >= 4 {
		c.clientCaps = binary.LittleEndian.Uint32(payload)
	}
}

// ClientCapabilities returns the capability flags the client announced in
// its handshake response: vitess's connection keeps only
// CLIENT_DEPRECATE_EOF and CLIENT_FOUND_ROWS of them, and percdb needs
// CLIENT_MULTI_RESULTS (a CALL's result sets).
func (c *Conn) ClientCapabilities() uint32 { return c.clientCaps }
