package isolation

import "fmt"

// Hermitage's scripts, statement for statement, shared by the cases at
// REPEATABLE READ (hermitage_test.go) and at READ COMMITTED
// (readcommitted_test.go), which run the same statements and expect
// different outcomes. A statement Hermitage marks "BLOCKS" is started
// (session.start) and collected by the session's next statement.

// outcome is what a script observed.
type outcome struct {
	// reads are the results of the script's SELECTs, in script order.
	reads []rows
	// commits are the COMMITs' errors, T1's first.
	commits []error
	// del is the result of the script's DELETE, if it has one.
	del result
	// final is table test after the script, read outside any
	// transaction (only by the scripts whose cases check it).
	final rows
}

// committed reports whether every COMMIT of the script succeeded.
func (o outcome) committed() bool {
	for _, err := range o.commits {
		if err != nil {
			return false
		}
	}
	return true
}

// scriptG0: two transactions write the same two rows.
func scriptG0(h *harness, t1, t2 *session) outcome {
	t1.exec("update test set value = 11 where id = 1")
	t2.start("update test set value = 12 where id = 1") // BLOCKS
	t1.exec("update test set value = 21 where id = 2")
	err1 := t1.commit()
	t2.exec("update test set value = 22 where id = 2")
	err2 := t2.commit()
	return outcome{commits: []error{err1, err2}, final: h.final()}
}

// scriptG1a: T2 reads while T1's update is pending, and after T1 rolls
// back.
func scriptG1a(t1, t2 *session) outcome {
	t1.exec("update test set value = 101 where id = 1")
	r1 := t2.query("select * from test")
	t1.rollback()
	r2 := t2.query("select * from test")
	return outcome{reads: []rows{r1, r2}, commits: []error{nil, t2.commit()}}
}

// scriptG1b: T2 reads while T1 holds an intermediate value, and after T1
// committed its final one.
func scriptG1b(t1, t2 *session) outcome {
	t1.exec("update test set value = 101 where id = 1")
	r1 := t2.query("select * from test")
	t1.exec("update test set value = 11 where id = 1")
	err1 := t1.commit()
	r2 := t2.query("select * from test")
	return outcome{reads: []rows{r1, r2}, commits: []error{err1, t2.commit()}}
}

// scriptG1c: each transaction reads the row the other has written and
// not committed.
func scriptG1c(h *harness, t1, t2 *session) outcome {
	t1.exec("update test set value = 11 where id = 1")
	t2.exec("update test set value = 22 where id = 2")
	r1 := t1.query("select * from test where id = 2")
	r2 := t2.query("select * from test where id = 1")
	err1 := t1.commit()
	err2 := t2.commit()
	return outcome{reads: []rows{r1, r2}, commits: []error{err1, err2}, final: h.final()}
}

// scriptOTV: T3 reads while T1 and then T2 write both rows.
func scriptOTV(h *harness, t1, t2, t3 *session) outcome {
	t1.exec("update test set value = 11 where id = 1")
	t1.exec("update test set value = 19 where id = 2")
	t2.start("update test set value = 12 where id = 1") // BLOCKS
	err1 := t1.commit()
	r1 := t3.query("select * from test")
	t2.exec("update test set value = 18 where id = 2")
	r2 := t3.query("select * from test")
	err2 := t2.commit()
	r3 := t3.query("select * from test")
	err3 := t3.commit()
	return outcome{reads: []rows{r1, r2, r3}, commits: []error{err1, err2, err3}, final: h.final()}
}

// scriptPMPRead: T1 reads a predicate before and after T2 inserts a row
// that matches it.
func scriptPMPRead(t1, t2 *session) outcome {
	r1 := t1.query("select * from test where value = 30")
	t2.exec("insert into test (id, value) values (3, 30)")
	err2 := t2.commit()
	r2 := t1.query("select * from test where value % 3 = 0")
	return outcome{reads: []rows{r1, r2}, commits: []error{t1.commit(), err2}}
}

// scriptPMPWrite: T2 deletes by a predicate whose rows T1 is changing.
func scriptPMPWrite(h *harness, t1, t2 *session) outcome {
	t1.exec("update test set value = value + 10")
	r1 := t2.query("select * from test where value = 20")
	del := t2.start("delete from test where value = 20") // BLOCKS
	err1 := t1.commit()
	r2 := t2.query("select * from test")
	err2 := t2.commit()
	return outcome{reads: []rows{r1, r2}, commits: []error{err1, err2}, del: del.wait(), final: h.final()}
}

// scriptP4: both transactions read the counter and write it back
// incremented.
func scriptP4(h *harness, t1, t2 *session) outcome {
	a := t1.query("select * from test where id = 1")
	b := t2.query("select * from test where id = 1")
	t1.exec(fmt.Sprintf("update test set value = %d where id = 1", a[1]+1))
	t2.start(fmt.Sprintf("update test set value = %d where id = 1", b[1]+1)) // BLOCKS
	err1 := t1.commit()
	err2 := t2.commit()
	return outcome{reads: []rows{a, b}, commits: []error{err1, err2}, final: h.final()}
}

// scriptGSingleRead: T1 reads row 1 before and row 2 after T2 changes
// both.
func scriptGSingleRead(t1, t2 *session) outcome {
	r1 := t1.query("select * from test where id = 1")
	t2.query("select * from test where id = 1")
	t2.query("select * from test where id = 2")
	t2.exec("update test set value = 12 where id = 1")
	t2.exec("update test set value = 18 where id = 2")
	err2 := t2.commit()
	r2 := t1.query("select * from test where id = 2")
	return outcome{reads: []rows{r1, r2}, commits: []error{t1.commit(), err2}}
}

// scriptGSingleWrite: T1 reads row 1, T2 changes both rows, then T1
// deletes by a predicate on row 2's old value.
func scriptGSingleWrite(h *harness, t1, t2 *session) outcome {
	r1 := t1.query("select * from test where id = 1")
	t2.query("select * from test")
	t2.exec("update test set value = 12 where id = 1")
	t2.exec("update test set value = 18 where id = 2")
	err2 := t2.commit()
	d := t1.exec("delete from test where value = 20")
	r2 := t1.query("select * from test where id = 2")
	err1 := t1.commit()
	return outcome{reads: []rows{r1, r2}, commits: []error{err1, err2}, del: d, final: h.final()}
}
