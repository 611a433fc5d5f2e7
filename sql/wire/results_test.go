package wire

import (
	"bytes"
	"net"
	"testing"
)

// writtenConn is a net.Conn that keeps what is written to it.
type writtenConn struct {
	net.Conn
	out bytes.Buffer
}

func (w *writtenConn) Write(p []byte) (int, error) { return w.out.Write(p) }

// TestWriteBeforeAnswer writes two packets before vitess's answer, which
// comes in writes split anywhere (a header cut in two, two packets in
// one write): vitess's packets are renumbered to follow them, and the
// next command's answer is not.
func TestWriteBeforeAnswer(t *testing.T) {
	w := &writtenConn{}
	c := newConn(w, Config{})
	c.stage, c.replySeq = stageCommands, 1
	if err := c.WriteBeforeAnswer([][]byte{{0x01}, {0xaa, 0xbb}}); err != nil {
		t.Fatal(err)
	}
	var answer []byte
	for seq, payload := range [][]byte{{0x10, 0x11, 0x12}, {0x20}, {0xfe, 0, 0, 2, 0}} {
		answer = appendPacket(answer, byte(seq+1), payload)
	}
	for _, cut := range [][2]int{{0, 2}, {2, 9}, {9, len(answer)}} {
		if _, err := c.Write(answer[cut[0]:cut[1]]); err != nil {
			t.Fatal(err)
		}
	}
	var want []byte
	for seq, payload := range [][]byte{{0x01}, {0xaa, 0xbb}, {0x10, 0x11, 0x12}, {0x20}, {0xfe, 0, 0, 2, 0}} {
		want = appendPacket(want, byte(seq+1), payload)
	}
	if !bytes.Equal(w.out.Bytes(), want) {
		t.Fatalf("wrote\n%x\nwant\n%x", w.out.Bytes(), want)
	}
	if err := c.WriteBeforeAnswer([][]byte{{0x01}}); err == nil {
		t.Error("results written after vitess's answer began")
	}
}
