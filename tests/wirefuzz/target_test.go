package wirefuzz

import (
	"context"
	"errors"
	"io"
	"net"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sirupsen/logrus"

	"github.com/percdb/percdb/kv"
	percsql "github.com/percdb/percdb/sql"
)

func TestMain(m *testing.M) {
	// go-mysql-server logs every connection and failed query through
	// logrus, and points vitess' logger there too; a fuzz run makes
	// thousands of both. The errors stay enabled for panicLog's hook.
	logrus.SetLevel(logrus.ErrorLevel)
	logrus.SetOutput(io.Discard)
	os.Exit(m.Run())
}

// ioTimeout bounds every exchange with the server: the time a well-behaved
// server needs to answer one input and close the connection is
// milliseconds, so a server still silent after this long has hung. It is a
// generous bound for two loaded cores, not a performance assertion.
const ioTimeout = 60 * time.Second

// fuzzDB is the database the targets create, so that COM_INIT_DB,
// COM_FIELD_LIST and prepared statements find something.
const fuzzDB = "fuzz"

// target is a percdb server running in the test process, and what the
// checks need to know about it.
type target struct {
	addr   string
	panics *panicLog
}

// startTarget opens an in-memory percdb server on a free port of
// 127.0.0.1, creates the database fuzzDB with a table t, and stops the
// server when tb ends. It also hooks logrus' standard logger, where
// vitess' MySQL listener reports the panics it recovers from (GMS sends
// vitess' log there).
func startTarget(tb testing.TB) *target {
	tb.Helper()
	srv, err := percsql.Open(context.Background(), percsql.Config{
		Addr:    "127.0.0.1:0",
		DataDir: tb.TempDir(),
		KV:      kv.Options{InMemory: true, SyncWrites: kv.SyncNone},
	})
	if err != nil {
		tb.Fatalf("start percdb: %v", err)
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve() }()
	tb.Cleanup(func() {
		if err := srv.Close(); err != nil {
			tb.Errorf("close percdb: %v", err)
		}
		if err := <-served; err != nil {
			tb.Errorf("serve: %v", err)
		}
	})

	pl := &panicLog{}
	std := logrus.StandardLogger()
	prev := std.ReplaceHooks(logrus.LevelHooks{})
	std.AddHook(pl)
	tb.Cleanup(func() { std.ReplaceHooks(prev) })

	tg := &target{addr: srv.Addr().String(), panics: pl}
	c := tg.login(tb, "")
	defer c.Close()
	for _, q := range []string{
		"CREATE DATABASE IF NOT EXISTS " + fuzzDB,
		"CREATE TABLE IF NOT EXISTS " + fuzzDB + ".t (id INT PRIMARY KEY, v VARCHAR(20), n BIGINT, KEY v (v))",
		"REPLACE INTO " + fuzzDB + ".t VALUES (1, 'a', 10), (2, 'b', NULL)",
	} {
		if _, err := c.Query(q); err != nil {
			tb.Fatalf("%s: %v", q, err)
		}
	}
	return tg
}

// login opens a connection authenticated as root (no password) with
// database db selected ("" for none).
func (tg *target) login(tb testing.TB, db string) *Conn {
	tb.Helper()
	c, g, err := Dial(tg.addr, time.Now().Add(ioTimeout))
	if err != nil {
		tb.Fatalf("connect: %v", err)
	}
	if err := c.Authenticate(g, "root", "", db); err != nil {
		c.Close()
		tb.Fatalf("log in: %v", err)
	}
	return c
}

// healthy checks the property every input must leave behind: a fresh
// connection logs in and runs SELECT 1.
func (tg *target) healthy(tb testing.TB, after string) {
	tb.Helper()
	c, g, err := Dial(tg.addr, time.Now().Add(ioTimeout))
	if err != nil {
		tb.Fatalf("after %s: a new connection fails: %v", after, err)
	}
	defer c.Close()
	if err := c.Authenticate(g, "root", "", ""); err != nil {
		tb.Fatalf("after %s: a new connection cannot log in: %v", after, err)
	}
	rows, err := c.Query("SELECT 1")
	if err != nil || len(rows) != 1 || len(rows[0]) != 1 || rows[0][0] != "1" {
		tb.Fatalf("after %s: SELECT 1 = %v, %v", after, rows, err)
	}
}

// exchange is what one input got from the server.
type exchange struct {
	// payloads are the whole packets the server sent after the input.
	payloads [][]byte
	// rest is a trailing partial packet (a connection reset can cut the
	// stream).
	rest []byte
	// closedBy is how the stream ended: io.EOF for a clean close, or the
	// read error (a reset).
	closedBy error
}

// finish half-closes c after an input was written and reads the server's
// answer until the server closes the connection. It fails the test if the
// server does not close within ioTimeout: the input hung it.
func finish(tb testing.TB, c *Conn, what string) exchange {
	tb.Helper()
	defer c.Close()
	if err := c.SetDeadline(time.Now().Add(ioTimeout)); err != nil {
		tb.Fatal(err)
	}
	// The server may already have closed on a bad input; writing the FIN
	// can then fail, which is an acceptable outcome.
	_ = c.CloseWrite()
	out, err := c.ReadAll()
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		tb.Fatalf("%s: the server neither answered nor closed the connection within %v after the client half-closed it (got %d bytes: %x): hang", what, ioTimeout, len(out), head(out))
	}
	ex := exchange{closedBy: io.EOF}
	if err != nil {
		ex.closedBy = err
	}
	ex.payloads, ex.rest = SplitFrames(out)
	if ex.closedBy == io.EOF && ex.rest != nil {
		tb.Fatalf("%s: the server's answer ends with a partial packet %x (whole packets: %d)", what, head(ex.rest), len(ex.payloads))
	}
	return ex
}

// check runs the checks common to every target after an input: no ERR
// packet reports a panic, the listener recovered from no panic (a known
// finding's panic is logged instead, unless strict), and the server still
// serves a new connection.
func (tg *target) check(tb testing.TB, ex exchange, panicsBefore int, what string, strict bool) {
	tb.Helper()
	for _, e := range ErrorMessages(ex.payloads) {
		if strings.Contains(strings.ToLower(e.Message), "panic") {
			tb.Fatalf("%s: the server reports a recovered panic in an error packet: %v", what, e)
		}
	}
	if n, last := tg.panics.since(panicsBefore); n > 0 {
		if known := knownFinding(last); known != "" && !strict {
			tb.Logf("%s: known finding %s: the listener recovered from a panic and closed the connection", what, known)
		} else {
			tb.Fatalf("%s: the MySQL listener recovered from %d panic(s); the last:\n%s", what, n, last)
		}
	}
	tg.healthy(tb, what)
}

// panicLog is a logrus hook that counts the panics vitess' listener
// reports ("mysql_server caught panic", with the stack) and keeps the
// last report.
type panicLog struct {
	mu   sync.Mutex
	n    int
	last string
}

// Levels implements logrus.Hook: the listener reports panics as errors.
func (p *panicLog) Levels() []logrus.Level {
	return []logrus.Level{logrus.PanicLevel, logrus.FatalLevel, logrus.ErrorLevel}
}

// Fire implements logrus.Hook.
func (p *panicLog) Fire(e *logrus.Entry) error {
	if !strings.Contains(e.Message, "caught panic") {
		return nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.n++
	p.last = string(head([]byte(e.Message)))
	return nil
}

// since returns how many panics were logged after the count was before,
// and the text of the last one.
func (p *panicLog) since(before int) (int, string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.n - before, p.last
}

// count returns how many panics were logged so far.
func (p *panicLog) count() int {
	n, _ := p.since(0)
	return n
}

// head returns at most the first 4 KiB of b, enough to report an input or
// a stack without flooding the log.
func head(b []byte) []byte {
	const limit = 4 << 10
	if len(b) > limit {
		return b[:limit]
	}
	return b
}
