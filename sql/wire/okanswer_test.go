package wire

import (
	"bytes"
	"encoding/binary"
	"testing"

	"github.com/dolthub/vitess/go/mysql"
)

// okPayload is an OK packet's payload as vitess writes it: info, when
// given, after a '#' byte.
func okPayload(marker byte, affected, insertID uint64, status, warnings uint16, info string) []byte {
	p := appendLenencInt([]byte{marker}, affected)
	p = appendLenencInt(p, insertID)
	p = binary.LittleEndian.AppendUint16(p, status)
	p = binary.LittleEndian.AppendUint16(p, warnings)
	if info != "" {
		p = append(append(p, '#'), info...)
	}
	return p
}

// mysqlOK is an OK packet's payload as MySQL writes it: info as a
// length-encoded string.
func mysqlOK(affected, insertID uint64, status, warnings uint16, info string) []byte {
	p := okPayload(okPacket, affected, insertID, status, warnings, "")
	if info != "" {
		p = appendLenencString(p, []byte(info))
	}
	return p
}

// TestAnswerOKMultiStatement writes the answer to a multi-statement
// query (an INSERT, a SELECT whose rows start with the bytes of OK and
// EOF packets' markers, an UPDATE, a LOCAL INFILE request and its OK
// packet, a DELETE), split into writes of every size from 1 byte up:
// each statement's OK packet, and only those, gets the warning count
// and info queued for it, as a length-encoded string; everything else
// is written as it came. With and without CLIENT_DEPRECATE_EOF.
func TestAnswerOKMultiStatement(t *testing.T) {
	const ac, more = mysql.ServerStatusAutocommit, mysql.ServerMoreResultsExists
	queued := []okAnswer{
		{0, "Records: 2  Duplicates: 0  Warnings: 0"},
		{2, "Rows matched: 2  Changed: 2  Warnings: 2"},
		{0, "Records: 1  Deleted: 0  Skipped: 0  Warnings: 0"},
		{1, ""},
	}
	for _, deprecateEOF := range []bool{false, true} {
		var in, want [][]byte
		both := func(p []byte) { in, want = append(in, p), append(want, p) }
		in = append(in, okPayload(okPacket, 2, 1, ac|more, 0, queued[0].info))
		want = append(want, mysqlOK(2, 1, ac|more, 0, queued[0].info))
		both([]byte{2})                   // two columns
		both([]byte{3, 'd', 'e', 'f', 0}) // column definitions (short: only counted)
		both([]byte{3, 'd', 'e', 'f', 1})
		if !deprecateEOF {
			both([]byte{eofMarker, 0, 0, byte(ac | more), 0})
		}
		both([]byte{0, 1, 'x'})          // a row: '' and 'x', like an OK packet
		both([]byte{0xfb, 0xfb})         // a row of NULLs
		both([]byte{1, 'a', 0xfe, 0, 0}) // a row
		if deprecateEOF {
			both(okPayload(eofMarker, 0, 0, ac|more, 0, ""))
		} else {
			both([]byte{eofMarker, 0, 0, byte(ac | more), 0})
		}
		in = append(in, okPayload(okPacket, 2, 0, ac|more, 2, queued[1].info))
		want = append(want, mysqlOK(2, 0, ac|more, 2, queued[1].info))
		both(append([]byte{localInfile}, "/tmp/f"...))
		in = append(in, okPayload(okPacket, 1, 0, ac|more, 0, queued[2].info))
		want = append(want, mysqlOK(1, 0, ac|more, 0, queued[2].info))
		in = append(in, okPayload(okPacket, 1, 0, ac, 0, ""))
		want = append(want, mysqlOK(1, 0, ac, 1, ""))

		var answer, wantBytes []byte
		for seq, p := range in {
			answer = appendPacket(answer, byte(seq+1), p)
		}
		for seq, p := range want {
			wantBytes = appendPacket(wantBytes, byte(seq+1), p)
		}
		for size := 1; size <= len(answer); size++ {
			w := &writtenConn{}
			c := newConn(w, Config{})
			c.stage, c.replySeq = stageCommands, 1
			if deprecateEOF {
				c.clientCaps = mysql.CapabilityClientDeprecateEOF
			}
			c.walk.startAnswer(true)
			for _, a := range queued {
				if err := c.AnswerOK(a.warnings, a.info); err != nil {
					t.Fatal(err)
				}
			}
			for i := 0; i < len(answer); i += size {
				if _, err := c.Write(answer[i:min(i+size, len(answer))]); err != nil {
					t.Fatal(err)
				}
			}
			if !bytes.Equal(w.out.Bytes(), wantBytes) {
				t.Fatalf("deprecate EOF %v, writes of %d bytes: wrote\n%x\nwant\n%x", deprecateEOF, size, w.out.Bytes(), wantBytes)
			}
		}
	}
}

// TestAnswerOKNotFollowed: the answer to a command other than a query
// or an execute (COM_PING here) is not followed, and AnswerOK says so;
// a query's answer is written as it came when nothing was queued.
func TestAnswerOKNotFollowed(t *testing.T) {
	w := &writtenConn{}
	c := newConn(w, Config{})
	c.stage, c.replySeq = stageCommands, 1
	c.walk.startAnswer(false)
	if err := c.AnswerOK(0, "x"); err == nil {
		t.Error("AnswerOK for an answer not followed: no error")
	}
	c.walk.startAnswer(true)
	ok := appendPacket(nil, 1, okPayload(okPacket, 1, 0, 2, 0, "Rows matched: 1  Changed: 1  Warnings: 0"))
	if _, err := c.Write(ok); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(w.out.Bytes(), ok) {
		t.Errorf("wrote %x, want %x", w.out.Bytes(), ok)
	}
}
