package crash

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/percdb/percdb/kv"
	"github.com/percdb/percdb/tso"
	"github.com/percdb/percdb/txn"
)

// abandonTTL is the lock TTL of the transactions TestAbandonedCommits
// runs: short, since writers wait for the locks of abandoned commits to
// expire.
const abandonTTL = 300 * time.Millisecond

// errAbandon is what the failpoints return: the client "dies" there.
var errAbandon = errors.New("crash test: client died here")

// abandonPlan says where a client dies in its next commit.
type abandonPlan int32

const (
	commitNormally abandonPlan = iota
	dieAfterPrimaryPrewrite
	dieAfterPrewrite
	dieAfterPrimaryCommit
)

func (p abandonPlan) String() string {
	return [...]string{"normal", "after primary prewrite", "after prewrite", "after primary commit"}[p]
}

// txnBank is a bank of accounts and a ledger of transfers as raw keys of
// package txn: acct/NN holds a balance, ledger/ID holds "from,to,amount".
type txnBank struct {
	accounts int
	initial  int64
}

func (b txnBank) account(i int) []byte { return fmt.Appendf(nil, "acct/%02d", i) }
func ledgerKey(id int64) []byte        { return fmt.Appendf(nil, "ledger/%012d", id) }

// TestAbandonedCommits runs bank transfers through package txn directly,
// several clients at once, each over its own txn.Store whose commit
// failpoints (txn.CommitHooks) make it die, at random, after prewriting
// the primary, after prewriting everything, or after committing the
// primary, leaving its locks behind as a killed client would. The keys
// span several regions, so that commits have secondaries in other
// regions. Meanwhile a reader checks that every snapshot sees the bank's
// sum, and the other clients write through the dead ones' locks. At the
// end every transfer acknowledged, or abandoned after its commit point,
// is in the ledger; every other one is not; the balances agree with the
// ledger; and a scan of everything resolves every lock left. Transfers
// per client: PERCDB_CRASH_ABANDON_TXNS (default 30), a third of them
// abandoned.
func TestAbandonedCommits(t *testing.T) {
	perClient := envInt(t, envAbandonTxns, 30)
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(envSeed(t), 2))
	bank := txnBank{accounts: 12, initial: 1000}

	ks, err := kv.Open("", kv.Options{InMemory: true, SyncWrites: kv.SyncNone})
	if err != nil {
		t.Fatal(err)
	}
	defer ks.Close()
	// acct/00-05, acct/06-11 and the ledger in three regions.
	for _, split := range []string{"acct/06", "ledger/"} {
		if _, _, err := ks.SplitRegion(ctx, []byte(split)); err != nil {
			t.Fatal(err)
		}
	}
	windows, err := tso.OpenFileWindowStore(filepath.Join(t.TempDir(), "tso"))
	if err != nil {
		t.Fatal(err)
	}
	oracle, err := tso.Open(ctx, windows, tso.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer oracle.Close()
	ts := tso.NewBatchClient(oracle, tso.ClientOptions{})
	defer ts.Close()
	client := kv.NewLocalClient(ks)
	newStore := func(opts txn.Options) *txn.Store {
		s := txn.NewStore(client, ts, opts)
		t.Cleanup(func() { _ = s.Close() })
		return s
	}

	setup := newStore(txn.Options{})
	tx, err := setup.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for i := range bank.accounts {
		_ = tx.Set(bank.account(i), []byte(strconv.FormatInt(bank.initial, 10)))
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}

	const (
		clients = 4
		// maxAttempts bounds the retries of one transfer: conflicts end
		// when the locks they wait for expire, after abandonTTL.
		maxAttempts = 1000
	)
	var (
		mu sync.Mutex
		// fate of every transfer by id: true if it must be in the ledger.
		mustExist = make(map[int64]bool)
		counts    = make(map[string]int)
		// lastAbandon is when the last abandoned commit returned. A lock
		// expires LockTTL after its prewrite (its TTL is LockTTL plus the
		// age of its transaction at prewrite), so every abandoned lock
		// has expired abandonTTL after lastAbandon.
		lastAbandon time.Time
		ids         atomic.Int64
	)
	record := func(id int64, exists bool, what string, abandoned bool) {
		mu.Lock()
		defer mu.Unlock()
		mustExist[id] = exists
		counts[what]++
		if abandoned {
			lastAbandon = time.Now()
		}
	}

	readerCtx, stopReader := context.WithCancel(ctx)
	var readerWG sync.WaitGroup
	var snapshots atomic.Int64
	readerWG.Go(func() {
		s := newStore(txn.Options{})
		for readerCtx.Err() == nil {
			sum, err := bank.sum(readerCtx, s)
			if readerCtx.Err() != nil {
				return
			}
			if err != nil {
				t.Errorf("reader: %v", err)
				return
			}
			if want := int64(bank.accounts) * bank.initial; sum != want {
				t.Errorf("reader: a snapshot sums the balances to %d, want %d", sum, want)
				return
			}
			snapshots.Add(1)
		}
	})

	var wg sync.WaitGroup
	for c := range clients {
		seed := rng.Uint64()
		wg.Go(func() {
			r := rand.New(rand.NewPCG(seed, uint64(c)))
			var plan atomic.Int32
			die := func(p abandonPlan) error {
				if abandonPlan(plan.Load()) == p {
					return errAbandon
				}
				return nil
			}
			s := newStore(txn.Options{
				LockTTL:     abandonTTL,
				EnableOnePC: new(false),
				Hooks: &txn.CommitHooks{
					AfterPrimaryPrewrite: func(uint64) error { return die(dieAfterPrimaryPrewrite) },
					AfterPrewrite:        func(uint64) error { return die(dieAfterPrewrite) },
					AfterPrimaryCommit:   func(uint64, uint64) error { return die(dieAfterPrimaryCommit) },
				},
			})
			// Each transfer is retried after a conflict, as a client
			// would, until it commits or its client dies; every attempt
			// is a transaction of its own, with its own ledger id.
			for range perClient {
				from := r.IntN(bank.accounts)
				to := (from + 1 + r.IntN(bank.accounts-1)) % bank.accounts
				amount := 1 + r.Int64N(50)
				p := commitNormally
				if r.IntN(3) == 0 {
					p = abandonPlan(1 + r.IntN(3))
				}
				plan.Store(int32(p))
				for attempt := 0; ; attempt++ {
					id := ids.Add(1)
					err := bank.transfer(ctx, s, id, from, to, amount)
					if err == nil {
						record(id, true, "committed", false)
						break
					}
					if errors.Is(err, errAbandon) {
						// The commit point is the primary's commit: a
						// client that dies after it has committed.
						record(id, p == dieAfterPrimaryCommit, "abandoned "+p.String(), true)
						break
					}
					if !errors.Is(err, txn.ErrWriteConflict) && !errors.Is(err, txn.ErrTxnAborted) {
						t.Errorf("transfer %d: %v", id, err)
						return
					}
					record(id, false, "conflicts", false)
					if attempt == maxAttempts {
						t.Errorf("transfer %d: %d conflicts in a row, the last: %v", id, attempt, err)
						return
					}
					time.Sleep(time.Duration(1+r.IntN(10)) * time.Millisecond)
				}
			}
		})
	}
	wg.Wait()
	stopReader()
	readerWG.Wait()
	if t.Failed() {
		return
	}

	// Let every abandoned lock expire, so that the final scan resolves
	// them all rather than reading past live ones.
	mu.Lock()
	expired := lastAbandon.Add(abandonTTL + 100*time.Millisecond)
	mu.Unlock()
	time.Sleep(time.Until(expired))
	before := countStoreLocks(t, ks)
	final := newStore(txn.Options{})
	got, err := scanAll(ctx, final)
	if err != nil {
		t.Fatalf("final scan: %v", err)
	}
	after := countStoreLocks(t, ks)

	want := make(map[int]int64)
	for i := range bank.accounts {
		want[i] = bank.initial
	}
	for k, v := range got {
		idStr, ok := strings.CutPrefix(k, "ledger/")
		if !ok {
			continue
		}
		id, _ := strconv.ParseInt(idStr, 10, 64)
		var from, to int
		var amount int64
		if _, err := fmt.Sscanf(v, "%d,%d,%d", &from, &to, &amount); err != nil {
			t.Fatalf("ledger %s = %q: %v", k, v, err)
		}
		want[from] -= amount
		want[to] += amount
		if exists, known := mustExist[id]; !known || !exists {
			t.Errorf("transfer %d is in the ledger; recorded: %v, must exist: %v", id, known, exists)
		}
	}
	for id, exists := range mustExist {
		if _, ok := got[string(ledgerKey(id))]; exists && !ok {
			t.Errorf("transfer %d committed (or abandoned after its commit point) but not in the ledger", id)
		}
	}
	for i := range bank.accounts {
		if v := got[string(bank.account(i))]; v != strconv.FormatInt(want[i], 10) {
			t.Errorf("account %d = %s, the ledger says %d", i, v, want[i])
		}
	}
	if after.locks != 0 {
		t.Errorf("%v remain after a scan of every key", after)
	}
	t.Logf("%d transfers %v; %d consistent snapshots read meanwhile; %v before the final scan, %v after",
		len(mustExist), counts, snapshots.Load(), before, after)
}

// transfer moves amount between two accounts and records it in the
// ledger, in one transaction of s.
func (b txnBank) transfer(ctx context.Context, s *txn.Store, id int64, from, to int, amount int64) error {
	tx, err := s.Begin(ctx)
	if err != nil {
		return err
	}
	bal := make([]int64, 2)
	for i, acct := range []int{from, to} {
		v, ok, err := tx.Get(ctx, b.account(acct))
		if err != nil || !ok {
			return fmt.Errorf("read account %d: found %v: %w", acct, ok, err)
		}
		if bal[i], err = strconv.ParseInt(string(v), 10, 64); err != nil {
			return fmt.Errorf("account %d = %q: %w", acct, v, err)
		}
	}
	_ = tx.Set(b.account(from), []byte(strconv.FormatInt(bal[0]-amount, 10)))
	_ = tx.Set(b.account(to), []byte(strconv.FormatInt(bal[1]+amount, 10)))
	_ = tx.Set(ledgerKey(id), fmt.Appendf(nil, "%d,%d,%d", from, to, amount))
	return tx.Commit(ctx)
}

// sum reads every balance in one snapshot and adds them up.
func (b txnBank) sum(ctx context.Context, s *txn.Store) (int64, error) {
	tx, err := s.Begin(ctx)
	if err != nil {
		return 0, err
	}
	defer tx.Rollback(ctx)
	it, err := tx.Iter(ctx, []byte("acct/"), []byte("acct0"))
	if err != nil {
		return 0, err
	}
	defer it.Close()
	var sum int64
	n := 0
	for ; it.Valid(); n++ {
		v, err := strconv.ParseInt(string(it.Value()), 10, 64)
		if err != nil {
			return 0, fmt.Errorf("%s = %q: %w", it.Key(), it.Value(), err)
		}
		sum += v
		if err := it.Next(ctx); err != nil {
			return 0, err
		}
	}
	if n != b.accounts {
		return 0, fmt.Errorf("a snapshot has %d accounts, want %d", n, b.accounts)
	}
	return sum, nil
}

// scanAll reads every key in one snapshot.
func scanAll(ctx context.Context, s *txn.Store) (map[string]string, error) {
	tx, err := s.Begin(ctx)
	if err != nil {
		return nil, err
	}
	defer tx.Rollback(ctx)
	it, err := tx.Iter(ctx, []byte{0}, nil)
	if err != nil {
		return nil, err
	}
	defer it.Close()
	out := make(map[string]string)
	for it.Valid() {
		out[string(it.Key())] = string(it.Value())
		if err := it.Next(ctx); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// countStoreLocks counts the locks in an open store that block reads.
func countStoreLocks(t *testing.T, store *kv.Store) lockCount {
	t.Helper()
	var c lockCount
	txns := make(map[uint64]bool)
	for _, reg := range store.Regions() {
		start := reg.Start
		for {
			_, err := store.Scan(context.Background(), &kv.ScanRequest{Region: reg.Ctx(), Start: start, Version: kv.MaxTS, KeyOnly: true})
			var locked *kv.KeyIsLockedError
			if !errors.As(err, &locked) {
				if err != nil {
					t.Fatalf("scan for locks: %v", err)
				}
				break
			}
			// A scan reports the locks nearest its start, in key order.
			locks := locked.Locks()
			for _, l := range locks {
				c.locks++
				txns[l.StartTS] = true
			}
			start = append(append([]byte{}, locks[len(locks)-1].Key...), 0)
		}
	}
	c.txns = len(txns)
	return c
}
