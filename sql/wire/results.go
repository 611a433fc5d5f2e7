package wire

import (
	"encoding/binary"
	"fmt"

	"github.com/dolthub/vitess/go/sqltypes"
	querypb "github.com/dolthub/vitess/go/vt/proto/query"
)

// Result sets percdb writes itself, before vitess's answer to the same
// command: vitess writes one result set per COM_QUERY statement, where a
// CALL answers with one per SELECT of the procedure's body, then its OK
// packet (or an error). The text protocol's layout: the column count
// (length-encoded), one column definition per column, an EOF packet
// (unless the client asked for CLIENT_DEPRECATE_EOF), the rows (each value
// a length-encoded string, 0xfb for NULL), and an EOF packet (or an OK
// packet marked 0xfe with CLIENT_DEPRECATE_EOF) carrying the status flags.

// eofMarker starts an EOF packet, and the OK packet that ends a result
// set under CLIENT_DEPRECATE_EOF.
const eofMarker = 0xfe

// TextResultSet returns the payloads of a text-protocol result set of
// fields and rows, ended with status (SERVER_MORE_RESULTS_EXISTS set by
// the caller when more results follow); deprecateEOF says the client
// asked for CLIENT_DEPRECATE_EOF.
func TextResultSet(fields []*querypb.Field, rows [][]sqltypes.Value, status uint16, deprecateEOF bool) ([][]byte, error) {
	return resultSet(fields, rows, status, deprecateEOF, textRow)
}

// textRow is the payload of one row of a text result set.
func textRow(row []sqltypes.Value) ([]byte, error) {
	var p []byte
	for _, v := range row {
		if v.IsNull() {
			p = append(p, 0xfb)
			continue
		}
		p = appendLenencString(p, v.Raw())
	}
	return p, nil
}

// resultSet returns the payloads of a result set whose rows' payloads
// encodeRow makes.
func resultSet(fields []*querypb.Field, rows [][]sqltypes.Value, status uint16, deprecateEOF bool, encodeRow func([]sqltypes.Value) ([]byte, error)) ([][]byte, error) {
	out := make([][]byte, 0, len(fields)+len(rows)+3)
	out = append(out, appendLenencInt(nil, uint64(len(fields))))
	for _, f := range fields {
		out = append(out, columnDefinition(f))
	}
	if !deprecateEOF {
		out = append(out, eofPacket(status))
	}
	for _, row := range rows {
		if len(row) != len(fields) {
			return nil, fmt.Errorf("result row of %d values for %d columns", len(row), len(fields))
		}
		p, err := encodeRow(row)
		if err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	if deprecateEOF {
		// An OK packet marked as an EOF: no rows affected, no insert
		// id, the status and no warnings.
		return append(out, []byte{eofMarker, 0, 0, byte(status), byte(status >> 8), 0, 0}), nil
	}
	return append(out, eofPacket(status)), nil
}

// eofPacket is an EOF packet with no warnings and status.
func eofPacket(status uint16) []byte {
	return []byte{eofMarker, 0, 0, byte(status), byte(status >> 8)}
}

// columnDefinition is the ColumnDefinition41 payload of f: catalog "def",
// schema, table, original table, name, original name (length-encoded
// strings), the length of the fixed fields (0x0c), character set (2),
// column length (4), type (1), flags (2), decimals (1) and two zero
// bytes.
func columnDefinition(f *querypb.Field) []byte {
	p := appendLenencString(nil, []byte("def"))
	for _, s := range []string{f.Database, f.Table, f.OrgTable, f.Name, f.OrgName} {
		p = appendLenencString(p, []byte(s))
	}
	typ, flags := sqltypes.TypeToMySQL(f.Type)
	p = append(p, 0x0c)
	p = binary.LittleEndian.AppendUint16(p, uint16(f.Charset))
	p = binary.LittleEndian.AppendUint32(p, f.ColumnLength)
	p = append(p, byte(typ))
	p = binary.LittleEndian.AppendUint16(p, uint16(f.Flags)|uint16(flags))
	return append(p, byte(f.Decimals), 0, 0)
}

// appendLenencInt appends v length-encoded.
func appendLenencInt(b []byte, v uint64) []byte {
	switch {
	case v < 0xfb:
		return append(b, byte(v))
	case v < 1<<16:
		return binary.LittleEndian.AppendUint16(append(b, 0xfc), uint16(v))
	case v < 1<<24:
		return append(b, 0xfd, byte(v), byte(v>>8), byte(v>>16))
	}
	return binary.LittleEndian.AppendUint64(append(b, 0xfe), v)
}

// appendLenencString appends s with its length, length-encoded.
func appendLenencString(b, s []byte) []byte {
	return append(appendLenencInt(b, uint64(len(s))), s...)
}

// WriteBeforeAnswer writes payloads as packets answering the current
// command, before anything vitess writes for it, which is renumbered to
// follow them (vitess numbers its answer from the client's last packet).
// It must be called before vitess writes any of its answer: from the
// handler, before the first result of the command reaches vitess.
func (c *Conn) WriteBeforeAnswer(payloads [][]byte) error {
	if c.stage != stageCommands || c.wrote {
		return fmt.Errorf("wire: results written after the answer began")
	}
	var out []byte
	for _, p := range payloads {
		// A payload of maxPayload bytes or more goes on in the next
		// packet, down to one shorter.
		for {
			n := min(len(p), maxPayload)
			out = appendPacket(out, c.replySeq+c.shift, p[:n])
			c.shift++
			if p = p[n:]; n < maxPayload {
				break
			}
		}
	}
	_, err := c.transport.Write(out)
	return err
}

// renumber adds c.shift to the sequence numbers of the packets vitess
// writes in p (bytes of its answer, split anywhere), once percdb wrote
// packets before them (WriteBeforeAnswer).
func (c *Conn) renumber(p []byte) []byte {
	out := append([]byte(nil), p...)
	for i := 0; i < len(out); {
		if c.outLeft > 0 {
			n := min(c.outLeft, len(out)-i)
			c.outLeft -= n
			i += n
			continue
		}
		// A header, maybe split across writes.
		need := headerLen - len(c.outHdr)
		n := min(need, len(out)-i)
		c.outHdr = append(c.outHdr, out[i:i+n]...)
		if len(c.outHdr) == headerLen {
			seqAt := i + n - 1 // the sequence byte is the header's last
			out[seqAt] += c.shift
			c.outLeft = payloadLen(c.outHdr)
			c.outHdr = c.outHdr[:0]
		}
		i += n
	}
	return out
}
