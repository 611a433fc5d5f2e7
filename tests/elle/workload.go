package elle

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/go-sql-driver/mysql"
)

// WorkloadOptions configures Run. Zero fields take the defaults given.
type WorkloadOptions struct {
	// Table holds the lists; Run drops and recreates it, so every run starts
	// from empty lists. Default "elle_append".
	Table string
	// Clients is the number of concurrent clients, each running one
	// transaction at a time over the database/sql pool. Default 4.
	Clients int
	// Txns stops the run after this many transactions over all clients.
	// Default 0: no limit, Duration or the context ends the run.
	Txns int
	// Duration stops invoking new transactions after this long; those in
	// flight finish. Default 0: no limit.
	Duration time.Duration
	// ActiveKeys is how many keys transactions choose from at a time. Few
	// keys make transactions collide, which is what finds anomalies.
	// Default 8.
	ActiveKeys int
	// MaxWritesPerKey retires a key after this many appends, replacing it
	// with a fresh one, so that lists stay short and reads cheap. Default 32.
	MaxWritesPerKey int
	// MaxOps is the most micro-operations in a transaction; each has
	// between 1 and MaxOps, half reads and half appends. Default 4.
	MaxOps int
	// Seed seeds the generator of transactions. Default 0.
	Seed uint64
	// Upsert appends with one INSERT ... ON DUPLICATE KEY UPDATE instead of
	// an UPDATE followed, when it matched no row, by an INSERT. Default
	// false.
	Upsert bool
	// ExplicitSingleReads runs a transaction made of one read inside BEGIN
	// and COMMIT like the others. Default false: it runs as an autocommit
	// SELECT, so that the real-time edges also check that autocommit point
	// reads are linearizable (see everything committed before them).
	ExplicitSingleReads bool
	// Isolation is the level asked for at BEGIN. Default sql.LevelDefault:
	// the server's own (REPEATABLE READ, which is snapshot isolation in
	// percdb).
	Isolation sql.IsolationLevel
	// TxnTimeout bounds one transaction; one that runs out is recorded as
	// fail, or as info if it was committing. Default 0: no bound.
	TxnTimeout time.Duration
	// Progress, when set, receives a line with the counts so far every
	// ProgressEvery (default 10s).
	Progress      io.Writer
	ProgressEvery time.Duration
}

func (o *WorkloadOptions) setDefaults() error {
	if o.Table == "" {
		o.Table = "elle_append"
	}
	if !identifier.MatchString(o.Table) {
		return fmt.Errorf("workload: table name %q is not a plain identifier", o.Table)
	}
	if o.Clients == 0 {
		o.Clients = 4
	}
	if o.ActiveKeys == 0 {
		o.ActiveKeys = 8
	}
	if o.MaxWritesPerKey == 0 {
		o.MaxWritesPerKey = 32
	}
	if o.MaxOps == 0 {
		o.MaxOps = 4
	}
	if o.ProgressEvery == 0 {
		o.ProgressEvery = 10 * time.Second
	}
	switch {
	case o.Clients < 0, o.Txns < 0, o.Duration < 0, o.ActiveKeys < 0, o.MaxWritesPerKey < 0, o.MaxOps < 0, o.TxnTimeout < 0, o.ProgressEvery < 0:
		return fmt.Errorf("workload: negative option in %+v", *o)
	}
	return nil
}

var identifier = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// generator hands out transactions: Elle's key rotation (a pool of active
// keys, each retired after MaxWritesPerKey appends) and values unique per
// key. It is shared by the clients, under its mutex.
type generator struct {
	mu      sync.Mutex
	rng     *rand.Rand
	opts    *WorkloadOptions
	active  []int
	writes  map[int]int // key -> appends handed out
	nextKey int
}

func newGenerator(opts *WorkloadOptions) *generator {
	g := &generator{
		rng:    rand.New(rand.NewPCG(opts.Seed, 0x656c6c65)),
		opts:   opts,
		writes: make(map[int]int),
	}
	for range opts.ActiveKeys {
		g.active = append(g.active, g.nextKey)
		g.nextKey++
	}
	return g
}

func (g *generator) next() []MicroOp {
	g.mu.Lock()
	defer g.mu.Unlock()
	n := 1 + g.rng.IntN(g.opts.MaxOps)
	ops := make([]MicroOp, 0, n)
	for range n {
		slot := g.rng.IntN(len(g.active))
		k := g.active[slot]
		if g.rng.IntN(2) == 0 {
			ops = append(ops, ReadOp(k, nil))
			continue
		}
		g.writes[k]++
		ops = append(ops, AppendOp(k, g.writes[k]))
		if g.writes[k] >= g.opts.MaxWritesPerKey {
			delete(g.writes, k)
			g.active[slot] = g.nextKey
			g.nextKey++
		}
	}
	return ops
}

// statements are the SQL texts of the micro-operations on one table.
type statements struct {
	read, update, insert, upsert string
}

func newStatements(table string) statements {
	return statements{
		read:   fmt.Sprintf("SELECT v FROM %s WHERE k = ?", table),
		update: fmt.Sprintf("UPDATE %s SET v = CONCAT(v, ',', ?) WHERE k = ?", table),
		insert: fmt.Sprintf("INSERT INTO %s (k, v) VALUES (?, ?)", table),
		upsert: fmt.Sprintf("INSERT INTO %s (k, v) VALUES (?, ?) ON DUPLICATE KEY UPDATE v = CONCAT(v, ',', ?)", table),
	}
}

// Run creates the table, runs the list-append workload until Txns
// transactions, Duration or ctx ends it, and returns the history in
// completion order. It fails only if the table cannot be set up; what
// happens to each transaction is in the history.
func Run(ctx context.Context, db *sql.DB, opts WorkloadOptions) ([]Txn, error) {
	if err := opts.setDefaults(); err != nil {
		return nil, err
	}
	for _, q := range []string{
		"DROP TABLE IF EXISTS " + opts.Table,
		"CREATE TABLE " + opts.Table + " (k INT PRIMARY KEY, v TEXT)",
	} {
		if _, err := db.ExecContext(ctx, q); err != nil {
			return nil, fmt.Errorf("workload setup %q: %w", q, err)
		}
	}
	gen := newGenerator(&opts)
	stmts := newStatements(opts.Table)
	start := time.Now()
	// invoking ends when the run should start no new transaction; ctx
	// itself still governs those in flight.
	invoking, stop := context.WithCancel(ctx)
	defer stop()
	if opts.Duration > 0 {
		var cancel context.CancelFunc
		invoking, cancel = context.WithTimeout(invoking, opts.Duration)
		defer cancel()
	}
	var (
		mu      sync.Mutex
		history []Txn
		invoked int
		counts  [Info + 1]int
	)
	claim := func() bool {
		mu.Lock()
		defer mu.Unlock()
		if invoking.Err() != nil || (opts.Txns > 0 && invoked >= opts.Txns) {
			return false
		}
		invoked++
		return true
	}
	var wg sync.WaitGroup
	for p := range opts.Clients {
		wg.Go(func() {
			for claim() {
				t := Txn{Process: p, Invoke: int64(time.Since(start))}
				t.Status, t.Ops, t.Err = runTxn(ctx, db, &opts, stmts, gen.next())
				t.Complete = int64(time.Since(start))
				mu.Lock()
				history = append(history, t)
				counts[t.Status]++
				mu.Unlock()
			}
		})
	}
	if opts.Progress != nil {
		done := make(chan struct{})
		defer close(done)
		go func() {
			tick := time.NewTicker(opts.ProgressEvery)
			defer tick.Stop()
			for {
				select {
				case <-done:
					return
				case <-tick.C:
					mu.Lock()
					fmt.Fprintf(opts.Progress, "%v: %d transactions: ok %d, fail %d, info %d\n",
						time.Since(start).Round(time.Second), len(history), counts[OK], counts[Fail], counts[Info])
					mu.Unlock()
				}
			}
		}()
	}
	wg.Wait()
	return history, nil
}

// runTxn runs one transaction and returns its outcome and its ops with the
// results of the reads that ran.
func runTxn(ctx context.Context, db *sql.DB, opts *WorkloadOptions, stmts statements, plan []MicroOp) (Status, []MicroOp, string) {
	if opts.TxnTimeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, opts.TxnTimeout)
		defer cancel()
	}
	if len(plan) == 1 && plan[0].Kind == Read && !opts.ExplicitSingleReads {
		// An autocommit read: nothing to commit, so any error means it
		// did not happen.
		if err := runMicroOp(ctx, db, opts, stmts, &plan[0]); err != nil {
			return Fail, plan, fmt.Sprintf("autocommit %s: %v", plan[0], err)
		}
		return OK, plan, ""
	}
	tx, err := db.BeginTx(ctx, &sql.TxOptions{Isolation: opts.Isolation})
	if err != nil {
		return Fail, plan, "begin: " + err.Error()
	}
	for i := range plan {
		m := &plan[i]
		if err := runMicroOp(ctx, tx, opts, stmts, m); err != nil {
			// Whatever went wrong, COMMIT was never sent: the transaction
			// cannot have committed. Rollback may fail on a broken
			// connection, which the server rolls back anyway.
			_ = tx.Rollback()
			return Fail, plan, fmt.Sprintf("%s: %v", m, err)
		}
	}
	if err := tx.Commit(); err != nil {
		if DefinitelyAborted(err) {
			return Fail, plan, "commit: " + err.Error()
		}
		return Info, plan, "commit: " + err.Error()
	}
	return OK, plan, ""
}

// execer is what runs a micro-operation: a transaction, or the pool for an
// autocommit statement.
type execer interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

func runMicroOp(ctx context.Context, tx execer, opts *WorkloadOptions, stmts statements, m *MicroOp) error {
	if m.Kind == Read {
		var v sql.NullString
		err := tx.QueryRowContext(ctx, stmts.read, m.Key).Scan(&v)
		switch {
		case errors.Is(err, sql.ErrNoRows):
			m.List = []int{}
		case err != nil:
			return err
		default:
			m.List = parseList(v)
		}
		return nil
	}
	x := strconv.Itoa(m.Value)
	if opts.Upsert {
		_, err := tx.ExecContext(ctx, stmts.upsert, m.Key, x, x)
		return err
	}
	res, err := tx.ExecContext(ctx, stmts.update, x, m.Key)
	if err != nil {
		return err
	}
	n, err := res.RowsAffected()
	if err != nil {
		return err
	}
	if n == 0 {
		_, err = tx.ExecContext(ctx, stmts.insert, m.Key, x)
	}
	return err
}

// parseList decodes a stored list. Anything that is not a decimal element
// (and a NULL, which the workload never writes) becomes -1, an element no
// one appends, so that the checker reports it as a garbage read instead of
// the run hiding it.
func parseList(v sql.NullString) []int {
	if !v.Valid {
		return []int{-1}
	}
	if v.String == "" {
		return []int{}
	}
	parts := strings.Split(v.String, ",")
	l := make([]int, len(parts))
	for i, p := range parts {
		x, err := strconv.Atoi(p)
		if err != nil || x < 0 {
			x = -1
		}
		l[i] = x
	}
	return l
}

// DefinitelyAborted reports whether an error from COMMIT means the
// transaction did not commit. Conflicts are: MySQL 1213 (deadlock, or
// percdb's write conflict), 1205 (lock wait timeout), 1062 (duplicate key
// found at commit), 1020 (record changed), TiDB's 9007 (write conflict).
// Anything else, a broken connection above all, leaves the outcome unknown.
func DefinitelyAborted(err error) bool {
	var me *mysql.MySQLError
	if !errors.As(err, &me) {
		return false
	}
	switch me.Number {
	case 1213, 1205, 1062, 1020, 9007:
		return true
	}
	return false
}
