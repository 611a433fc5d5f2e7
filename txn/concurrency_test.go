package txn

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestBankInvariant moves money between 10 accounts from 8 goroutines
// while readers check that every snapshot of all accounts sums to the
// same total. The accounts span three regions, so transfers commit both in
// one phase and in two. Conflicts must surface as ErrWriteConflict.
func TestBankInvariant(t *testing.T) {
	const (
		accounts = 10
		initial  = 100
		workers  = 8
	)
	transfers := 2000
	if testing.Short() {
		transfers = 400
	}
	ctx := context.Background()
	e := newEnv(t, Options{}, "acct3", "acct7")
	acct := func(i int) []byte { return fmt.Appendf(nil, "acct%d", i) }
	setup, _ := e.s.Begin(ctx)
	for i := range accounts {
		_ = setup.Set(acct(i), []byte(strconv.Itoa(initial)))
	}
	if err := setup.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	balance := func(v []byte) int {
		n, err := strconv.Atoi(string(v))
		if err != nil {
			t.Errorf("balance %q: %v", v, err)
		}
		return n
	}

	var committed, conflicts, snapshots atomic.Int64
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(w), 42))
			for range transfers / workers {
				from, to := rng.IntN(accounts), rng.IntN(accounts-1)
				if to >= from {
					to++
				}
				err := transfer(ctx, e.s, acct(from), acct(to), 1+rng.IntN(20), balance)
				switch {
				case err == nil:
					committed.Add(1)
				case errors.Is(err, ErrWriteConflict):
					conflicts.Add(1)
				default:
					t.Errorf("transfer: %v", err)
					return
				}
			}
		}()
	}
	stop := make(chan struct{})
	var readers sync.WaitGroup
	for r := range 2 {
		readers.Add(1)
		go func() {
			defer readers.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				tx, _ := e.s.Begin(ctx)
				sum := 0
				if r == 0 {
					keys := make([][]byte, accounts)
					for i := range keys {
						keys[i] = acct(i)
					}
					got, err := tx.BatchGet(ctx, keys)
					if err != nil {
						t.Errorf("batch get: %v", err)
						return
					}
					for _, v := range got {
						sum += balance(v)
					}
				} else {
					it, err := tx.Iter(ctx, []byte("acct"), []byte("acct~"))
					if err != nil {
						t.Errorf("iter: %v", err)
						return
					}
					for it.Valid() {
						sum += balance(it.Value())
						if err := it.Next(ctx); err != nil {
							t.Errorf("iter next: %v", err)
							return
						}
					}
					it.Close()
				}
				if sum != accounts*initial {
					ts, _ := tx.StartTS(ctx)
					t.Errorf("snapshot at %d sums to %d, want %d", ts, sum, accounts*initial)
					return
				}
				snapshots.Add(1)
			}
		}()
	}
	wg.Wait()
	close(stop)
	readers.Wait()

	final, _ := e.s.Begin(ctx)
	sum := 0
	for i := range accounts {
		v, _, err := final.Get(ctx, acct(i))
		if err != nil {
			t.Fatal(err)
		}
		if b := balance(v); b < 0 {
			t.Fatalf("account %d is negative: %d", i, b)
		} else {
			sum += b
		}
	}
	if sum != accounts*initial {
		t.Fatalf("final sum %d", sum)
	}
	if committed.Load() == 0 {
		t.Fatal("no transfer committed")
	}
	t.Logf("%d transfers committed, %d write conflicts, %d snapshots checked", committed.Load(), conflicts.Load(), snapshots.Load())
}

// transfer moves amount from one account to another in one transaction,
// unless the source has less (then it commits nothing).
func transfer(ctx context.Context, s *Store, from, to []byte, amount int, balance func([]byte) int) error {
	tx, err := s.Begin(ctx)
	if err != nil {
		return err
	}
	got, err := tx.BatchGet(ctx, [][]byte{from, to})
	if err != nil {
		return err
	}
	a, b := balance(got[string(from)]), balance(got[string(to)])
	if a >= amount {
		_ = tx.Set(from, []byte(strconv.Itoa(a-amount)))
		_ = tx.Set(to, []byte(strconv.Itoa(b+amount)))
	}
	return tx.Commit(ctx)
}

// TestPointGetLinearizableWithoutOracle runs point reads from a Store that
// never asks the oracle, while writers commit new values (in one phase and
// in two) and a dying client leaves prewritten values behind. A read must
// never return a value that did not commit, and never miss a value whose
// commit returned before the read began.
func TestPointGetLinearizableWithoutOracle(t *testing.T) {
	const keys = 4
	rounds := 150
	if testing.Short() {
		rounds = 40
	}
	ctx := context.Background()
	e := newEnv(t, Options{}, "k2", "s")
	// reader serves PointGet and must never ask the oracle; batchReader
	// serves BatchPointGet of a key and its shadow in another region,
	// which takes a timestamp to read them as a snapshot.
	reader, batchReader := e.newStore(t, Options{}), e.newStore(t, Options{})
	// The dying client prewrites and vanishes; its locks live 100 ms.
	dying := e.dyingStore(t, 100*time.Millisecond)
	key := func(i int) []byte { return fmt.Appendf(nil, "k%d", i) }
	// shadow keys live in another region: a write of both commits in two
	// phases.
	shadow := func(i int) []byte { return fmt.Appendf(nil, "s%d", i) }

	// outcome records, per value written, whether its commit succeeded;
	// values are unique per attempt (round, writer, attempt).
	var outcome sync.Map
	var lastCommitted [keys]atomic.Int64
	var writers sync.WaitGroup
	for i := range keys {
		writers.Add(1)
		go func() {
			defer writers.Done()
			attempt := 0
			for n := 1; n <= rounds; {
				attempt++
				v := fmt.Appendf(nil, "c:%06d:%d:%d", n, i, attempt)
				tx, _ := e.s.Begin(ctx)
				_ = tx.Set(key(i), v)
				if n%2 == 0 {
					_ = tx.Set(shadow(i), v)
				}
				err := tx.Commit(ctx)
				outcome.Store(string(v), err == nil)
				switch {
				case err == nil:
					lastCommitted[i].Store(int64(n))
					n++
				case errors.Is(err, ErrWriteConflict):
					time.Sleep(time.Millisecond) // the dying client's lock
				default:
					t.Errorf("writer %d: %v", i, err)
					return
				}
			}
		}()
	}
	stop := make(chan struct{})
	var background sync.WaitGroup
	background.Add(1)
	go func() { // the dying client
		defer background.Done()
		for j := 0; ; j++ {
			select {
			case <-stop:
				return
			case <-time.After(20 * time.Millisecond):
			}
			tx, _ := dying.Begin(ctx)
			_ = tx.Set(key(j%keys), []byte("x:uncommitted"))
			_ = tx.Set(shadow(j%keys), []byte("x:uncommitted"))
			if err := tx.Commit(ctx); !errors.Is(err, errAbandon) && !errors.Is(err, ErrWriteConflict) {
				t.Errorf("dying client: %v", err)
			}
		}
	}()
	type seen struct{ key, value string }
	var seenMu sync.Mutex
	var allSeen []seen
	var reads atomic.Int64
	for r := range 2 {
		background.Add(1)
		go func() {
			defer background.Done()
			var last [keys]int64 // one reader's reads of a key never go back
			var mine []seen
			defer func() {
				seenMu.Lock()
				allSeen = append(allSeen, mine...)
				seenMu.Unlock()
			}()
			rng := rand.New(rand.NewPCG(uint64(r), 7))
			for {
				select {
				case <-stop:
					return
				default:
				}
				i := rng.IntN(keys)
				floor := lastCommitted[i].Load()
				var v []byte
				if r == 0 {
					var err error
					if v, _, err = reader.PointGet(ctx, key(i)); err != nil {
						t.Errorf("point get: %v", err)
						return
					}
				} else {
					got, err := batchReader.BatchPointGet(ctx, [][]byte{key(i), shadow(i)})
					if err != nil {
						t.Errorf("batch point get: %v", err)
						return
					}
					v = got[string(key(i))]
					if sv, ok := got[string(shadow(i))]; ok {
						mine = append(mine, seen{string(shadow(i)), string(sv)})
						// Every write of the shadow wrote the key too, in
						// the same transaction: a snapshot shows the key
						// at that round or later, and at exactly that round
						// when the key's round wrote a shadow.
						var kn, sn int64
						fmt.Sscanf(string(v), "c:%d:", &kn)
						fmt.Sscanf(string(sv), "c:%d:", &sn)
						if kn < sn || (kn%2 == 0 && kn != sn) {
							t.Errorf("batch point get is not a snapshot: %s = %q, %s = %q", key(i), v, shadow(i), sv)
							return
						}
					}
				}
				reads.Add(1)
				if floor == 0 && v == nil {
					continue
				}
				var n, writer, attempt int64
				if _, err := fmt.Sscanf(string(v), "c:%d:%d:%d", &n, &writer, &attempt); err != nil || writer != int64(i) {
					t.Errorf("read %s = %q: not a committed value", key(i), v)
					return
				}
				if n < floor || n < last[i] {
					t.Errorf("read %s = %q, but value %d had committed before the read began (and this reader saw %d)", key(i), v, floor, last[i])
					return
				}
				last[i] = n
				mine = append(mine, seen{string(key(i)), string(v)})
			}
		}()
	}
	writers.Wait()
	close(stop)
	background.Wait()

	for _, s := range allSeen {
		ok, known := outcome.Load(s.value)
		if !known || !ok.(bool) {
			t.Fatalf("a reader returned %s = %q, which never committed", s.key, s.value)
		}
	}
	if n := reader.OracleCalls(); n != 0 {
		t.Fatalf("the reading Store made %d oracle calls", n)
	}
	t.Logf("%d reads checked", reads.Load())
}
