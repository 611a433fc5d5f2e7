package wire

import (
	"encoding/binary"
	"fmt"

	"github.com/dolthub/vitess/go/mysql"
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
// writes each statement's answer, and Conn writes the OK packets with
// them.
//
// A multi-statement query (CLIENT_MULTI_STATEMENTS) answers with one
// result per statement, each an OK packet, an error or a result set,
// all but the last flagged SERVER_MORE_RESULTS_EXISTS; vitess buffers
// them and writes them together, so Conn cannot tell them apart by when
// they come. It follows the answer packet by packet instead (an
// answerWalk): the first packet of each result is taken whole, an OK
// packet among them gets the next of the statements' warning counts and
// infos, in order, and the rest of a result set (column definitions,
// rows, the EOF or OK packet that ends it, which says whether more
// results follow) passes through, looked at but not copied.

// okAnswer is the warning count and the info text of an OK packet.
type okAnswer struct {
	warnings uint16
	info     string
}

// answerPart is what the next packet of an answer is.
type answerPart uint8

const (
	// partResult: the first packet of a result (an OK, error or
	// LOCAL INFILE request packet, or a result set's column count).
	partResult answerPart = iota
	// partColumn: a column definition; answerWalk.columns are left.
	partColumn
	// partColumnsEOF: the EOF packet after the column definitions
	// (not sent under CLIENT_DEPRECATE_EOF).
	partColumnsEOF
	// partRow: a row, or the EOF packet (an OK packet marked 0xfe
	// under CLIENT_DEPRECATE_EOF) or error that ends the result set.
	partRow
	// partDone: the answer is over (or no longer followed).
	partDone
)

// headKept is how much of a packet's payload answerWalk keeps to read
// an EOF packet or an OK packet marked 0xfe: the marker, two
// length-encoded integers of up to 9 bytes each, the status flags.
const headKept = 1 + 9 + 9 + 2

// answerWalk follows vitess's answer to a COM_QUERY or COM_STMT_EXECUTE
// (see above).
type answerWalk struct {
	// on says the current command's answer is followed.
	on   bool
	next answerPart
	// columns counts the column definitions still to come.
	columns uint64
	// queue holds the warning counts and infos of the statements' OK
	// packets not written yet, in order (AnswerOK).
	queue []okAnswer

	// The packet being written: its header (nhdr bytes of it so far),
	// the payload bytes still to come, its first payload bytes (head,
	// nhead of them), and whether it continues a packet whose payload
	// was maxPayload bytes long (continued), or will be continued.
	hdr                  [headerLen]byte
	nhdr                 int
	firstLen             int
	left                 int
	head                 [headKept]byte
	nhead                int
	continued, continues bool
	// holding says the packet is the first of a result, taken whole
	// into held (header included) before it is written.
	holding bool
	held    []byte
	// out is reused for the bytes of a write that had a packet taken
	// whole.
	out []byte
}

// maxKeptOut bounds the buffer answerWalk keeps between writes.
const maxKeptOut = 64 << 10

// startAnswer begins following the answer to a command: on says whether
// it is one to follow.
func (w *answerWalk) startAnswer(on bool) {
	w.on, w.next, w.columns = on, partResult, 0
	w.queue = w.queue[:0]
	w.nhdr, w.left, w.nhead = 0, 0, 0
	w.continued, w.continues, w.holding = false, false, false
	w.held = w.held[:0]
}

// AnswerOK makes the next OK packet of the answer to the current
// command that starts a statement's result carry warnings and info, the
// info as MySQL's net_send_ok writes it, a length-encoded string, which
// the MySQL and MariaDB clients read (vitess writes a query's info
// after a '#' byte, which they take for its length). The handler calls
// it for every statement answered with an OK packet, in order, before
// vitess writes that packet: from the callback the result reaches
// vitess through.
func (c *Conn) AnswerOK(warnings uint16, info string) error {
	if c.stage != stageCommands || !c.walk.on {
		return fmt.Errorf("wire: OK packet's info given for a command whose answer is not followed")
	}
	c.walk.queue = append(c.walk.queue, okAnswer{warnings: warnings, info: info})
	return nil
}

// answerOK writes p, bytes of vitess's answer to the current command:
// the first packet of each result is taken whole and written once
// complete, an OK packet with the warning count and info AnswerOK
// queued for it; everything else passes through.
func (c *Conn) answerOK(p []byte) (int, error) {
	out := c.walk.feed(p, c.clientCaps&mysql.CapabilityClientDeprecateEOF != 0)
	if len(out) == 0 {
		return len(p), nil
	}
	if c.shift != 0 {
		out = c.renumber(out)
	}
	if _, err := c.transport.Write(out); err != nil {
		return 0, err
	}
	return len(p), nil
}

// feed follows p, the next bytes of the answer, and returns the bytes
// to write now: p itself when no packet of it was taken whole.
func (w *answerWalk) feed(p []byte, deprecateEOF bool) []byte {
	if w.next == partDone && w.nhdr == 0 && w.left == 0 {
		return p
	}
	used := w.holding // some of p is taken whole: w.out is the output
	start := 0        // p[start:] has not been added to w.out
	w.out = w.out[:0]
	for i := 0; i < len(p); {
		if w.nhdr == 0 && w.next != partResult && !w.continues && len(p)-i >= headerLen {
			// A packet that passes through, read in place when p
			// holds it whole and it continues in no other.
			if n := payloadLen(p[i:]); n < maxPayload && len(p)-i >= headerLen+n {
				w.firstLen = n
				w.passed(p[i+headerLen:i+headerLen+min(n, headKept)], deprecateEOF)
				i += headerLen + n
				continue
			}
		}
		if w.nhdr < headerLen {
			if w.nhdr == 0 {
				// A packet starts.
				w.continued = w.continues
				w.holding = w.next == partResult && !w.continued
				if w.holding {
					w.out = append(w.out, p[start:i]...)
					start, used = i, true
					w.held = w.held[:0]
				}
			}
			k := copy(w.hdr[w.nhdr:], p[i:])
			if w.holding {
				w.held = append(w.held, p[i:i+k]...)
			}
			w.nhdr += k
			i += k
			if w.nhdr < headerLen {
				continue
			}
			w.left = payloadLen(w.hdr[:])
			w.continues = w.left == maxPayload
			if !w.continued {
				w.firstLen, w.nhead = w.left, 0
			}
		}
		k := min(w.left, len(p)-i)
		if !w.continued && w.nhead < headKept {
			w.nhead += copy(w.head[w.nhead:], p[i:i+k])
		}
		if w.holding {
			w.held = append(w.held, p[i:i+k]...)
		}
		i += k
		w.left -= k
		if w.left > 0 {
			continue
		}
		// The packet is complete.
		w.nhdr = 0
		if w.holding {
			w.holding = false
			w.out = append(w.out, w.result(deprecateEOF)...)
			start, used = i, true
			continue
		}
		if !w.continues {
			w.passed(w.head[:w.nhead], deprecateEOF)
		}
	}
	if !used {
		return p
	}
	if !w.holding {
		w.out = append(w.out, p[start:]...)
	}
	out := w.out
	if cap(w.out) > maxKeptOut {
		w.out = nil
	}
	return out
}

// result returns w.held, the whole first packet of a result, to write:
// an OK packet with the next queued warning count and info. It sets
// what the next packet is.
func (w *answerWalk) result(deprecateEOF bool) []byte {
	pkt := w.held
	payload := pkt[headerLen:]
	if w.continues || len(payload) == 0 {
		// Not a packet that starts a result (a column count, an OK
		// or error packet are short): stop following.
		w.next = partDone
		return pkt
	}
	switch payload[0] {
	case okPacket:
		w.next = partDone
		if status, ok := okStatus(payload); ok && status&mysql.ServerMoreResultsExists != 0 {
			w.next = partResult
		}
		if len(w.queue) == 0 {
			return pkt
		}
		a := w.queue[0]
		w.queue = w.queue[1:]
		if rewritten, changed := withOKInfo(payload, a.warnings, a.info); changed {
			return appendPacket(nil, pkt[3], rewritten)
		}
		return pkt
	case errPacket:
		w.next = partDone
	case localInfile:
		// The client sends the file; the statement's OK or error
		// packet follows.
		w.next = partResult
	default:
		n, size := readLenencInt(payload)
		if size == 0 || n == 0 {
			w.next = partDone
			return pkt
		}
		w.columns, w.next = n, partColumn
	}
	return pkt
}

// passed sets what follows a packet that passed through, whose first
// payload bytes are head (up to headKept of them).
func (w *answerWalk) passed(head []byte, deprecateEOF bool) {
	switch w.next {
	case partColumn:
		if w.columns--; w.columns == 0 {
			w.next = partColumnsEOF
			if deprecateEOF {
				w.next = partRow
			}
		}
	case partColumnsEOF:
		w.next = partRow
	case partRow:
		switch {
		case len(head) == 0:
		case head[0] == errPacket:
			w.next = partDone
		case head[0] == eofMarker && deprecateEOF && w.firstLen < maxPayload:
			w.next = partDone
			if status, ok := okStatus(head); ok && status&mysql.ServerMoreResultsExists != 0 {
				w.next = partResult
			}
		case head[0] == eofMarker && w.firstLen < 9:
			w.next = partDone
			if len(head) >= 5 && binary.LittleEndian.Uint16(head[3:])&mysql.ServerMoreResultsExists != 0 {
				w.next = partResult
			}
		}
	}
}

// localInfile starts the packet that asks the client for a LOCAL
// INFILE's file.
const localInfile = 0xfb

// okStatus returns the status flags of an OK packet's payload (marked
// 0x00, or 0xfe when it ends a result set under CLIENT_DEPRECATE_EOF),
// and whether it holds them.
func okStatus(payload []byte) (uint16, bool) {
	pos := 1
	for range 2 {
		if pos >= len(payload) {
			return 0, false
		}
		n := lenencSize(payload[pos])
		if n == 0 || pos+n > len(payload) {
			return 0, false
		}
		pos += n
	}
	if pos+2 > len(payload) {
		return 0, false
	}
	return binary.LittleEndian.Uint16(payload[pos:]), true
}

// readLenencInt returns the length-encoded integer b starts with and
// its size (0 when b starts with none).
func readLenencInt(b []byte) (uint64, int) {
	if len(b) == 0 {
		return 0, 0
	}
	n := lenencSize(b[0])
	if n == 0 || n > len(b) {
		return 0, 0
	}
	if n == 1 {
		return uint64(b[0]), 1
	}
	var v uint64
	for i := n - 1; i >= 1; i-- {
		v = v<<8 | uint64(b[i])
	}
	return v, n
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
