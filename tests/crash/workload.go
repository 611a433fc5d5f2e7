package crash

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/go-sql-driver/mysql"
)

// Config describes the workload's data. The zero value takes the defaults
// documented on each field; the Checker must be given the same Config as
// the workers.
type Config struct {
	// Database holds the workload's tables. Default "crash".
	Database string
	// Accounts is the number of bank accounts. Default 10.
	Accounts int
	// InitialBalance is every account's balance at setup; the sum of the
	// balances stays Accounts*InitialBalance. Default 1000.
	InitialBalance int64
	// Workers is how many counters rows Setup creates: worker ids are
	// 0..Workers-1 (an order bumps its worker's row). Default 64.
	Workers int
	// BigOrderPad is the filler length of each line of a big order.
	// Default 6000: three lines or more take a transaction past the
	// store's 16 KiB one-phase-commit limit, so that it commits in two
	// phases with a primary and secondary locks, which is what a crash can
	// leave behind. Small orders and the other transactions commit in one
	// phase.
	BigOrderPad int
	// ItemPad is the filler length of an item row. Default 300: above the
	// store's 255-byte short-value limit, so that item values live in the
	// data space rather than in their write records.
	ItemPad int
}

func (c Config) withDefaults() Config {
	if c.Database == "" {
		c.Database = "crash"
	}
	if c.Accounts == 0 {
		c.Accounts = 10
	}
	if c.InitialBalance == 0 {
		c.InitialBalance = 1000
	}
	if c.Workers == 0 {
		c.Workers = 64
	}
	if c.BigOrderPad == 0 {
		c.BigOrderPad = 6000
	}
	if c.ItemPad == 0 {
		c.ItemPad = 300
	}
	return c
}

// validate rejects a configuration the workload cannot run.
func (c Config) validate() error {
	switch {
	case c.Accounts < 2:
		return fmt.Errorf("crash: %d accounts: transfers need at least 2", c.Accounts)
	case c.Workers < 1:
		return fmt.Errorf("crash: %d workers", c.Workers)
	case c.BigOrderPad < 0 || c.ItemPad < 0:
		return fmt.Errorf("crash: negative pad in %+v", c)
	case strings.ContainsAny(c.Database, "`\x00"):
		return fmt.Errorf("crash: database name %q", c.Database)
	}
	return nil
}

// Setup creates the workload's database and tables and their initial rows
// on a fresh server; db may have any default database.
func Setup(ctx context.Context, db *sql.DB, cfg Config) error {
	cfg = cfg.withDefaults()
	if err := cfg.validate(); err != nil {
		return err
	}
	stmts := []string{
		"CREATE DATABASE IF NOT EXISTS `" + cfg.Database + "`",
		"USE `" + cfg.Database + "`",
		"CREATE TABLE accounts (id INT PRIMARY KEY, bal BIGINT NOT NULL)",
		"CREATE TABLE transfers (id BIGINT PRIMARY KEY, src INT NOT NULL, dst INT NOT NULL, amount BIGINT NOT NULL, KEY src (src))",
		"CREATE TABLE items (id BIGINT PRIMARY KEY, worker INT NOT NULL, seq BIGINT NOT NULL, pad TEXT NOT NULL, UNIQUE KEY worker_seq (worker, seq))",
		"CREATE TABLE orders (id BIGINT PRIMARY KEY, worker INT NOT NULL, nlines INT NOT NULL, total BIGINT NOT NULL, KEY worker (worker))",
		"CREATE TABLE order_lines (order_id BIGINT NOT NULL, line INT NOT NULL, qty BIGINT NOT NULL, pad TEXT NOT NULL, PRIMARY KEY (order_id, line))",
		"CREATE TABLE counters (worker INT PRIMARY KEY, orders BIGINT NOT NULL, qty BIGINT NOT NULL)",
		"INSERT INTO accounts VALUES " + values(cfg.Accounts, func(i int) string { return fmt.Sprintf("(%d, %d)", i, cfg.InitialBalance) }),
		"INSERT INTO counters VALUES " + values(cfg.Workers, func(i int) string { return fmt.Sprintf("(%d, 0, 0)", i) }),
	}
	// One connection, so that USE applies to the statements after it.
	conn, err := db.Conn(ctx)
	if err != nil {
		return fmt.Errorf("setup: %w", err)
	}
	defer conn.Close()
	for _, q := range stmts {
		if _, err := conn.ExecContext(ctx, q); err != nil {
			return fmt.Errorf("setup: %s: %w", q, err)
		}
	}
	return nil
}

// values joins n rows of a multi-row INSERT.
func values(n int, row func(i int) string) string {
	rows := make([]string, n)
	for i := range rows {
		rows[i] = row(i)
	}
	return strings.Join(rows, ", ")
}

// IDs hands out transaction ids, unique within a run: a process that
// shares a run with others (a client process) starts from its own base.
type IDs struct{ next atomic.Int64 }

// NewIDs returns ids starting at base+1.
func NewIDs(base int64) *IDs {
	ids := &IDs{}
	ids.next.Store(base)
	return ids
}

// Next returns a new id.
func (ids *IDs) Next() int64 { return ids.next.Add(1) }

// Worker runs the workload's transactions one at a time over a database
// handle whose default database is Config.Database (see DSN).
type Worker struct {
	// ID is the worker's id, below Config.Workers, unique among the
	// workers running at the same time: it owns its counters row and its
	// item sequence.
	ID  int
	DB  *sql.DB
	Cfg Config
	IDs *IDs
	// Rand chooses the transactions.
	Rand *rand.Rand
	// Rec receives every transaction.
	Rec Recorder
	// NextSeq is the sequence number of the worker's next item; items are
	// unique on (worker, seq). Run advances it.
	NextSeq int64
}

// Run runs transactions until ctx is done. Errors are outcomes, recorded
// in Rec, not failures of Run.
func (w *Worker) Run(ctx context.Context) {
	w.Cfg = w.Cfg.withDefaults()
	for ctx.Err() == nil {
		w.One(ctx)
	}
}

// One runs one transaction chosen at random: 40% transfers, 30% items,
// 30% orders (a third of them big).
func (w *Worker) One(ctx context.Context) Txn {
	w.Cfg = w.Cfg.withDefaults()
	switch p := w.Rand.IntN(10); {
	case p < 4:
		from := w.Rand.IntN(w.Cfg.Accounts)
		to := (from + 1 + w.Rand.IntN(w.Cfg.Accounts-1)) % w.Cfg.Accounts
		return w.Transfer(ctx, from, to, 1+w.Rand.Int64N(100))
	case p < 7:
		return w.Item(ctx)
	default:
		lines := make([]Line, 1+w.Rand.IntN(5))
		big := w.Rand.IntN(3) == 0
		for i := range lines {
			lines[i] = Line{Qty: 1 + w.Rand.Int64N(9), Pad: 10}
			if big {
				lines[i].Pad = w.Cfg.BigOrderPad
			}
		}
		return w.Order(ctx, lines)
	}
}

// Transfer moves amount from one account to another and records it in
// the ledger, in one explicit transaction.
func (w *Worker) Transfer(ctx context.Context, from, to int, amount int64) Txn {
	t := Txn{Kind: Transfer, ID: w.IDs.Next(), Worker: w.ID, From: from, To: to, Amount: amount}
	return w.explicit(ctx, t,
		stmt{"SELECT bal FROM accounts WHERE id = ?", []any{from}},
		stmt{"UPDATE accounts SET bal = bal - ? WHERE id = ?", []any{amount, from}},
		stmt{"UPDATE accounts SET bal = bal + ? WHERE id = ?", []any{amount, to}},
		stmt{"INSERT INTO transfers VALUES (?, ?, ?, ?)", []any{t.ID, from, to, amount}},
	)
}

// Order inserts an order with lines and adds it to the worker's counters,
// in one explicit transaction over three tables.
func (w *Worker) Order(ctx context.Context, lines []Line) Txn {
	t := Txn{Kind: Order, ID: w.IDs.Next(), Worker: w.ID, Lines: lines}
	rows := make([]string, len(lines))
	args := make([]any, 0, 4*len(lines))
	for i, l := range lines {
		rows[i] = "(?, ?, ?, ?)"
		args = append(args, t.ID, i+1, l.Qty, linePad(t.ID, i+1, l.Pad))
	}
	return w.explicit(ctx, t,
		stmt{"INSERT INTO orders VALUES (?, ?, ?, ?)", []any{t.ID, w.ID, len(lines), t.Total()}},
		stmt{"INSERT INTO order_lines VALUES " + strings.Join(rows, ", "), args},
		stmt{"UPDATE counters SET orders = orders + 1, qty = qty + ? WHERE worker = ?", []any{t.Total(), w.ID}},
	)
}

// Item inserts one item row in autocommit.
func (w *Worker) Item(ctx context.Context) Txn {
	t := Txn{Kind: Item, ID: w.IDs.Next(), Worker: w.ID, Seq: w.NextSeq}
	w.NextSeq++
	w.Rec.Pending(t)
	_, err := w.DB.ExecContext(ctx, "INSERT INTO items VALUES (?, ?, ?, ?)", t.ID, w.ID, t.Seq, itemPad(t.ID, w.Cfg.ItemPad))
	t.Outcome = commitOutcome(err)
	w.Rec.Done(t)
	return t
}

// stmt is a statement with its arguments.
type stmt struct {
	query string
	args  []any
}

// explicit runs stmts in BEGIN ... COMMIT and records t's outcome: Failed
// if a statement fails (COMMIT is then never sent), else what COMMIT
// says.
func (w *Worker) explicit(ctx context.Context, t Txn, stmts ...stmt) Txn {
	tx, err := w.DB.BeginTx(ctx, nil)
	if err != nil {
		t.Outcome = Failed
		w.Rec.Done(t)
		return t
	}
	for _, s := range stmts {
		if _, err := tx.ExecContext(ctx, s.query, s.args...); err != nil {
			_ = tx.Rollback()
			t.Outcome = Failed
			w.Rec.Done(t)
			return t
		}
	}
	w.Rec.Pending(t)
	t.Outcome = commitOutcome(tx.Commit())
	w.Rec.Done(t)
	return t
}

// commitOutcome classifies the result of a commit (COMMIT, or an
// autocommit statement): OK is Committed; an error the server sent is
// Failed, since a server that answers with an error has not committed, and
// so is a failure to connect, since then nothing was sent (database/sql
// retries on a new connection only when the driver says the old one sent
// nothing); anything else (the connection broke, the context ended)
// leaves the outcome Unknown.
func commitOutcome(err error) Outcome {
	var me *mysql.MySQLError
	var op *net.OpError
	switch {
	case err == nil:
		return Committed
	case errors.As(err, &me):
		return Failed
	case errors.As(err, &op) && op.Op == "dial":
		return Failed
	default:
		return Unknown
	}
}

// linePad is the filler of line number line of order id: n bytes that
// depend on both, so that a line mixed up with another is seen.
func linePad(id int64, line, n int) string {
	return fill(strconv.FormatInt(id, 10)+"."+strconv.Itoa(line)+";", n)
}

// itemPad is the filler of item id.
func itemPad(id int64, n int) string { return fill(strconv.FormatInt(id, 10)+";", n) }

// fill repeats unit up to exactly n bytes.
func fill(unit string, n int) string {
	if n <= 0 {
		return ""
	}
	return strings.Repeat(unit, n/len(unit)+1)[:n]
}

// DSN returns a go-sql-driver/mysql DSN for user root at addr with
// database as the default one ("" for none). With interpolate, statement
// arguments are interpolated into the text on the client (one round trip
// a statement); without, they go as server-side prepared statements
// (COM_STMT_PREPARE and COM_STMT_EXECUTE), the driver's default. The two
// reach different paths of the server.
func DSN(addr, database string, interpolate bool) string {
	mc := mysql.NewConfig()
	mc.User = "root"
	mc.Net = "tcp"
	mc.Addr = addr
	mc.DBName = database
	mc.InterpolateParams = interpolate
	if mode := os.Getenv(EnvTxnMode); mode != "" {
		// The driver sets it on every connection it opens.
		mc.Params = map[string]string{"percdb_txn_mode": "'" + mode + "'"}
	}
	return mc.FormatDSN()
}

// EnvTxnMode names the transaction mode the workloads' connections run in
// (percdb_txn_mode: optimistic or pessimistic); empty keeps the server's
// default.
const EnvTxnMode = "PERCDB_TEST_TXN_MODE"
