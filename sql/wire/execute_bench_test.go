package wire

import (
	"encoding/binary"
	"testing"

	"github.com/dolthub/vitess/go/mysql"
)

// BenchmarkExecuteWalk is what Conn adds to a prepared point select's
// COM_STMT_EXECUTE (one BIGINT parameter, its type sent, as go-sql-driver
// sends it): the walk that finds nothing vitess misreads.
func BenchmarkExecuteWalk(b *testing.B) {
	payload := executePayload([]testParam{{0x08, 0, binary.LittleEndian.AppendUint64(nil, 42)}})
	prepare := &mysql.PrepareData{StatementID: 1, ParamsCount: 1, ParamsType: make([]int32, 1)}
	b.ReportAllocs()
	for b.Loop() {
		if decode, err := vitessMisreads(prepare, payload, nil); decode || err != nil {
			b.Fatal(decode, err)
		}
	}
}
