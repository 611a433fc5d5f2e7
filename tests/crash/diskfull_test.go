package crash

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/percdb/percdb/internal/testdisk"
)

// TestSIGTERMOnFullDisk: percdb stops on SIGTERM while its disk is full,
// writers still at it, within a bounded time (--shutdown-timeout, 5 s
// here, past which the process exits without a clean close), and on a
// restart with room every acknowledged insert is there. The disk is
// filled twice over: by percdb's own rows until the store refuses them
// (1021), then by another program's file that takes the released ballast
// too, leaving Pebble no room to flush. It mounts a tmpfs, so it needs
// root; elsewhere it skips.
func TestSIGTERMOnFullDisk(t *testing.T) {
	if testing.Short() {
		t.Skip("fills a file system")
	}
	bin := buildPercdb(t)
	mnt := testdisk.Mount(t, "96m")
	dir := filepath.Join(mnt, "data")
	flags := []string{"--reserve-space", "13MiB", "--shutdown-timeout", "5s"}
	p := startServerWith(t, bin, dir, flags...)
	db := openDB(t, p.addr, "")
	db.SetMaxOpenConns(4)
	for _, q := range []string{"CREATE DATABASE f", "CREATE TABLE f.t (id INT PRIMARY KEY, pad VARCHAR(2100))", "CREATE TABLE f.s (id INT PRIMARY KEY, v INT)"} {
		if _, err := db.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}

	// acked records the ids of every insert the server acknowledged.
	var mu sync.Mutex
	var acked []int
	insert := func(from, n int) error {
		if err := testdisk.InsertRandomRows(db, "f.t", from, n); err != nil {
			return err
		}
		mu.Lock()
		defer mu.Unlock()
		for id := from; id < from+n; id++ {
			acked = append(acked, id)
		}
		return nil
	}
	for i := 0; i < 60000; i += 1000 {
		var sb strings.Builder
		for j := i; j < i+1000; j++ {
			if j > i {
				sb.WriteString(",")
			}
			fmt.Fprintf(&sb, "(%d, %d)", j, j)
		}
		if _, err := db.Exec("INSERT INTO f.s VALUES " + sb.String()); err != nil {
			t.Fatal(err)
		}
	}
	var err error
	next := 0
	for ; next < 100_000; next += 100 { // 200 MiB: far more than the disk
		if err = insert(next, 100); err != nil {
			break
		}
	}
	var me *mysql.MySQLError
	if !errors.As(err, &me) || me.Number != 1021 {
		t.Fatalf("after %d rows: %v; want error 1021", len(acked), err)
	}
	t.Logf("disk full after %d acknowledged rows", len(acked))
	// Another program takes what is left, the released ballast included.
	other := testdisk.FillUp(t, mnt)

	// Writers go on, single rows and batches, each in its own id range,
	// until halted.
	var halt atomic.Bool
	var wg sync.WaitGroup
	writer := func(base int) {
		defer wg.Done()
		for i := 0; !halt.Load(); i++ {
			_ = insert(base+10*i, 1+9*(i%2))
			time.Sleep(5 * time.Millisecond)
		}
	}
	for w := 1; w <= 3; w++ {
		wg.Add(1)
		go writer(1_000_000 * w)
	}
	time.Sleep(time.Second)
	// A DELETE of 60,000 rows, which a full disk accepts, is under way
	// when the signal comes: it is all there after the restart or all
	// gone, and gone if it was acknowledged.
	deleted := make(chan error, 1)
	go func() {
		_, err := openDB(t, p.addr, "f").Exec("DELETE FROM s")
		deleted <- err
	}()
	time.Sleep(300 * time.Millisecond)
	began := time.Now()
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatalf("signal percdb: %v", err)
	}
	select {
	case <-p.exited:
	case <-time.After(stopTimeout):
		_ = p.cmd.Process.Kill()
		<-p.exited
		halt.Store(true)
		wg.Wait()
		t.Fatalf("percdb did not stop within %v of SIGTERM on the full disk\n%s", stopTimeout, p.out)
	}
	took := time.Since(began)
	halt.Store(true)
	wg.Wait()
	deleteErr := <-deleted
	db.Close()
	var ee *exec.ExitError
	switch {
	case p.waitErr == nil:
		t.Logf("SIGTERM on the full disk: a clean stop in %v", took)
	case errors.As(p.waitErr, &ee) && ee.ExitCode() == 1 && strings.Contains(p.out.String(), "shutdown did not finish in time"):
		t.Logf("SIGTERM on the full disk: the clean close did not finish; the process exited at --shutdown-timeout, %v after the signal", took)
	default:
		t.Fatalf("percdb ended with %v %v after SIGTERM on the full disk, neither a clean stop nor the shutdown timeout's exit\n%s", p.waitErr, took, p.out)
	}

	// Room again: every acknowledged row is there.
	if err := os.Remove(other); err != nil {
		t.Fatal(err)
	}
	p = startServerWith(t, bin, dir, flags...)
	db = openDB(t, p.addr, "")
	mu.Lock()
	want := append([]int(nil), acked...)
	mu.Unlock()
	have := make(map[int]bool, len(want))
	rows, err := db.Query("SELECT id FROM f.t")
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var id int
		if err := rows.Scan(&id); err != nil {
			t.Fatal(err)
		}
		have[id] = true
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	rows.Close()
	var missing []string
	for _, id := range want {
		if !have[id] {
			missing = append(missing, fmt.Sprint(id))
		}
	}
	if len(missing) > 0 {
		t.Fatalf("%d of %d acknowledged rows missing after the restart: %s", len(missing), len(want), strings.Join(missing[:min(len(missing), 20)], ", "))
	}
	t.Logf("after the restart: all %d acknowledged rows there (%d rows in all)", len(want), len(have))
	var left int
	if err := db.QueryRow("SELECT count(*) FROM f.s").Scan(&left); err != nil {
		t.Fatal(err)
	}
	t.Logf("the DELETE under way at the signal: %v; %d of its 60000 rows left after the restart", deleteErr, left)
	if (deleteErr == nil && left != 0) || (left != 0 && left != 60000) {
		t.Fatalf("the DELETE under way at the signal answered %v and left %d of its 60000 rows: want all or none, none if acknowledged", deleteErr, left)
	}
	p.stop()
}
