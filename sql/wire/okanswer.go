package wire

import (
	"encoding/binary"
	"fmt"
)

// vitess writes the OK packet that answers a COM_STMT_EXECUTE of a
// statement without a result set (an UPDATE, INSERT, DELETE) itself,
// with a warning count of 0 and no info text, whatever the statement
// raised; MySQL and MariaDB send the statement's warning count and the
// same info as for a query ("Rows matched: 2  Changed: 2  Warnings: 1",
// "Records: 3  Duplicates: 0  Warnings: 0"). And vitess writes a
// query's info after a '#' byte, where MySQL writes a length-encoded
// string: the mariadb client showed no "Rows matched" line. The
// handler, which knows both, hands them to AnswerOK before vitess
// writes its answer, and Conn writes that OK packet with them.

// okAnswer is the warning count and the info text of an OK packet.
type okAnswer struct {
	warnings uint16
	info     string
}

// AnswerOK makes the OK packet that answers the current command, if its
// answer is one, carry warnings and info, the info as MySQL's
// net_send_ok writes it, a length-encoded string, which the MySQL and
// MariaDB clients read (vitess writes a query's info after a '#' byte,
// which they take for its length). It must be called before vitess
// writes any of its answer: from the handler, before the command's
// result reaches vitess.
func (c *Conn) AnswerOK(warnings uint16, info string) error {
	if c.stage != stageCommands || c.wrote {
		return fmt.Errorf("wire: OK packet's info given after the answer began")
	}
	c.ok = &okAnswer{warnings: warnings, info: info}
	return nil
}

// answerOK writes p, bytes of vitess's answer to the current command,
// once the answer's first packet is whole: when it is an OK packet it
// is written with c.ok's warning count and info; everything after it
// passes through.
func (c *Conn) answerOK(p []byte) (int, error) {
	c.okBuf = append(c.okBuf, p...)
	if len(c.okBuf) < headerLen || len(c.okBuf) < headerLen+payloadLen(c.okBuf) {
		return len(p), nil
	}
	out, ok := c.okBuf, c.ok
	c.ok, c.okBuf = nil, nil
	end := headerLen + payloadLen(out)
	if payload, changed := withOKInfo(out[headerLen:end], ok.warnings, ok.info); changed {
		out = append(appendPacket(nil, out[3], payload), out[end:]...)
	}
	if c.shift != 0 {
		out = c.renumber(out)
	}
	if _, err := c.transport.Write(out); err != nil {
		return 0, err
	}
	return len(p), nil
}

// withOKInfo returns payload, an OK packet's (marker, affected rows and
// last insert id as length-encoded integers, status flags, warning
// count, maybe info), with warnings and info in place of its own, and
// whether it is one (a payload that is not is returned as it is).
func withOKInfo(payload []byte, warnings uint16, info string) ([]byte, bool) {
	if len(payload) < 7 || payload[0] != okPacket || len(payload) >= maxPayload {
		return payload, false
	}
	pos := 1
	for range 2 {
		n := lenencSize(payload[pos])
		if n == 0 || pos+n > len(payload) {
			return payload, false
		}
		pos += n
	}
	if pos+4 > len(payload) {
		return payload, false
	}
	out := make([]byte, 0, pos+4+len(info))
	out = append(out, payload[:pos+2]...) // the marker, the two integers, the status flags
	out = binary.LittleEndian.AppendUint16(out, warnings)
	if info != "" {
		out = appendLenencString(out, []byte(info))
	}
	if len(out) >= maxPayload {
		return payload, false
	}
	return out, true
}

// lenencSize is the size of a length-encoded integer whose first byte
// is b; 0 for a byte no such integer starts with.
func lenencSize(b byte) int {
	switch {
	case b < 0xfb:
		return 1
	case b == 0xfc:
		return 3
	case b == 0xfd:
		return 4
	case b == 0xfe:
		return 9
	}
	return 0
}
