package wire

import (
	"testing"

	"github.com/dolthub/vitess/go/mysql"
)

// benchAnswer is the answer to a SELECT of rows rows of two columns, as
// vitess writes it in one write.
func benchAnswer(rows int) []byte {
	var b []byte
	seq := byte(1)
	add := func(p []byte) { b = appendPacket(b, seq, p); seq++ }
	add([]byte{2})
	add([]byte{3, 'd', 'e', 'f', 0, 1, 't', 1, 't', 2, 'i', 'd', 2, 'i', 'd'})
	add([]byte{3, 'd', 'e', 'f', 0, 1, 't', 1, 't', 1, 's', 1, 's'})
	add([]byte{eofMarker, 0, 0, byte(mysql.ServerStatusAutocommit), 0})
	for range rows {
		add([]byte{3, '1', '2', '3', 5, 'h', 'e', 'l', 'l', 'o'})
	}
	add([]byte{eofMarker, 0, 0, byte(mysql.ServerStatusAutocommit), 0})
	return b
}

// BenchmarkAnswerWalk writes a SELECT's answer through Conn with the
// answer followed (walk, as every COM_QUERY and COM_STMT_EXECUTE answer
// now is) and passed through (pass), for 1 and 100 rows.
func BenchmarkAnswerWalk(b *testing.B) {
	for _, rows := range []int{1, 100} {
		answer := benchAnswer(rows)
		for _, walk := range []bool{false, true} {
			name := "pass"
			if walk {
				name = "walk"
			}
			b.Run(name+"/"+map[int]string{1: "1row", 100: "100rows"}[rows], func(b *testing.B) {
				w := &writtenConn{}
				c := newConn(w, Config{})
				c.stage, c.replySeq = stageCommands, 1
				b.ReportAllocs()
				for range b.N {
					w.out.Reset()
					c.walk.startAnswer(walk)
					if _, err := c.Write(answer); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
