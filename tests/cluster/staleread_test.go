package cluster

import (
	"context"
	"database/sql"
	"fmt"
	"io"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/percdb/percdb/tests/testproc"
)

// staleReads are node B's reads of one table, by every path B has for
// an autocommit read: a point select by primary key as text and as a
// prepared statement (the fast path, which reads with its cached
// catalog), a point select by IN, and a range select.
type staleReads struct {
	t            *testing.T
	text, binary *sql.DB
	logs         func() string
	// bad counts the reads that found what they must not; first
	// describes the first.
	bad   int
	first string
}

func (s *staleReads) reads(id int) []struct {
	name string
	db   *sql.DB
	q    string
	args []any
} {
	return []struct {
		name string
		db   *sql.DB
		q    string
		args []any
	}{
		{"text point select", s.text, fmt.Sprintf("SELECT v FROM d.t WHERE id = %d", id), nil},
		{"prepared point select", s.binary, "SELECT v FROM d.t WHERE id = ?", []any{id}},
		{"IN select", s.text, fmt.Sprintf("SELECT v FROM d.t WHERE id IN (%d, -1)", id), nil},
		{"range select", s.text, fmt.Sprintf("SELECT v FROM d.t WHERE id BETWEEN %d AND %d", id, id), nil},
	}
}

// expect reads row id by every path and counts a read that finds it when
// want is false, or misses it when want is true.
func (s *staleReads) expect(what string, id int, want bool) {
	s.t.Helper()
	for _, rd := range s.reads(id) {
		var v int
		err := rd.db.QueryRowContext(context.Background(), rd.q, rd.args...).Scan(&v)
		switch {
		case err != nil && err != sql.ErrNoRows:
			s.t.Fatalf("%s: %s of row %d on sql2: %v\n%s", what, rd.name, id, err, s.logs())
		case (err == nil) != want:
			s.bad++
			if s.first == "" {
				s.first = fmt.Sprintf("%s: %s on sql2 found row %d: %v, want %v", what, rd.name, id, err == nil, want)
			}
		}
	}
}

// warm reads row id on B a few times by every path, so that the fast
// path trusts its cached catalog (it verifies it with a read of the
// schema version first).
func (s *staleReads) warm(id int) {
	s.t.Helper()
	for i := 0; i < 3; i++ {
		s.expect("warming", id, true)
	}
}

// TestReadAfterRewriteOnOtherNode: a read on SQL node B never returns a
// table's rows from before node A's rewrite of it (TRUNCATE TABLE, or an
// ALTER TABLE that copies it into a new table ID) once the rewrite
// committed, nor misses a row written into the rewritten table.
//
// First, A's statement returned: B's next statement began after it, as
// a MySQL user may assume. Then a read between the rewrite's commit and
// the statement's return: A holds an open transaction that wrote the
// table, so that the TRUNCATE, committed, waits for it; meanwhile another
// session of A sees the table empty and inserts a row, and B, asked only
// after that insert was acknowledged, must read the table as A does (not
// its old rows through the catalog it cached before the rewrite).
func TestReadAfterRewriteOnOtherNode(t *testing.T) {
	n := startTwoNodes(t)
	dbA, logs := n.dbA, n.logs
	ctx := context.Background()
	n.exec(t, dbA, "CREATE TABLE d.t (id INT PRIMARY KEY, v INT NOT NULL)")
	s := &staleReads{t: t, text: n.dbB, binary: openDB(t, n.b.addr, "", false), logs: logs}

	const rounds = 6
	var took time.Duration
	for r := 0; r < rounds; r++ {
		old, fresh := 1000+r, 5000+r
		n.exec(t, dbA, fmt.Sprintf("INSERT INTO d.t VALUES (%d, 1)", old))
		s.warm(old)
		rewrite := "TRUNCATE TABLE d.t"
		if r%2 == 1 {
			// A rewrite into a new table ID that keeps the rows; the
			// row of the round is deleted in the same statement's
			// place by a DELETE after it.
			rewrite = fmt.Sprintf("ALTER TABLE d.t MODIFY v BIGINT NOT NULL COMMENT 'r%d'", r)
		}
		start := time.Now()
		n.exec(t, dbA, rewrite)
		took += time.Since(start)
		if r%2 == 1 {
			s.expect(fmt.Sprintf("round %d, after %q returned", r, rewrite), old, true)
			n.exec(t, dbA, fmt.Sprintf("DELETE FROM d.t WHERE id = %d", old))
		}
		n.exec(t, dbA, fmt.Sprintf("INSERT INTO d.t VALUES (%d, 2)", fresh))
		s.expect(fmt.Sprintf("round %d, after %q returned", r, rewrite), old, false)
		s.expect(fmt.Sprintf("round %d, after %q returned and an insert", r, rewrite), fresh, true)
	}

	// Between the commit and the statement's return.
	n.exec(t, dbA, "TRUNCATE TABLE d.t")
	n.exec(t, dbA, "INSERT INTO d.t VALUES (1, 1), (2, 2), (3, 3)")
	s.warm(1)
	release := n.heldDDL(t, "TRUNCATE TABLE d.t", func() bool {
		var c int
		if err := dbA.QueryRowContext(ctx, "SELECT COUNT(*) FROM d.t").Scan(&c); err != nil {
			t.Fatalf("count on sql1 during its TRUNCATE: %v\n%s", err, logs())
		}
		return c == 0
	})
	n.exec(t, dbA, "INSERT INTO d.t VALUES (7, 7)")
	s.expect("after sql1's TRUNCATE committed and a row was inserted", 1, false)
	s.expect("after sql1's TRUNCATE committed and a row was inserted", 7, true)
	// The statement may have returned already (its wait for the open
	// transaction ended): the reads above then only began after it.
	if err := release(); err != nil {
		t.Fatalf("TRUNCATE with an open transaction on the table: %v\n%s", err, logs())
	}
	if s.bad > 0 {
		t.Fatalf("%d stale reads on sql2; the first: %s", s.bad, s.first)
	}
	t.Logf("%d rewrites on sql1 took %v on average (loaded machine); no stale read on sql2", rounds, took/rounds)
}

// cutProxy forwards TCP connections to a target until it is cut: then
// it closes every connection it holds and every new one at once, as a
// network partition between its clients and the target would, until it
// is healed.
type cutProxy struct {
	l      net.Listener
	target string

	mu    sync.Mutex
	cut   bool
	conns map[net.Conn]bool
}

// startCutProxy listens on a free 127.0.0.1 port for connections to
// target; it stops when the test ends.
func startCutProxy(t *testing.T, target string) *cutProxy {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &cutProxy{l: l, target: target, conns: map[net.Conn]bool{}}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go p.serve(c)
		}
	}()
	t.Cleanup(func() {
		_ = l.Close()
		<-done
		p.setCut(true)
	})
	return p
}

// addr is where the proxy listens.
func (p *cutProxy) addr() string { return p.l.Addr().String() }

// track records c as held, or closes it and reports false when cut.
func (p *cutProxy) track(c net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cut {
		_ = c.Close()
		return false
	}
	p.conns[c] = true
	return true
}

// serve pipes c to a new connection to the target both ways.
func (p *cutProxy) serve(c net.Conn) {
	if !p.track(c) {
		return
	}
	up, err := net.Dial("tcp", p.target)
	if err != nil {
		_ = c.Close()
		return
	}
	if !p.track(up) {
		_ = c.Close()
		return
	}
	go func() { _, _ = io.Copy(up, c); _ = up.Close() }()
	_, _ = io.Copy(c, up)
	_ = c.Close()
}

// setCut cuts (closing every connection held) or heals the proxy.
func (p *cutProxy) setCut(cut bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.cut = cut
	if cut {
		for c := range p.conns {
			_ = c.Close()
		}
		clear(p.conns)
	}
}

// TestSQLNodeCutOffFromPD: node B reaches pd through a proxy that the
// test cuts, as a network partition would, while node A still reaches
// it. B cannot renew its schema lease, so A's TRUNCATE stops waiting for
// B once the lease ends in pd and returns while B has not loaded it. B
// must not then read the table's old rows, nor miss the row A inserted
// after: a node whose lease is not held reads only what it can prove
// current (the schema version read from the KV nodes with the rows) and
// otherwise fails the statement with a clear error, and refuses commits
// (8027). Once the partition heals, B serves everything again.
func TestSQLNodeCutOffFromPD(t *testing.T) {
	c := startCluster(t, testproc.BuildPercdb(t), 1, leaseArgs...)
	proxy := startCutProxy(t, c.pd.addr)
	// A later --pd wins over the harness's; a short --pd-timeout keeps
	// the statements that need pd short.
	b := c.startSQLWith(t, "sql2", append([]string{"--pd", proxy.addr(), "--pd-timeout", "1s"}, leaseArgs...)...)
	dbA := openDB(t, c.sql.addr, "", true)
	logs := func() string { return c.logs() + "--- sql2 ---\n" + b.log.String() }
	ctx := context.Background()
	mustExec(t, dbA, "CREATE DATABASE d", logs)
	mustExec(t, dbA, "CREATE TABLE d.t (id INT PRIMARY KEY, v INT NOT NULL)", logs)
	mustExec(t, dbA, "INSERT INTO d.t VALUES (1, 1), (2, 2), (3, 3)", logs)
	dbB := openDB(t, b.addr, "", true)
	s := &staleReads{t: t, text: dbB, binary: openDB(t, b.addr, "", false), logs: logs}
	s.warm(1)

	proxy.setCut(true)
	healed := false
	defer func() {
		if !healed {
			proxy.setCut(false)
		}
	}()
	start := time.Now()
	mustExec(t, dbA, "TRUNCATE TABLE d.t", logs)
	took := time.Since(start)
	mustExec(t, dbA, "INSERT INTO d.t VALUES (7, 7)", logs)

	// B's reads: right, or refused with a MySQL error; never stale.
	errs := map[uint16]int{}
	var slowest time.Duration
	for _, c := range []struct {
		id   int
		want bool
	}{{1, false}, {7, true}} {
		for _, rd := range s.reads(c.id) {
			var v int
			began := time.Now()
			err := rd.db.QueryRowContext(ctx, rd.q, rd.args...).Scan(&v)
			slowest = max(slowest, time.Since(began))
			switch {
			case err == nil || err == sql.ErrNoRows:
				if (err == nil) != c.want {
					t.Fatalf("%s on sql2, cut off from pd past its lease, after sql1's TRUNCATE: found row %d %v, want %v\n%s",
						rd.name, c.id, err == nil, c.want, logs())
				}
			case errCode(err) != 0:
				errs[errCode(err)]++
			default:
				t.Fatalf("%s on sql2, cut off from pd: %v, want the rows or a MySQL error\n%s", rd.name, err, logs())
			}
		}
	}
	_, werr := dbB.ExecContext(ctx, "INSERT INTO d.t VALUES (8, 8)")
	if werr == nil {
		t.Fatalf("an insert on sql2, cut off from pd past its lease, committed\n%s", logs())
	}
	if errCode(werr) == 0 {
		t.Fatalf("an insert on sql2, cut off from pd: %v, want a MySQL error\n%s", werr, logs())
	}

	proxy.setCut(false)
	healed = true
	healedAt := time.Now()
	waitFor(t, "sql2 serves again once it reaches pd", func() bool {
		_, err := dbB.ExecContext(ctx, "INSERT INTO d.t VALUES (9, 9)")
		return err == nil || errCode(err) == 1062
	}, logs)
	back := time.Since(healedAt)
	s.expect("after the partition healed", 1, false)
	s.expect("after the partition healed", 7, true)
	s.expect("after the partition healed", 9, true)
	if s.bad > 0 {
		t.Fatalf("%d stale reads on sql2; the first: %s", s.bad, s.first)
	}
	t.Logf("TRUNCATE on sql1 with sql2 cut off took %v; sql2's reads while cut off: errors by code %v (the rest right), the slowest %v; its insert: %v; it committed again %v after the partition healed (loaded machine)",
		took, errs, slowest, werr, back)
}
