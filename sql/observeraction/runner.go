package observeraction

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/percdb/percdb/observe"
	"github.com/percdb/percdb/sql/catalog"
	"github.com/percdb/percdb/txn"
)

// A SQL node runs the built-in actions of every observer with one Runner:
// it keeps a Runner of package observe with one observer per name whose
// watches carry an action, from the latest catalog (looked at every
// actionPoll, and at once after this node's ADMIN WATCH: Kick). Each run
// is the Host's (package sql's observeractions.go: a transaction of the
// SQL layer, the action's statements run through GMS); failures are
// retried with observe's backoff and counted per observer (Stats).

// Host is what a Runner needs of the SQL node it runs on.
type Host interface {
	// LatestCatalog returns the newest catalog.
	LatestCatalog(ctx context.Context) (*catalog.Catalog, error)
	// RunAction runs observer's action for the row rowKey in k, a
	// transaction of the Runner's observe.TxnSource.
	RunAction(ctx context.Context, observer string, k *txn.Txn, rowKey []byte) error
}

// actionPoll is how often a node looks for watches with actions that
// were added or removed by another node.
const actionPoll = time.Second

// actionRunnerIdle is its Runner's scanners' rest after a lap with little
// to do: the bound on how late a notification is found when the store has
// few.
const actionRunnerIdle = 20 * time.Millisecond

// Runner runs the built-in actions of one SQL node.
type Runner struct {
	host   Host
	store  *txn.Store
	runner *observe.Runner
	kickCh chan struct{}

	mu sync.Mutex
	// names are the observers registered with runner.
	names map[string]bool
	// version is the schema version names were last synced at (synced:
	// once they were).
	version uint64
	synced  bool

	stop func()
	done chan struct{}
}

// NewRunner returns the action runner of a SQL node over store, whose
// runs are transactions of txns; Start starts it.
func NewRunner(store *txn.Store, txns observe.TxnSource, host Host) *Runner {
	a := &Runner{
		host:   host,
		store:  store,
		kickCh: make(chan struct{}, 1),
		names:  make(map[string]bool),
	}
	a.runner = observe.New(store, observe.Options{Txns: txns, Idle: actionRunnerIdle,
		OnError: func(observer string, key []byte, err error) {
			if observer != "" {
				slog.Debug("observer action failed", "observer", observer, "row", fmt.Sprintf("%q", key), "err", err)
			}
		}})
	return a
}

// Start runs the action runner until Close.
func (a *Runner) Start() {
	ctx, cancel := context.WithCancel(context.Background())
	a.stop = cancel
	a.done = make(chan struct{})
	go func() {
		defer close(a.done)
		a.loop(ctx)
	}()
}

// Close stops the runner and waits for the runs in progress.
func (a *Runner) Close() {
	if a.stop != nil {
		a.stop()
		<-a.done
	}
}

// Kick makes the runner look at the catalog now.
func (a *Runner) Kick() {
	select {
	case a.kickCh <- struct{}{}:
	default:
	}
}

// loop registers the observers with actions as the catalog has them and
// runs the Runner while there is one.
func (a *Runner) loop(ctx context.Context) {
	var running *runningRunner
	defer func() { running.stop() }()
	tick := time.NewTicker(actionPoll)
	defer tick.Stop()
	for {
		n, err := a.sync(ctx)
		switch {
		case err != nil:
			if ctx.Err() == nil {
				slog.Warn("observer actions: read the catalog", "err", err)
			}
		case n > 0 && running == nil:
			running = a.runRunner(ctx)
		case n == 0 && running != nil:
			running.stop()
			running = nil
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		case <-a.kickCh:
		}
	}
}

// runningRunner is a Run of the action runner's Runner in progress.
type runningRunner struct {
	cancel context.CancelFunc
	done   chan struct{}
}

// runRunner runs the Runner until ctx ends or the returned Run is
// stopped.
func (a *Runner) runRunner(ctx context.Context) *runningRunner {
	rctx, cancel := context.WithCancel(ctx)
	r := &runningRunner{cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(r.done)
		_ = a.runner.Run(rctx)
	}()
	return r
}

// stop ends the Run and waits for its runs; nil does nothing.
func (r *runningRunner) stop() {
	if r != nil {
		r.cancel()
		<-r.done
	}
}

// sync registers with the Runner every observer with an action in the
// latest catalog and unregisters the others; it returns how many there
// are. It reads the schema version first, with a point read that takes
// no timestamp, and the catalog only when the version moved: an idle
// node's look costs no oracle call.
func (a *Runner) sync(ctx context.Context) (int, error) {
	raw, found, err := a.store.PointGet(ctx, catalog.KeyVersion)
	if err != nil {
		return 0, err
	}
	var version uint64
	if found {
		if version, err = catalog.DecodeUint64("schema version", raw); err != nil {
			return 0, err
		}
	}
	a.mu.Lock()
	same := a.synced && version == a.version
	n := len(a.names)
	a.mu.Unlock()
	if same {
		return n, nil
	}
	c, err := a.host.LatestCatalog(ctx)
	if err != nil {
		return 0, err
	}
	want := map[string]bool{}
	for _, db := range c.Databases {
		for _, def := range c.Tables[db.ID] {
			for _, o := range def.Observers {
				if o.Action != "" {
					want[o.Name] = true
				}
			}
		}
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	for name := range a.names {
		if !want[name] {
			a.runner.Unregister(name)
			delete(a.names, name)
		}
	}
	for name := range want {
		if a.names[name] {
			continue
		}
		if err := a.runner.Register(ctx, observe.Observer{Name: name, Run: a.observerFunc(name)}); err != nil {
			return 0, err
		}
		a.names[name] = true
	}
	// The catalog read is at least as new as the version read before it.
	a.synced, a.version = true, version
	return len(a.names), nil
}

// Stats returns the Runner's counters of each observer it ran.
func (a *Runner) Stats() map[string]observe.ObserverStats { return a.runner.ObserverStats() }

// observerFunc returns the observe.Func of the observer name.
func (a *Runner) observerFunc(name string) observe.Func {
	return func(ctx context.Context, k *txn.Txn, rowKey []byte) error {
		return a.host.RunAction(ctx, name, k, rowKey)
	}
}
