package wire

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"strconv"

	"github.com/dolthub/vitess/go/mysql"
)

// Commands vitess reads past their ends, or on with a nil statement, and
// panics on (the connection is dropped without an answer): percdb answers
// them as MySQL does before vitess sees them, and the connection goes on.

// MySQL's error for a command byte it does not know, which it also
// answers an empty command packet with (it reads one as COM_SLEEP):
// ER_UNKNOWN_COM_ERROR.
const (
	codeUnknownCommand  = 1047
	stateUnknownCommand = "08S01"
	msgUnknownCommand   = "Unknown command"
)

// MySQL's error for a statement id that names no prepared statement:
// ER_UNKNOWN_STMT_HANDLER, with the id and the server function's name.
const (
	codeUnknownStmt  = 1243
	stateUnknownStmt = "HY000"
)

// answerEmpty answers an empty command packet (vitess reads its command
// byte past its end).
func (c *Conn) answerEmpty() error {
	if _, err := c.r.Discard(headerLen); err != nil {
		return err
	}
	c.atCommand = true
	return c.writeError(1, codeUnknownCommand, stateUnknownCommand, msgUnknownCommand)
}

// refuseReset answers a COM_STMT_RESET of n payload bytes that names no
// statement vitess prepared (vitess answers with an error and goes on to
// reset the missing statement), or that is too short to name one
// (malformed).
func (c *Conn) refuseReset(n int, short bool) error {
	_, payload, seq, err := c.readCommand()
	if err != nil {
		return err
	}
	c.atCommand = true
	if short {
		return c.writeError(seq+1, codeMalformed, stateMalformed, msgMalformed)
	}
	id := binary.LittleEndian.Uint32(payload[1:])
	msg := "Unknown prepared statement handler (" + strconv.FormatUint(uint64(id), 10) + ") given to mysqld_stmt_reset"
	return c.writeError(seq+1, codeUnknownStmt, stateUnknownStmt, msg)
}

// checkReplication reads a COM_BINLOG_DUMP_GTID or COM_REGISTER_REPLICA
// (a replica's commands; of one packet) and passes it to vitess when its
// fields are within it: vitess slices a file name or host name by the
// length the packet gives. One that is not is answered with 1835.
func (c *Conn) checkReplication() error {
	pkt, err := c.readPacket()
	if err != nil {
		return err
	}
	payload := pkt[headerLen:]
	if !replicationWellFormed(payload) {
		c.atCommand = true
		return c.writeError(pkt[3]+1, codeMalformed, stateMalformed, msgMalformed)
	}
	c.pending = pkt
	return nil
}

// replicationWellFormed reports whether payload, a COM_BINLOG_DUMP_GTID
// or COM_REGISTER_REPLICA, holds the fields vitess reads.
//
// COM_BINLOG_DUMP_GTID: the command byte, flags (2), server id (4), the
// file name's length (4) and the name, the position (8), and when flags
// has BINLOG_THROUGH_GTID (4) the GTID set's length (4) and the set.
// COM_REGISTER_REPLICA: the command byte, server id (4), host name, user
// and password (each a length byte and the bytes), port (2).
func replicationWellFormed(payload []byte) bool {
	d := decoder{b: payload, pos: 1}
	if payload[0] == mysql.ComBinlogDumpGTID {
		flags, ok := d.uint16()
		if _, ok2 := d.bytes(4); !ok || !ok2 {
			return false
		}
		name, ok := d.uint32()
		if !ok {
			return false
		}
		if _, ok := d.bytes(int(min(name, uint32(len(payload))+1))); !ok {
			return false
		}
		if _, ok := d.uint64(); !ok {
			return false
		}
		if flags&0x04 == 0 {
			return true
		}
		size, ok := d.uint32()
		if !ok {
			return false
		}
		_, ok = d.bytes(int(min(size, uint32(len(payload))+1)))
		return ok
	}
	if _, ok := d.bytes(4); !ok {
		return false
	}
	for range 3 {
		n, ok := d.byte()
		if !ok {
			return false
		}
		if _, ok := d.bytes(int(n)); !ok {
			return false
		}
	}
	_, ok := d.uint16()
	return ok
}

// MySQL's error for a handshake response it cannot read:
// ER_HANDSHAKE_ERROR.
const (
	codeBadHandshake  = 1043
	stateBadHandshake = "08S01"
	msgBadHandshake   = "Bad handshake"
)

// handshakeUnreadable reports whether payload, a client's handshake
// response (HandshakeResponse41), is one vitess reads past its end: it
// skips the 23 reserved bytes after the first 9 without looking at the
// length (a response shorter than 32 bytes), and makes the auth response
// a buffer of the length the client gives (a length-encoded length of
// 2^63 or more is negative). Any other defect vitess refuses itself.
//
// The layout: capabilities (4), maximum packet size (4), collation (1),
// 23 reserved bytes, the user name (NUL-ended), then with
// CLIENT_PLUGIN_AUTH_LENENC_CLIENT_DATA the auth response's length
// (length-encoded) and bytes.
func handshakeUnreadable(payload []byte) bool {
	if len(payload) < 4 {
		return false
	}
	caps := binary.LittleEndian.Uint32(payload)
	if caps&mysql.CapabilityClientProtocol41 == 0 {
		return false
	}
	if len(payload) < sslRequestLen {
		return true
	}
	end := bytes.IndexByte(payload[sslRequestLen:], 0)
	if end < 0 || caps&mysql.CapabilityClientPluginAuthLenencClientData == 0 {
		return false
	}
	// A length of 8 bytes (0xfe and the length) with the top bit set.
	d := decoder{b: payload, pos: sslRequestLen + end + 1}
	if first, _ := d.byte(); first != 0xfe {
		return false
	}
	n, ok := d.uint64()
	return ok && n >= 1<<63
}

// refuseHandshake answers a handshake response vitess cannot read (see
// handshakeUnreadable), numbered seq, with MySQL's 1043; the connection
// closes.
func (c *Conn) refuseHandshake(seq byte) error {
	_ = c.writeError(seq+1, codeBadHandshake, stateBadHandshake, msgBadHandshake)
	return fmt.Errorf("client %s sent a handshake response that does not parse", c.RemoteAddr())
}
