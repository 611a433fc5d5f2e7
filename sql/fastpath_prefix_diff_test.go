package sql_test

import (
	"database/sql"
	"fmt"
	"math/rand"
	"os"
	"strconv"
	"strings"
	"testing"
)

// The differential tests of UPDATE and DELETE by a key prefix
// (fastpath_prefix.go): a WHERE over the leading columns of a composite
// primary key, writing several rows.

// prefixSchema has a composite key of three integer widths, a unique
// secondary key (a write may collide on it part way), a DECIMAL and a
// string.
const prefixSchema = `CREATE TABLE pk3 (
	a SMALLINT NOT NULL,
	b TINYINT NOT NULL,
	c INT NOT NULL,
	i INT,
	m DECIMAL(8,2),
	s VARCHAR(10),
	u INT,
	PRIMARY KEY (a, b, c),
	UNIQUE KEY u_idx (u)
)`

// prefixRows fills pk3: prefixes of several rows, of one, the key
// types' edges, NULLs.
const prefixRows = `INSERT INTO d.pk3 VALUES
	(1, 1, 1, 10, 1.50, 'x', 100), (1, 1, 2, NULL, NULL, NULL, NULL), (1, 1, 3, -7, -0.01, '', 101),
	(1, 2, 1, 2147483647, 999999.99, 'max', NULL), (1, 2, 2, -2147483648, -999999.99, 'min', 102),
	(2, 1, 1, 0, 0, 'z', 103), (-1, -128, -2147483648, 5, 5, 'edge', NULL),
	(32767, 127, 2147483647, 1, 1, 'top', 104)`

// TestFastPathKeyPrefixWrites runs chosen UPDATEs and DELETEs by a key
// prefix, as text and prepared, and checks that the fast path ran those
// it should: several rows, none, rows that do not change, DECIMAL
// arithmetic, a unique-key collision on the second row, inside a
// transaction; NULL, out-of-range and non-integer prefix values, and
// arithmetic that overflows, go to GMS.
func TestFastPathKeyPrefixWrites(t *testing.T) {
	for _, prepared := range []bool{false, true} {
		t.Run(map[bool]string{false: "text", true: "prepared"}[prepared], func(t *testing.T) {
			d := newDiff(t, "USE d", prefixSchema, prefixRows)
			d.checkTables = []string{"pk3"}
			run := d.runner(prepared)
			run(true, "UPDATE pk3 SET i = i + ?, m = m - ? WHERE a = ? AND b = ?", 1, "0.25", 1, 1)
			run(true, "UPDATE pk3 SET s = ? WHERE b = ? AND a = ?", "same", 1, 1)
			run(true, "UPDATE pk3 SET s = ? WHERE b = ? AND a = ?", "same", 1, 1) // matched 3, changed 0
			run(true, "UPDATE pk3 SET i = ? WHERE a = ?", 3, 1)
			run(true, "UPDATE pk3 SET i = ? WHERE a = ? AND b = ?", 3, 9, 9) // no row
			run(true, "UPDATE pk3 SET i = ? WHERE a = ?", 3, 32767)
			run(true, "UPDATE pk3 SET u = ? WHERE a = ? AND b = ?", 100, 1, 1) // 1062 at the second row
			run(false, "UPDATE pk3 SET i = i + ? WHERE a = ?", 1, nil)
			run(false, "UPDATE pk3 SET i = ? WHERE a = ? AND b = ?", 1, 1, 128)
			run(false, "UPDATE pk3 SET i = ? WHERE a = ?", 1, "1")
			run(false, "UPDATE pk3 SET i = i + ? WHERE a = ?", 2147483647, 1) // out of range
			run(false, "UPDATE pk3 SET m = m + ? WHERE a = ? AND b = ?", "0.001", 1, 2)
			run(false, "UPDATE pk3 SET i = ? WHERE a = ? AND c = ?", 1, 1, 1) // not a prefix
			run(false, "BEGIN")
			run(true, "UPDATE pk3 SET m = m + ? WHERE a = ? AND b = ?", 1, 1, 1)
			run(true, "DELETE FROM pk3 WHERE a = ? AND b = ?", 1, 2)
			run(false, "SELECT i, m FROM pk3 WHERE a = ? AND b = ? AND c = ?", 1, 1, 1) // learns the columns
			run(true, "ROLLBACK")
			run(true, "DELETE FROM pk3 WHERE a = ? AND b = ?", 1, 1)
			run(true, "DELETE FROM pk3 WHERE a = ? AND b = ?", 1, 1)
			run(true, "DELETE FROM pk3 WHERE a = ?", 32767)
			run(false, "DELETE FROM pk3 WHERE a = ?", nil)
			d.finish("pk3")
		})
	}
}

// TestFastPathUnsignedKeyOverflow runs statements by key and by key
// prefix of a narrow unsigned key with values that do not fit it (2^63,
// 256): GMS's Convert truncates such an unsigned value (2^63 to 0) and
// calls it in range, so the fast path, trusting it, deleted the rows of
// key 0; they go to GMS, which matches no row. Such a value written to a
// narrow unsigned column went in as 0; GMS fails with 1264.
func TestFastPathUnsignedKeyOverflow(t *testing.T) {
	for _, prepared := range []bool{false, true} {
		t.Run(map[bool]string{false: "text", true: "prepared"}[prepared], func(t *testing.T) {
			d := newDiff(t, "USE d",
				"CREATE TABLE ku (k0 TINYINT UNSIGNED NOT NULL, k1 SMALLINT NOT NULL, v INT, t TINYINT UNSIGNED, PRIMARY KEY (k0, k1))",
				"INSERT INTO ku VALUES (0, 0, 1, 0), (0, 1, 2, 0), (1, 0, 3, 0), (255, 0, 4, 0)")
			d.checkTables = []string{"ku"}
			run := d.runner(prepared)
			huge := uint64(1) << 63
			run(false, "SELECT v FROM ku WHERE k0 = ? AND k1 = ?", 0, 0) // learns the columns
			run(true, "SELECT v FROM ku WHERE k0 = ? AND k1 = ?", 0, 0)
			run(false, "SELECT v FROM ku WHERE k0 = ? AND k1 = ?", huge, 0)
			run(false, "SELECT v FROM ku WHERE k0 = ? AND k1 = ?", huge+255, 0)
			run(false, "UPDATE ku SET v = ? WHERE k0 = ? AND k1 = ?", 9, huge, 1)
			run(false, "UPDATE ku SET v = ? WHERE k0 = ?", 9, huge)
			run(false, "DELETE FROM ku WHERE k0 = ? AND k1 = ?", huge, 0)
			run(false, "DELETE FROM ku WHERE k0 = ?", huge)
			run(false, "DELETE FROM ku WHERE k0 = ?", huge+1)
			run(false, "DELETE FROM ku WHERE k0 = ?", 256)
			run(true, "DELETE FROM ku WHERE k0 = ?", 255)
			// A value too wide for a column written: 1264 from GMS,
			// not a truncated value from the fast path.
			run(true, "UPDATE ku SET t = ? WHERE k0 = ? AND k1 = ?", 7, 1, 0)
			run(false, "UPDATE ku SET t = ? WHERE k0 = ? AND k1 = ?", huge, 1, 0)
			run(false, "UPDATE ku SET t = ? WHERE k0 = ?", huge+3, 0)
			run(true, "INSERT INTO ku (k0, k1, v, t) VALUES (?, ?, ?, ?)", 2, 0, 1, 200)
			run(false, "INSERT INTO ku (k0, k1, v, t) VALUES (?, ?, ?, ?)", 3, 0, 1, huge)
			d.finish("ku")
		})
	}
}

// prefixGen generates rows and writes by key prefix over pk3.
type prefixGen struct{ r *rand.Rand }

func (g *prefixGen) pick(vals ...any) any { return vals[g.r.Intn(len(vals))] }

// keyPart returns a value for key column n (0: a, 1: b), mostly one that
// rows hold.
func (g *prefixGen) keyPart(n int) any {
	if g.r.Intn(12) == 0 {
		return g.pick(nil, "1", 1.5, -32769, 32768, 128, -129, 0)
	}
	if n == 0 {
		return g.r.Intn(3) + 1
	}
	return g.r.Intn(3) - 1
}

// value returns a value for column col: edges, NULLs, wrong types.
func (g *prefixGen) value(col string) any {
	switch col {
	case "i", "u":
		return g.pick(nil, 0, 1, -1, 7, 2147483647, -2147483648, 2147483648, g.r.Intn(50), g.r.Intn(50), "3", 2.5)
	case "m":
		return g.pick(nil, 0, 1, -1, "0.5", "12.34", "-0.01", "999999.99", "1000000", "0.001", "1e2", g.r.Intn(100))
	}
	return g.pick(nil, "", "a", "ab", "ñ", "a ", "0123456789", "01234567890", 5)
}

// row returns an INSERT of a random row, ignoring duplicates.
func (g *prefixGen) row() string {
	vals := []any{g.keyPart(0), g.keyPart(1), g.r.Intn(6), g.value("i"), g.value("m"), g.value("s"), g.r.Intn(60)}
	for i := range vals[:3] {
		if _, ok := vals[i].(int); !ok {
			vals[i] = g.r.Intn(3)
		}
	}
	if g.r.Intn(3) == 0 {
		vals[6] = nil
	}
	var lits []string
	for _, v := range vals {
		lits = append(lits, literal(v))
	}
	return "INSERT IGNORE INTO pk3 VALUES (" + strings.Join(lits, ", ") + ")"
}

// write returns an UPDATE or DELETE by a prefix of one or two key
// columns, in either order, and its arguments.
func (g *prefixGen) write() (string, []any) {
	var conds []string
	var args []any
	if g.r.Intn(2) == 0 {
		conds, args = []string{"a = ?"}, []any{g.keyPart(0)}
	} else {
		conds, args = []string{"a = ?", "b = ?"}, []any{g.keyPart(0), g.keyPart(1)}
		if g.r.Intn(2) == 0 {
			conds[0], conds[1] = conds[1], conds[0]
			args[0], args[1] = args[1], args[0]
		}
	}
	where := " WHERE " + strings.Join(conds, " AND ")
	if g.r.Intn(4) == 0 {
		return "DELETE FROM pk3" + where, args
	}
	var sets []string
	var setArgs []any
	for _, col := range []string{"i", "m", "s", "u"} {
		if g.r.Intn(2) == 0 {
			continue
		}
		switch {
		case col == "s" || col == "u" || g.r.Intn(2) == 0:
			sets = append(sets, col+" = ?")
		case g.r.Intn(2) == 0:
			sets = append(sets, col+" = "+col+" - ?")
		default:
			sets = append(sets, col+" = "+col+" + ?")
		}
		setArgs = append(setArgs, g.value(col))
	}
	if len(sets) == 0 {
		sets, setArgs = []string{"i = i + ?"}, []any{1}
	}
	return "UPDATE pk3 SET " + strings.Join(sets, ", ") + where, append(setArgs, args...)
}

// TestFastPathKeyPrefixDifferential runs random UPDATEs and DELETEs by a
// key prefix over random rows (NULLs, the types' edges, values the fast
// path leaves to GMS), as text, text with arguments and prepared, inside
// and outside transactions, on a fast and a GMS server, and compares the
// answers and the table after every step. PERCDB_PREFIX_DIFF_N sets the
// number of steps.
func TestFastPathKeyPrefixDifferential(t *testing.T) {
	n := 600
	if testing.Short() {
		n = 150
	}
	if v, err := strconv.Atoi(os.Getenv("PERCDB_PREFIX_DIFF_N")); err == nil {
		n = v
	}
	d := newDiff(t, "USE d", prefixSchema)
	d.checkTables = []string{"pk3"}
	g := &prefixGen{r: rand.New(rand.NewSource(13))}
	for range 40 {
		d.step(g.row())
	}
	before := d.status("Percdb_fastpath_hits")
	for i := 0; i < n; i++ {
		switch x := g.r.Intn(20); {
		case x == 0:
			d.step(txnStatements[g.r.Intn(len(txnStatements))])
			continue
		case x < 4:
			d.step(g.row())
			continue
		}
		q, args := g.write()
		switch g.r.Intn(3) {
		case 0:
			d.step(fill(q, args))
		case 1:
			d.step(q, args...)
		default:
			d.stepPrepared(q, args...)
		}
	}
	d.step("COMMIT")
	d.step("SET autocommit = 1")
	hits := d.status("Percdb_fastpath_hits") - before
	var falls []string
	for _, r := range []string{"shape", "table", "value", "session", "learning", "error", "size"} {
		falls = append(falls, fmt.Sprintf("%s %d", r, d.status("Percdb_fastpath_fallthrough_"+r)))
	}
	t.Logf("%d steps, %d fast-path hits; fell through: %s", d.steps, hits, strings.Join(falls, ", "))
	if hits < uint64(n)/4 {
		t.Errorf("only %d of %d statements ran on the fast path", hits, n)
	}
	d.finish("pk3")
}

// TestFastPathKeyPrefixLocks checks that an UPDATE by a key prefix in a
// pessimistic transaction locks every row it writes (taken in one request
// at the statement's end, editor_batch.go): another transaction's write
// to its last row waits for the commit; and that a commit newer than the
// snapshot on one of its rows runs the statement again at a fresh
// snapshot, over the committed value, as a one-row UPDATE does.
func TestFastPathKeyPrefixLocks(t *testing.T) {
	srv := startServer(t, true)
	setup := openSide(t, "setup", srv, "")
	for _, q := range []string{"CREATE DATABASE d", "USE d", prefixSchema, prefixRows} {
		if out := setup.run(q); out.err != nil {
			t.Fatalf("%s: %v", q, out.err)
		}
	}
	a, b, status := openDB(t, srv, "d"), openDB(t, srv, "d"), openDB(t, srv, "")
	a.SetMaxOpenConns(1)
	b.SetMaxOpenConns(1)
	const upd = "UPDATE pk3 SET i = i + ? WHERE a = 1 AND b = 1"
	exec := func(db *sql.DB, q string, args ...any) {
		t.Helper()
		if _, err := db.Exec(q, args...); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	value := func(c int) int64 {
		t.Helper()
		var v sql.NullInt64
		if err := status.QueryRow("SELECT i FROM d.pk3 WHERE a = 1 AND b = 1 AND c = ?", c).Scan(&v); err != nil {
			t.Fatal(err)
		}
		return v.Int64
	}

	exec(a, "BEGIN PESSIMISTIC")
	hits := serverStatus(t, status, "Percdb_fastpath_hits")
	exec(a, upd, 1)
	if got := serverStatus(t, status, "Percdb_fastpath_hits"); got != hits+1 {
		t.Fatalf("the UPDATE by a key prefix was not run by the fast path (hits %d -> %d)", hits, got)
	}
	done := make(chan error, 1)
	go func() {
		_, err := b.Exec("UPDATE pk3 SET i = i + 100 WHERE a = 1 AND b = 1 AND c = 3")
		done <- err
	}()
	for waits := 0; waits == 0; {
		select {
		case err := <-done:
			t.Fatalf("the write of a row the UPDATE locked did not wait: %v", err)
		default:
		}
		if err := status.QueryRow("SELECT count(*) FROM information_schema.DATA_LOCK_WAITS").Scan(&waits); err != nil {
			t.Fatal(err)
		}
	}
	exec(a, "COMMIT")
	if err := <-done; err != nil {
		t.Fatalf("the waiting write: %v", err)
	}
	if got := value(3); got != -7+1+100 {
		t.Errorf("i = %d after +1 under the lock and +100 waiting for it, want %d", got, -7+1+100)
	}

	exec(a, "BEGIN PESSIMISTIC")
	var v sql.NullInt64
	if err := a.QueryRow("SELECT i FROM pk3 WHERE a = 2 AND b = 1 AND c = 1").Scan(&v); err != nil {
		t.Fatal(err)
	}
	exec(b, "UPDATE pk3 SET i = 1000 WHERE a = 1 AND b = 1 AND c = 1")
	exec(a, upd, 1)
	exec(a, "COMMIT")
	if got := value(1); got != 1001 {
		t.Errorf("i = %d after a commit of 1000 and +1 by a later statement, want 1001", got)
	}
}
