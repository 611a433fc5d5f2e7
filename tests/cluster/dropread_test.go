package cluster

import (
	"context"
	"database/sql"
	"strings"
	"testing"
)

// expectGone reads row id on B by every path (staleReads) after the
// table was dropped: a read that finds the row, or any row, is stale; a
// read must fail with 1146 (no such table) or 1049 (no such database).
func (s *staleReads) expectGone(what string, id int) {
	s.t.Helper()
	for _, rd := range s.reads(id) {
		var v int
		err := rd.db.QueryRowContext(context.Background(), rd.q, rd.args...).Scan(&v)
		switch code := errCode(err); {
		case code == 1146 || code == 1049:
		case err == nil || err == sql.ErrNoRows:
			s.bad++
			if s.first == "" {
				s.first = what + ": " + rd.name + " on sql2 read the dropped table (" + strings.TrimSpace(errText(err)) + ")"
			}
		default:
			s.t.Fatalf("%s: %s of row %d on sql2: %v, want 1146 or 1049\n%s", what, rd.name, id, err, s.logs())
		}
	}
}

// errText is err's text, "found its row" for none.
func errText(err error) string {
	if err == nil {
		return "found its row"
	}
	return err.Error()
}

// heldDDL starts ddl on A while a transaction of A that wrote d.t is
// open, so that the DDL, once committed, waits for it before it returns
// (the window between a DDL's commit and its return that
// TestReadAfterRewriteOnOtherNode describes), and waits until committed
// says another session of A sees the DDL committed. The caller ends the
// window with release, which rolls the transaction back and returns the
// DDL's error, and logs that the window was not tested if the DDL had
// returned already.
func (n *twoNodes) heldDDL(t *testing.T, ddl string, committed func() bool) (release func() error) {
	t.Helper()
	ctx := context.Background()
	open := openTxn(t, n.dbA, n.logs, "BEGIN", "INSERT INTO d.t VALUES (100, 100)")
	done := make(chan error, 1)
	go func() {
		_, err := n.dbA.ExecContext(ctx, ddl)
		done <- err
	}()
	waitFor(t, "sql1's "+ddl+" committed", committed, n.logs)
	return func() error {
		select {
		case err := <-done:
			done <- err
			t.Logf("%q returned before sql2's reads were done (%v): they did not test the window", ddl, err)
		default:
		}
		_, _ = open.ExecContext(ctx, "ROLLBACK")
		return <-done
	}
}

// TestReadAfterDropOnOtherNode: once SQL node A's DROP TABLE or DROP
// DATABASE committed, a read on node B no longer reads the dropped
// table, by any of B's paths for an autocommit read, the fast path's
// point selects through B's cached catalog included. As in
// TestReadAfterRewriteOnOtherNode, the window between the commit and the
// statement's return is held open by a transaction of A that wrote the
// table: the DROP, committed, waits for it; meanwhile another session of
// A finds the table gone, and B, asked only after that, must too, and
// must not acknowledge an insert into it (8028 or 1146). Then a
// table of the same name made again on A is read on B with its own rows
// only. RENAME TABLE and ALTER TABLE ... RENAME are held to the same:
// the table's rows stay, under its new name (read on B), but the old
// name is gone on B as on A. Last, the same window for an ALTER TABLE
// that rewrites the
// table into a new table ID: a row inserted into the rewritten table once
// A shows the new definition is read on B.
func TestReadAfterDropOnOtherNode(t *testing.T) {
	n := startTwoNodes(t)
	dbA, logs := n.dbA, n.logs
	ctx := context.Background()
	s := &staleReads{t: t, text: n.dbB, binary: openDB(t, n.b.addr, "", false), logs: logs}
	for _, drop := range []string{"DROP TABLE d.t", "DROP DATABASE d", "DROP TABLE d.t, d.u", "RENAME TABLE d.t TO d.t9", "ALTER TABLE d.t RENAME TO d.t9"} {
		n.exec(t, dbA, "CREATE DATABASE IF NOT EXISTS d")
		n.exec(t, dbA, "CREATE TABLE d.t (id INT PRIMARY KEY, v INT NOT NULL)")
		n.exec(t, dbA, "CREATE TABLE d.u (id INT PRIMARY KEY)")
		n.exec(t, dbA, "INSERT INTO d.t VALUES (1, 1), (2, 2)")
		s.warm(1)
		release := n.heldDDL(t, drop, func() bool {
			var v int
			err := dbA.QueryRowContext(ctx, "SELECT v FROM d.t WHERE id = 1").Scan(&v)
			if code := errCode(err); code == 1146 || code == 1049 {
				return true
			}
			if err != nil {
				t.Fatalf("read on sql1 during its %s: %v\n%s", drop, err, logs())
			}
			return false
		})
		s.expectGone("after sql1's "+drop+" committed", 1)
		// Nor does B acknowledge a write into the dropped table.
		if _, err := n.dbB.ExecContext(ctx, "INSERT INTO d.t VALUES (50, 50)"); err == nil {
			s.bad++
			if s.first == "" {
				s.first = "after sql1's " + drop + " committed: an insert into the dropped table on sql2 was acknowledged"
			}
		} else if code := errCode(err); code != 1146 && code != 1049 && code != 8028 {
			t.Fatalf("insert on sql2 after sql1's %s committed: %v, want 1146, 1049 or 8028\n%s", drop, err, logs())
		}
		if err := release(); err != nil {
			t.Fatalf("%s with an open transaction on the table: %v\n%s", drop, err, logs())
		}
		s.expectGone("after "+drop+" returned", 1)
		if strings.Contains(drop, "RENAME") {
			var v int
			if err := n.dbB.QueryRowContext(ctx, "SELECT v FROM d.t9 WHERE id = 1").Scan(&v); err != nil || v != 1 {
				t.Fatalf("row 1 under the new name on sql2 after %s: %d, %v, want 1\n%s", drop, v, err, logs())
			}
		}

		// Made again, the table is read on B with its own rows.
		n.exec(t, dbA, "CREATE DATABASE IF NOT EXISTS d")
		n.exec(t, dbA, "CREATE TABLE IF NOT EXISTS d.t (id INT PRIMARY KEY, v INT NOT NULL)")
		n.exec(t, dbA, "INSERT INTO d.t VALUES (2, 20)")
		s.expect("the table made again", 1, false)
		s.expect("the table made again", 2, true)
		n.exec(t, dbA, "DROP DATABASE d")
	}

	// An ALTER TABLE that rewrites the table into a new table ID, in the
	// same window: once another session of A sees the new column type,
	// a row it inserts into the rewritten table is read on B.
	n.exec(t, dbA, "CREATE DATABASE d")
	n.exec(t, dbA, "CREATE TABLE d.t (id INT PRIMARY KEY, v INT NOT NULL)")
	n.exec(t, dbA, "INSERT INTO d.t VALUES (1, 1)")
	s.warm(1)
	release := n.heldDDL(t, "ALTER TABLE d.t MODIFY v BIGINT NOT NULL", func() bool {
		var typ string
		err := dbA.QueryRowContext(ctx, "SELECT DATA_TYPE FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = 'd' AND TABLE_NAME = 't' AND COLUMN_NAME = 'v'").Scan(&typ)
		if err != nil {
			t.Fatalf("column type on sql1 during its ALTER TABLE: %v\n%s", err, logs())
		}
		return strings.EqualFold(typ, "bigint")
	})
	n.exec(t, dbA, "INSERT INTO d.t VALUES (7, 7)")
	s.expect("after sql1's ALTER TABLE committed and a row was inserted", 7, true)
	s.expect("after sql1's ALTER TABLE committed and a row was inserted", 1, true)
	if err := release(); err != nil {
		t.Fatalf("ALTER TABLE with an open transaction on the table: %v\n%s", err, logs())
	}
	if s.bad > 0 {
		t.Fatalf("%d stale reads on sql2; the first: %s", s.bad, s.first)
	}
}
