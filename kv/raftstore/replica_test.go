package raftstore

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cockroachdb/datadriven"
)

// fakeApplier records the batches applied on one store, in order. A
// batch applied again (a replay after a restart) is not recorded twice,
// as applying it again to the KV store changes nothing. synced is how
// many of them Sync made durable: all a restart keeps.
type fakeApplier struct {
	mu        sync.Mutex
	applied   []string
	synced    int
	maxReadTS uint64
}

func (a *fakeApplier) ApplyReplicated(_ context.Context, batch []byte) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, b := range a.applied {
		if b == string(batch) {
			return nil
		}
	}
	a.applied = append(a.applied, string(batch))
	return nil
}

// ExportRange sends the batches applied, one a chunk.
func (a *fakeApplier) ExportRange(_ context.Context, _, _ []byte, _ int, emit func([]byte) error) error {
	a.mu.Lock()
	chunks := append([]string(nil), a.applied...)
	a.mu.Unlock()
	for _, c := range chunks {
		if err := emit([]byte(c)); err != nil {
			return err
		}
	}
	return nil
}

// ImportRange replaces the batches applied with the chunks, durably.
func (a *fakeApplier) ImportRange(_ context.Context, _, _ []byte, chunks [][]byte) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.applied = a.applied[:0]
	for _, c := range chunks {
		a.applied = append(a.applied, string(c))
	}
	a.synced = len(a.applied)
	return nil
}

func (a *fakeApplier) Sync(context.Context) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.synced = len(a.applied)
	return nil
}

func (a *fakeApplier) UpdateMaxReadTS(ts uint64) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.maxReadTS = max(a.maxReadTS, ts)
}

// memNetwork is the in-memory transport of a test: messages queue until
// the test delivers them; a partitioned store's messages, to it and from
// it, are dropped.
type memNetwork struct {
	queued      map[uint64][]Envelope
	snaps       map[uint64][]inSnapshot
	partitioned map[uint64]bool
	// held are the stores behind a slow link: the snapshots sent to
	// them stay on their way until the test releases them, and the raft
	// messages sent while one does are lost (they would arrive after
	// it).
	held map[uint64]bool
}

type memTransport struct {
	net  *memNetwork
	from uint64
}

func (t memTransport) Send(to uint64, msgs []Envelope) {
	if t.net.partitioned[to] || t.net.partitioned[t.from] || (t.net.held[to] && len(t.net.snaps[to]) > 0) {
		return
	}
	t.net.queued[to] = append(t.net.queued[to], msgs...)
}

// SendSnapshot queues the snapshot for the test to deliver (the store's
// loop waits for the goroutine that calls it, so no lock is needed).
func (t memTransport) SendSnapshot(_ context.Context, to uint64, env Envelope, export func(emit func([]byte) error) error) error {
	if t.net.partitioned[to] || t.net.partitioned[t.from] {
		return errors.New("partitioned")
	}
	var chunks [][]byte
	if err := export(func(c []byte) error {
		chunks = append(chunks, c)
		return nil
	}); err != nil {
		return err
	}
	t.net.snaps[to] = append(t.net.snaps[to], inSnapshot{env: env, chunks: chunks})
	return nil
}

// testCluster is n stores of one region, driven by the test: the test is
// every store's loop.
type testCluster struct {
	t       *testing.T
	dir     string
	net     *memNetwork
	stores  map[uint64]*Store
	appl    map[uint64]*fakeApplier
	peers   []uint64
	compact int
	limit   int
	oracle  uint64
	pending map[string]chan error
	// replicating holds the Replicate calls of pending whose context
	// ended ("replicate"), with their proposals.
	replicating map[string]abandoned
	reads       map[string]*readRequest
	// split lists the regions splits created; leaderships are the ones
	// the test took and named (leading).
	split       []uint64
	leaderships map[string]Leadership
	// clock is the stores' clock (Config.Now) in nanoseconds: each tick
	// advances it by a tick interval, and nothing else does.
	clock atomic.Int64
}

// open opens store id, its replica of the region at conf_ver confVer
// (1: one of the initial peers; more: a store that joins, uninitialized);
// what a previous store id synced is its state. The replica's creation
// error (a tombstone) is returned.
func (c *testCluster) open(id, confVer uint64) error {
	c.t.Helper()
	a := &fakeApplier{}
	if old := c.appl[id]; old != nil {
		a.applied = append(a.applied, old.applied[:old.synced]...)
		a.synced = old.synced
	}
	s, err := Open(Config{StoreID: id, Dir: filepath.Join(c.dir, strconv.FormatUint(id, 10)), Applier: a,
		Transport: memTransport{c.net, id}, LogCompactThreshold: c.compact, LogCountLimit: c.limit,
		FreshTS: func(context.Context) (uint64, error) {
			return c.nextTS(), nil
		},
		Now:    func() time.Time { return time.Unix(0, c.clock.Load()) },
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		c.t.Fatal(err)
	}
	c.stores[id], c.appl[id] = s, a
	if confVer == 0 {
		return nil // the node has not created the region yet
	}
	_, err = s.AddRegion(1, Descriptor{}, c.peers, confVer)
	// The regions splits created here are reloaded from the raft engine,
	// as the node adds them from its state file.
	for _, rid := range c.split {
		if _, err := s.AddRegion(rid, Descriptor{Version: 2}, c.peers, confVer); err != nil && !errors.Is(err, ErrTombstoned) {
			c.t.Fatal(err)
		}
	}
	return err
}

var oracleMu sync.Mutex

func (c *testCluster) nextTS() uint64 {
	oracleMu.Lock()
	defer oracleMu.Unlock()
	c.oracle += 100
	return c.oracle
}

func (c *testCluster) ids() []uint64 {
	var out []uint64
	for id := range c.stores {
		out = append(out, id)
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

// stabilize runs rounds on every store and delivers messages until
// nothing moves; the goroutines a round starts (max_read_ts) are waited
// for.
func (c *testCluster) stabilize() {
	for i := 0; i < 1000; i++ {
		moved := false
		for _, id := range c.ids() {
			s := c.stores[id]
			if q := c.net.queued[id]; len(q) > 0 {
				delete(c.net.queued, id)
				s.Step(q)
				moved = true
			}
			if !c.net.held[id] {
				for _, in := range c.net.snaps[id] {
					s.ReceiveSnapshot(in.env, in.chunks)
					moved = true
				}
				delete(c.net.snaps, id)
			}
			s.mu.Lock()
			busy := len(s.inbox) > 0 || len(s.snaps) > 0 || len(s.reports) > 0
			s.mu.Unlock()
			for _, r := range s.sorted() {
				r.mu.Lock()
				busy = busy || len(r.newProps) > 0 || len(r.newReads) > 0
				r.mu.Unlock()
				busy = busy || r.rn.HasReady() || (r.barrier.term != 0 && !r.barrier.asked)
			}
			if busy {
				moved = true
			}
			if err := s.round(context.Background()); err != nil {
				c.t.Fatal(err)
			}
			s.wg.Wait()
		}
		if !moved {
			return
		}
	}
	c.t.Fatal("the cluster did not stabilize")
}

// status prints every store's replica; anonymous: without store ids,
// lines sorted, for states where which store won an election is up to
// raft's randomized timeouts.
func (c *testCluster) status(anonymous bool) string {
	var lines []string
	for _, id := range c.ids() {
		var b strings.Builder
		r := c.stores[id].Replica(1)
		if r == nil {
			lines = append(lines, fmt.Sprintf("store %d: no replica", id))
			continue
		}
		st := r.rn.BasicStatus()
		_, err := r.Leading()
		a := c.appl[id]
		a.mu.Lock()
		if anonymous {
			lead := "none"
			if st.Lead == id {
				lead = "self"
			} else if st.Lead != 0 {
				lead = "other"
			}
			fmt.Fprintf(&b, "%s term=%d lead=%s commit=%d applied=%d serving=%t", st.RaftState, st.HardState.GetTerm(), lead,
				st.HardState.GetCommit(), r.applied, err == nil)
		} else {
			fmt.Fprintf(&b, "store %d: %s term=%d lead=%d commit=%d applied=%d serving=%t max_read_ts=%d", id,
				st.RaftState, st.HardState.GetTerm(), st.Lead, st.HardState.GetCommit(), r.applied, err == nil, a.maxReadTS)
		}
		a.mu.Unlock()
		lines = append(lines, b.String())
	}
	if anonymous {
		sort.Strings(lines)
	}
	return strings.Join(lines, "\n") + "\n"
}

// eachReplica prints one line per store: what line says of its replica,
// or that it has none.
func (c *testCluster) eachReplica(line func(store uint64, r *Replica) string) string {
	var b strings.Builder
	for _, id := range c.ids() {
		if r := c.stores[id].Replica(1); r == nil {
			fmt.Fprintf(&b, "store %d: no replica\n", id)
		} else {
			fmt.Fprintf(&b, "store %d: %s\n", id, line(id, r))
		}
	}
	return b.String()
}

// newestLeader returns the store whose replica serves in the highest
// term, or 0.
func (c *testCluster) newestLeader() uint64 {
	var best, term uint64
	for _, id := range c.ids() {
		if r := c.stores[id].Replica(1); r != nil {
			if l, err := r.Leading(); err == nil && l.term > term {
				best, term = id, l.term
			}
		}
	}
	return best
}

// leader returns the store whose replica serves, or 0.
func (c *testCluster) leader() uint64 {
	for _, id := range c.ids() {
		if r := c.stores[id].Replica(1); r != nil {
			if _, err := r.Leading(); err == nil {
				return id
			}
		}
	}
	return 0
}

func TestReplica(t *testing.T) {
	datadriven.Walk(t, "testdata", func(t *testing.T, path string) {
		c := &testCluster{t: t, dir: t.TempDir(), net: &memNetwork{queued: map[uint64][]Envelope{}, snaps: map[uint64][]inSnapshot{}, partitioned: map[uint64]bool{}, held: map[uint64]bool{}},
			stores: map[uint64]*Store{}, appl: map[uint64]*fakeApplier{}, pending: map[string]chan error{}, replicating: map[string]abandoned{}, reads: map[string]*readRequest{},
			leaderships: map[string]Leadership{}}
		defer func() {
			for _, s := range c.stores {
				_ = s.Close()
			}
		}()
		datadriven.RunTest(t, path, func(t *testing.T, d *datadriven.TestData) string {
			anonymous := d.HasArg("anonymous")
			store := func() uint64 {
				var arg string
				d.ScanArgs(t, "store", &arg)
				id, err := strconv.ParseUint(arg, 10, 64)
				switch arg {
				case "leader":
					id, err = c.leader(), nil
				case "newest":
					id, err = c.newestLeader(), nil
				}
				if err != nil {
					t.Fatal(err)
				}
				if c.stores[id] == nil {
					t.Fatalf("no store %d", id)
				}
				return id
			}
			switch d.Cmd {
			case "stores":
				var n int
				d.ScanArgs(t, "n", &n)
				if d.HasArg("compact") {
					d.ScanArgs(t, "compact", &c.compact)
				}
				if d.HasArg("limit") {
					d.ScanArgs(t, "limit", &c.limit)
				}
				for i := 1; i <= n; i++ {
					c.peers = append(c.peers, uint64(i))
				}
				for _, id := range c.peers {
					if err := c.open(id, 1); err != nil {
						t.Fatal(err)
					}
				}
				return c.status(anonymous)
			case "add-store":
				// A store that joins: its replica, created as pd's
				// directory lists it once a conf change added it, is
				// uninitialized until the leader's snapshot.
				// empty: the node has not created it yet (pd lists the
				// region to the store a heartbeat or two after the
				// conf change).
				var id uint64
				d.ScanArgs(t, "id", &id)
				confVer := uint64(2)
				if d.HasArg("empty") {
					confVer = 0
				}
				if err := c.open(id, confVer); err != nil {
					return err.Error()
				}
				return c.status(anonymous)
			case "change-peer":
				var remove, add uint64
				d.ScanArgs(t, "remove", &remove)
				d.ScanArgs(t, "add", &add)
				c.stores[store()].Replica(1).ChangePeer(remove, add)
				c.stabilize()
				return c.status(anonymous)
			case "conf":
				return c.eachReplica(func(_ uint64, r *Replica) string {
					cf := r.Conf()
					return fmt.Sprintf("conf_ver=%d voters=%v learners=%v", cf.Ver, cf.Voters, cf.Learners)
				})
			case "transfer-leader":
				// What pd's leader balance asks of a region's leader.
				var to uint64
				d.ScanArgs(t, "to", &to)
				c.stores[store()].Replica(regionArg(t, d)).TransferLeader(to)
				c.stabilize()
				return c.status(anonymous)
			case "transfer-leaders":
				// What a node being stopped does first.
				s := c.stores[store()]
				s.mu.Lock()
				s.transferring = true
				s.mu.Unlock()
				c.stabilize()
				return c.status(anonymous)
			case "leading":
				// Whether the store's replica serves, and if not whether
				// it says the region is unavailable (no quorum heard).
				_, err := c.stores[store()].Replica(1).Leading()
				var nl *NotLeaderError
				if errors.As(err, &nl) {
					return fmt.Sprintf("not leader, unavailable=%t", nl.Unavailable)
				}
				return fmt.Sprint(err)
			case "remove":
				// What the node does once pd no longer lists the region
				// for the store.
				c.stores[store()].RemoveRegion(1)
				c.stabilize()
				return c.status(anonymous)
			case "campaign":
				s := c.stores[store()]
				r := s.Replica(regionArg(t, d))
				if err := r.rn.Campaign(); err != nil {
					return err.Error()
				}
				s.touch(r) // raft has work the loop must see
				c.stabilize()
				return c.status(anonymous)
			case "tick":
				// Each tick advances the clock by a tick interval; only=(..)
				// ticks only the stores listed (the others' loops are
				// late), for elections that randomized timeouts do not
				// decide.
				var n int
				d.ScanArgs(t, "n", &n)
				ticked := c.ids()
				if arg, ok := d.Arg("only"); ok {
					ticked = nil
					for _, v := range arg.Vals {
						id, err := strconv.ParseUint(v, 10, 64)
						if err != nil {
							t.Fatal(err)
						}
						ticked = append(ticked, id)
					}
				}
				for i := 0; i < n; i++ {
					c.clock.Add(int64(100 * time.Millisecond))
					for _, id := range ticked {
						c.stores[id].tick()
					}
					c.stabilize()
				}
				if d.HasArg("quiet") {
					return "ok" // which store won an election is up to raft's randomized timeouts
				}
				return c.status(anonymous)
			case "split":
				// The leader of region (default 1) on store splits it at
				// key, the part from key on becoming region id.
				var key string
				var newID uint64
				d.ScanArgs(t, "key", &key)
				d.ScanArgs(t, "id", &newID)
				r := c.stores[store()].Replica(regionArg(t, d))
				l, err := r.Leading()
				if err != nil {
					return err.Error()
				}
				done := make(chan string, 1)
				go func() {
					left, right, err := l.Split(context.Background(), []byte(key), newID)
					if err != nil {
						done <- err.Error()
						return
					}
					done <- fmt.Sprintf("left %s, right %s", descString(left), descString(right))
				}()
				// Wait until the split is queued for the loop, or refused
				// before (no timing: the goroutine's propose is awaited).
				var out string
				for queued := false; !queued; runtime.Gosched() {
					select {
					case out = <-done:
						return out + "\n"
					default:
					}
					r.mu.Lock()
					queued = len(r.newProps) > 0
					r.mu.Unlock()
				}
				c.stabilize()
				out = <-done
				if !slices.Contains(c.split, newID) && !strings.Contains(out, "refused") {
					c.split = append(c.split, newID)
				}
				c.stabilize()
				return out + "\n"
			case "regions":
				// Every store's replicas: range, version, voters, whether it
				// serves, the applied index.
				var b strings.Builder
				for _, id := range c.ids() {
					for _, r := range c.stores[id].sorted() {
						_, err := r.Leading()
						fmt.Fprintf(&b, "store %d region %d: %s voters=%v serving=%t applied=%d\n", id, r.ID(), descString(r.Region()),
							r.Conf().Voters, err == nil, r.applied)
					}
				}
				return b.String()
			case "take-leadership":
				// Names the serving leadership of the store's replica.
				var name string
				d.ScanArgs(t, "name", &name)
				l, err := c.stores[store()].Replica(regionArg(t, d)).Leading()
				if err != nil {
					return err.Error()
				}
				c.leaderships[name] = l
				return "ok"
			case "propose":
				id := store()
				var v string
				d.ScanArgs(t, "v", &v)
				r := c.stores[id].Replica(regionArg(t, d))
				l, err := r.Leading()
				if err != nil {
					return err.Error()
				}
				if d.HasArg("under") {
					// Under a leadership taken earlier (take-leadership).
					var name string
					d.ScanArgs(t, "under", &name)
					l = c.leaderships[name]
				}
				if !d.HasArg("abandoned") {
					_, done, err := l.propose(kindBatch, []byte(v))
					if err != nil {
						return err.Error()
					}
					c.pending[v] = done
					return "proposed"
				}
				// abandoned: Replicate v with a context that has already
				// ended (the client gave up); its result shows whether it
				// returned before the entry's fate was settled here.
				ctx, cancel := context.WithCancel(context.Background())
				cancel()
				done := make(chan error, 1)
				go func() { done <- abandonedOutcome(l.Replicate(ctx, []byte(v))) }()
				// Wait until the batch is queued for the loop (no timing:
				// the goroutine's propose is what this waits for).
				for queued := false; !queued; {
					r.mu.Lock()
					if n := len(r.newProps); n > 0 {
						queued = true
						c.replicating[v] = abandoned{r: r, key: r.newProps[n-1].key}
					}
					r.mu.Unlock()
					runtime.Gosched()
				}
				c.pending[v] = done
				return "proposed, its context ended"
			case "read":
				id := store()
				var name string
				d.ScanArgs(t, "name", &name)
				l, err := c.stores[id].Replica(regionArg(t, d)).Leading()
				if err != nil {
					return err.Error()
				}
				req, err := l.askRead()
				if err != nil {
					return err.Error()
				}
				c.reads[name] = req
				return "asked"
			case "stabilize":
				c.stabilize()
				return c.status(anonymous)
			case "results":
				var b strings.Builder
				var names []string
				for v := range c.pending {
					names = append(names, v)
				}
				for v := range c.reads {
					names = append(names, "read "+v)
				}
				sort.Strings(names)
				for _, n := range names {
					ch := c.pending[n]
					if q, ok := c.reads[strings.TrimPrefix(n, "read ")]; ok && strings.HasPrefix(n, "read ") {
						ch = q.done
					}
					if a, ok := c.replicating[n]; ok {
						// Once the proposal no longer waits on the
						// replica, its Replicate returns promptly:
						// wait for it, so the outcome is never a race.
						a.r.mu.Lock()
						_, waits := a.r.waiting[a.key]
						a.r.mu.Unlock()
						if !waits {
							fmt.Fprintf(&b, "%s: %v\n", n, <-ch)
							delete(c.pending, n)
							delete(c.replicating, n)
							continue
						}
					}
					select {
					case err := <-ch:
						// Which store leads may be up to raft's
						// randomized timeouts: not printed.
						var nl *NotLeaderError
						var ee *EpochError
						switch {
						case errors.As(err, &nl):
							err = errors.New("not leader")
						case errors.As(err, &ee):
							err = fmt.Errorf("epoch not match: decided at version %d, region now %s", ee.Version, descString(ee.Current))
						}
						fmt.Fprintf(&b, "%s: %v\n", n, err)
						delete(c.pending, n)
						delete(c.reads, strings.TrimPrefix(n, "read "))
					default:
						fmt.Fprintf(&b, "%s: waiting\n", n)
					}
				}
				return b.String()
			case "applied":
				var b strings.Builder
				for _, id := range c.ids() {
					a := c.appl[id]
					a.mu.Lock()
					fmt.Fprintf(&b, "store %d: %s\n", id, strings.Join(a.applied, " "))
					a.mu.Unlock()
				}
				return b.String()
			case "log":
				// Each store's log: the entries its memory holds, and
				// where its log starts in the raft engine.
				return c.eachReplica(func(id uint64, r *Replica) string {
					first, _ := r.ms.FirstIndex()
					last, _ := r.ms.LastIndex()
					kept, err := loadRegion(c.stores[id].db, 1)
					if err != nil {
						t.Fatal(err)
					}
					return fmt.Sprintf("memory %d-%d, engine truncated at %d, %d entries", first, last, kept.trunc.index, len(kept.entries))
				})
			case "hold-snapshots":
				// A slow link to the store: a snapshot sent to it stays
				// on its way, and the raft messages after it are lost,
				// until release-snapshots.
				c.net.held[store()] = true
				return "ok"
			case "release-snapshots":
				delete(c.net.held, store())
				c.stabilize()
				return c.status(anonymous)
			case "snapshots":
				// What each store sent and installed so far.
				return c.eachReplica(func(id uint64, _ *Replica) string {
					st := c.stores[id].Stats()
					return fmt.Sprintf("sent=%d failed=%d installed=%d", st.SnapshotsSent, st.SnapshotSendFailures, st.SnapshotsInstalled)
				})
			case "lease":
				// Whether the store's replica may serve reads from its
				// commit index, and for how long yet.
				r := c.stores[store()].Replica(1)
				now := time.Unix(0, c.clock.Load())
				switch {
				case r.lease.noLease != 0 && r.lease.noLease == r.barrier.term:
					return fmt.Sprintf("none: a leader transfer began in term %d", r.lease.noLease)
				case r.leaseHolds(r.barrier.term, now):
					return fmt.Sprintf("holds, %v left", r.lease.until.Sub(now))
				default:
					return "expired"
				}
			case "partition":
				c.net.partitioned[store()] = true
				return "ok"
			case "heal":
				if d.HasArg("store") {
					delete(c.net.partitioned, store())
				} else {
					c.net.partitioned = map[uint64]bool{}
				}
				return "ok"
			case "restart":
				id := store()
				if err := c.stores[id].Close(); err != nil {
					t.Fatal(err)
				}
				delete(c.net.queued, id)
				delete(c.net.snaps, id)
				confVer := uint64(1)
				if !slices.Contains(c.peers, id) {
					confVer = 2 // a store that joined
				}
				if err := c.open(id, confVer); err != nil {
					return err.Error()
				}
				return c.status(anonymous)
			default:
				t.Fatalf("unknown command %q", d.Cmd)
				return ""
			}
		})
	})
}

// regionArg is the command's region argument, 1 by default.
func regionArg(t *testing.T, d *datadriven.TestData) uint64 {
	id := uint64(1)
	if d.HasArg("region") {
		d.ScanArgs(t, "region", &id)
	}
	return id
}

// descString renders a descriptor: [start, end) v<version>.
func descString(d Descriptor) string {
	return fmt.Sprintf("[%s, %s) v%d", d.Start, d.End, d.Version)
}

// abandonedOutcome describes the result of a Replicate whose context had
// ended: whether it waited for its entry's fate, and which.
func abandonedOutcome(err error) error {
	var nl *NotLeaderError
	switch {
	case err == nil:
		return errors.New("applied, the context ignored")
	case !errors.Is(err, context.Canceled):
		return err
	case errors.As(err, &nl):
		return errors.New("context canceled; settled: not applied (not leader)")
	case strings.Contains(err.Error(), "(the batch was applied)"):
		return errors.New("context canceled; settled: applied")
	case errors.Is(err, ErrUndetermined):
		return errors.New("context canceled; settled: undetermined (snapshot)")
	default:
		return errors.New("context canceled; returned before its entry was settled")
	}
}

// abandoned is a Replicate call whose context ended: its replica and the
// key of its proposal.
type abandoned struct {
	r   *Replica
	key proposalKey
}
