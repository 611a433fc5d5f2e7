package sql_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	percsql "github.com/percdb/percdb/sql"
)

// processRow is a row of SHOW FULL PROCESSLIST.
type processRow struct {
	id         uint64
	user, host string
	db         sql.NullString
	command    string
	time       int64
	state      string
	info       sql.NullString
}

// showProcessList reads SHOW [FULL] PROCESSLIST through q.
func showProcessList(t *testing.T, q interface {
	QueryContext(context.Context, string, ...any) (*sql.Rows, error)
}, stmt string) map[uint64]processRow {
	t.Helper()
	rows, err := q.QueryContext(context.Background(), stmt)
	if err != nil {
		t.Fatalf("%s: %v", stmt, err)
	}
	defer rows.Close()
	out := map[uint64]processRow{}
	for rows.Next() {
		var r processRow
		if err := rows.Scan(&r.id, &r.user, &r.host, &r.db, &r.command, &r.time, &r.state, &r.info); err != nil {
			t.Fatal(err)
		}
		out[r.id] = r
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// dedicatedConn returns a connection of pool db of its own, closed when
// the test ends.
func dedicatedConn(t *testing.T, db *sql.DB) *sql.Conn {
	t.Helper()
	c, err := db.Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// connID returns the connection ID of c.
func connID(t *testing.T, c *sql.Conn) uint64 {
	t.Helper()
	var id uint64
	if err := c.QueryRowContext(context.Background(), "SELECT CONNECTION_ID()").Scan(&id); err != nil {
		t.Fatal(err)
	}
	return id
}

// TestProcessList checks SHOW [FULL] PROCESSLIST, information_schema.
// PROCESSLIST and information_schema.TIDB_TRX against known connections:
// an idle one in an open pessimistic transaction that holds a row lock
// (Sleep, Info NULL, its transaction Idle with its keys), one whose
// UPDATE waits for that lock (Query, "waiting for row lock", the
// statement; its transaction LockWaiting), one that ran a fast-path
// point select and is idle (Sleep: GMS's list showed such statements
// never), and the reader itself (Query, its own statement). KILL QUERY
// then stops the waiting UPDATE with 1317 and its connection goes on.
func TestProcessList(t *testing.T) {
	srv := startServerConfig(t, percsql.Config{})
	db := openDB(t, srv, "")
	mustExec(t, db, "CREATE DATABASE pl", "CREATE TABLE pl.t (id INT PRIMARY KEY, v INT)", "INSERT INTO pl.t VALUES (1, 0), (2, 0)")
	ctx := context.Background()
	conn := func() *sql.Conn { return dedicatedConn(t, db) }
	holder, waiter, reader, idle := conn(), conn(), conn(), conn()
	holderID, waiterID, readerID, idleID := connID(t, holder), connID(t, waiter), connID(t, reader), connID(t, idle)

	for _, c := range []*sql.Conn{holder, waiter} {
		if _, err := c.ExecContext(ctx, "BEGIN PESSIMISTIC"); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := holder.ExecContext(ctx, "UPDATE pl.t SET v = 1 WHERE id = 1"); err != nil {
		t.Fatal(err)
	}
	if _, err := idle.ExecContext(ctx, "USE pl"); err != nil {
		t.Fatal(err)
	}
	var v int
	if err := idle.QueryRowContext(ctx, "SELECT v FROM t WHERE id = 2").Scan(&v); err != nil {
		t.Fatal(err)
	}
	const update = "UPDATE pl.t SET v = 2 WHERE id = 1"
	waited := make(chan error, 1)
	go func() {
		_, err := waiter.ExecContext(ctx, update)
		waited <- err
	}()

	// Until the waiter is seen waiting (it has to reach the lock first).
	var ps map[uint64]processRow
	for {
		ps = showProcessList(t, reader, "SHOW FULL PROCESSLIST")
		if ps[waiterID].state == "waiting for row lock" {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	w := ps[waiterID]
	if w.command != "Query" || w.info.String != update || w.user != "root" {
		t.Errorf("waiting connection: %+v", w)
	}
	if h := ps[holderID]; h.command != "Sleep" || h.info.Valid || h.state != "" {
		t.Errorf("idle connection in a transaction: %+v, want Sleep, no state, Info NULL", h)
	}
	if i := ps[idleID]; i.command != "Sleep" || i.info.Valid || i.db.String != "pl" {
		t.Errorf("idle connection after a fast-path select: %+v", i)
	}
	if r := ps[readerID]; r.command != "Query" || r.info.String != "SHOW FULL PROCESSLIST" || r.state != "executing" {
		t.Errorf("the reader itself: %+v", r)
	}

	// information_schema.PROCESSLIST agrees.
	var cmd, state string
	var info sql.NullString
	if err := reader.QueryRowContext(ctx, fmt.Sprintf("SELECT COMMAND, STATE, INFO FROM information_schema.PROCESSLIST WHERE ID = %d", waiterID)).Scan(&cmd, &state, &info); err != nil {
		t.Fatal(err)
	}
	if cmd != "Query" || state != "waiting for row lock" || info.String != update {
		t.Errorf("information_schema.PROCESSLIST of the waiter: %s, %s, %v", cmd, state, info)
	}
	if err := reader.QueryRowContext(ctx, fmt.Sprintf("SELECT COMMAND, INFO FROM information_schema.PROCESSLIST WHERE ID = %d", holderID)).Scan(&cmd, &info); err != nil {
		t.Fatal(err)
	}
	if cmd != "Sleep" || info.Valid {
		t.Errorf("information_schema.PROCESSLIST of the holder: %s, %v", cmd, info)
	}

	// TIDB_TRX: both transactions, the holder idle with its locked key,
	// the waiter waiting on its statement.
	trx := map[uint64][]string{}
	rows, err := reader.QueryContext(ctx, "SELECT SESSION_ID, ID, STATE, MEM_BUFFER_KEYS, COALESCE(CURRENT_SQL_DIGEST_TEXT, 'NULL'), START_TIME <= NOW(6) FROM information_schema.TIDB_TRX")
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var sid uint64
		var id, st, keys, text, past string
		if err := rows.Scan(&sid, &id, &st, &keys, &text, &past); err != nil {
			t.Fatal(err)
		}
		trx[sid] = []string{id, st, keys, text, past}
	}
	rows.Close()
	if h := trx[holderID]; len(h) == 0 || h[1] != "Idle" || h[2] == "0" || h[3] != "NULL" || h[0] == "0" {
		t.Errorf("TIDB_TRX of the holder: %v (all: %v)", h, trx)
	}
	if w := trx[waiterID]; len(w) == 0 || w[1] != "LockWaiting" || w[3] != "update `pl` . `t` set `v` = ? where `id` = ?" {
		t.Errorf("TIDB_TRX of the waiter: %v (all: %v)", w, trx)
	}
	if _, ok := trx[idleID]; ok {
		t.Errorf("TIDB_TRX lists the connection without a transaction: %v", trx)
	}

	// KILL QUERY stops the wait; the connection stays usable.
	if _, err := reader.ExecContext(ctx, fmt.Sprintf("KILL QUERY %d", waiterID)); err != nil {
		t.Fatal(err)
	}
	err = <-waited
	var me *mysql.MySQLError
	if !errors.As(err, &me) || me.Number != 1317 {
		t.Fatalf("killed UPDATE: %v, want error 1317", err)
	}
	if err := waiter.QueryRowContext(ctx, "SELECT 1").Scan(&v); err != nil || v != 1 {
		t.Fatalf("the killed statement's connection: %v", err)
	}
	if _, err := holder.ExecContext(ctx, "COMMIT"); err != nil {
		t.Fatal(err)
	}
	ps = showProcessList(t, reader, "SHOW PROCESSLIST")
	if h := ps[holderID]; h.command != "Sleep" {
		t.Errorf("holder after COMMIT: %+v", h)
	}
}

// TestProcessListShowsBackfillProgress: while CREATE INDEX backfills,
// its connection's State in SHOW FULL PROCESSLIST and information_schema.
// PROCESSLIST says how many rows are done (the test holds the backfill
// after its first batch); once the statement ends, the state is gone.
func TestProcessListShowsBackfillProgress(t *testing.T) {
	srv := startServer(t, true)
	reached, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	srv.SetBackfillBatchHook(func() {
		once.Do(func() {
			close(reached)
			<-release
		})
	})
	db := openDB(t, srv, "")
	mustExec(t, db, "CREATE DATABASE bp", "CREATE TABLE bp.t (id INT PRIMARY KEY, k INT)")
	vals := make([]string, 1000)
	for i := range vals {
		vals[i] = fmt.Sprintf("(%d, %d)", i, i%7)
	}
	mustExec(t, db, "INSERT INTO bp.t VALUES "+strings.Join(vals, ","))
	ddl := dedicatedConn(t, db)
	id := connID(t, ddl)
	done := make(chan error, 1)
	go func() {
		_, err := ddl.ExecContext(context.Background(), "CREATE INDEX kx ON bp.t (k)")
		done <- err
	}()
	select {
	case <-reached:
	case err := <-done:
		t.Fatalf("CREATE INDEX ended before its first batch was held: %v", err)
	}
	want := "add index kx: write reorganization: 256 rows backfilled"
	if r := showProcessList(t, db, "SHOW FULL PROCESSLIST")[id]; r.state != want || r.info.String != "CREATE INDEX kx ON bp.t (k)" {
		t.Errorf("the backfilling connection in SHOW FULL PROCESSLIST: %+v, want State %q", r, want)
	}
	var state string
	if err := db.QueryRow("SELECT STATE FROM information_schema.PROCESSLIST WHERE ID = ?", id).Scan(&state); err != nil || state != want {
		t.Errorf("information_schema.PROCESSLIST STATE: %q %v, want %q", state, err, want)
	}
	close(release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if r := idleProcess(t, db, id); r.state != "" {
		t.Errorf("after CREATE INDEX: %+v", r)
	}
}

// TestProcessListShowsLoadProgress: while LOAD DATA LOCAL reads a file
// the client sends slowly (a pipe the test writes to), its connection's
// State counts the rows read; it reaches exactly the rows written so far.
func TestProcessListShowsLoadProgress(t *testing.T) {
	srv := startServer(t, true)
	db := openDB(t, srv, "")
	mustExec(t, db, "CREATE DATABASE lp", "CREATE TABLE lp.t (id INT PRIMARY KEY, v VARCHAR(10))")
	pr, pw := io.Pipe()
	name := "progress-" + t.Name()
	mysql.RegisterReaderHandler(name, func() io.Reader { return pr })
	t.Cleanup(func() { mysql.DeregisterReaderHandler(name) })
	load := dedicatedConn(t, db)
	id := connID(t, load)
	done := make(chan error, 1)
	go func() {
		_, err := load.ExecContext(context.Background(), "LOAD DATA LOCAL INFILE 'Reader::"+name+"' INTO TABLE lp.t FIELDS TERMINATED BY ','")
		done <- err
	}()
	for i := 0; i < 300; i++ {
		if _, err := fmt.Fprintf(pw, "%d,v%d\n", i, i); err != nil {
			t.Fatal(err)
		}
	}
	// The server reads what was sent and then waits for more.
	want := "loading data: 300 rows read"
	for deadline := time.Now().Add(time.Minute); ; {
		r := showProcessList(t, db, "SHOW FULL PROCESSLIST")[id]
		if r.state == want {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the loading connection: %+v, want State %q", r, want)
		}
		time.Sleep(10 * time.Millisecond)
	}
	pw.Close()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	var n int
	if err := db.QueryRow("SELECT count(*) FROM lp.t").Scan(&n); err != nil || n != 300 {
		t.Fatalf("rows loaded: %d %v", n, err)
	}
	if r := idleProcess(t, db, id); r.state != "" {
		t.Errorf("after LOAD DATA: %+v", r)
	}
}

// idleProcess returns connection id's row of SHOW FULL PROCESSLIST once
// it is in Sleep: the server records a statement's end just after it
// sends the result, so a client may see the result first.
func idleProcess(t *testing.T, db *sql.DB, id uint64) processRow {
	t.Helper()
	for deadline := time.Now().Add(time.Minute); ; {
		r := showProcessList(t, db, "SHOW FULL PROCESSLIST")[id]
		if r.command == "Sleep" {
			return r
		}
		if time.Now().After(deadline) {
			t.Fatalf("connection %d never went idle: %+v", id, r)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
