package txn

import (
	"context"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/percdb/percdb/kv"
	"github.com/percdb/percdb/txn/txntest"
)

// keysCoprocessor's programs output the keys they are fed, "key;" each,
// and are full after every two.
type keysCoprocessor struct{}

type keysProgram struct {
	n   int
	out []byte
}

func (keysCoprocessor) Compile([]byte) (kv.CoprocessorProgram, error) { return &keysProgram{}, nil }

func (p *keysProgram) Feed(key, _ []byte) (full, done bool, err error) {
	p.out = append(append(p.out, key...), ';')
	p.n++
	return p.n%2 == 0, false, nil
}

func (p *keysProgram) Output() ([]byte, error) {
	out := p.out
	p.out = nil
	return out, nil
}

// TestCoprocessor checks that Txn.Coprocessor walks every region and every
// page of one in key order, resolves a dead transaction's lock met on the
// way as a scan does, and refuses a range where the transaction has
// writes of its own.
func TestCoprocessor(t *testing.T) {
	ctx := context.Background()
	ks, err := kv.Open("", kv.Options{InMemory: true, SyncWrites: kv.SyncNone, Coprocessor: keysCoprocessor{}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ks.Close() })
	e := newEnvOn(t, ks, txntest.NewClockOracle(0), Options{}, "m")
	mustCommit(t, e.s, "a", "1", "b", "2", "c", "3", "n", "4", "p", "5")
	dying := e.dyingStore(t, time.Millisecond)
	tx, err := dying.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := tx.Set([]byte("d"), []byte("6")); err != nil {
		t.Fatal(err)
	}
	if err := tx.Set([]byte("o"), []byte("7")); err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(ctx); !errors.Is(err, errAbandon) {
		t.Fatalf("dying commit: %v", err)
	}
	time.Sleep(5 * time.Millisecond) // the locks' TTL passes

	reader, err := e.s.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	it, err := reader.Coprocessor(ctx, []byte("a"), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for {
		data, err := it.Next(ctx)
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if len(data) > 0 { // a page may be empty: the walk's last
			got = append(got, string(data))
		}
	}
	if want := "a;b;|c;|n;p;|"; strings.Join(got, "|")+"|" != want || it.Visited() != 5 {
		t.Fatalf("outputs %q (visited %d), want %q", got, it.Visited(), want)
	}

	if err := reader.Set([]byte("b2"), []byte("x")); err != nil {
		t.Fatal(err)
	}
	if _, err := reader.Coprocessor(ctx, []byte("a"), []byte("c"), nil); !errors.Is(err, ErrBufferedWrites) {
		t.Fatalf("with a buffered write in the range: %v", err)
	}
	if _, err := reader.Coprocessor(ctx, []byte("c"), nil, nil); err != nil {
		t.Fatalf("with a buffered write outside the range: %v", err)
	}
}
