package testdisk

import (
	"crypto/rand"
	"database/sql"
	"encoding/base64"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/pprof"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Mount mounts a tmpfs of size (mount's notation: "64m") on a temporary
// directory for the test and unmounts it when the test ends; it skips the
// test where it cannot mount (mounting needs root).
func Mount(t testing.TB, size string) string {
	t.Helper()
	mnt := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size="+size, "tmpfs", mnt).CombinedOutput(); err != nil {
		t.Skipf("cannot mount a tmpfs (needs root): %v %s", err, out)
	}
	t.Cleanup(func() { _ = exec.Command("umount", "-l", mnt).Run() })
	return mnt
}

// FillLeaving writes a file in mnt that leaves leave bytes of its file
// system free (another program's file: removing it is how space comes
// back), and returns its path.
func FillLeaving(t testing.TB, mnt string, leave int) string {
	t.Helper()
	var st syscall.Statfs_t
	if err := syscall.Statfs(mnt, &st); err != nil {
		t.Fatal(err)
	}
	free := int(st.Bavail) * int(st.Bsize)
	other := filepath.Join(mnt, "other-program.dat")
	if err := os.WriteFile(other, make([]byte, max(free-leave, 0)), 0o600); err != nil {
		t.Fatal(err)
	}
	return other
}

// HangDeadline bounds what WithinDeadline waits for: far longer than a
// refused write takes (well under a second), even on a loaded machine.
const HangDeadline = 2 * time.Minute

// WithinDeadline runs f, which talks to a server or store in this
// process. If f has not returned within HangDeadline the server is hung,
// and so would be the test's cleanup that stops it: the test binary
// prints every goroutine's stack, unmounts mnt and exits with a failure
// instead.
func WithinDeadline(t testing.TB, mnt, what string, f func()) {
	t.Helper()
	timer := time.AfterFunc(HangDeadline, func() {
		fmt.Fprintf(os.Stderr, "--- FAIL: %s: %s did not finish within %v: hung\n", t.Name(), what, HangDeadline)
		_ = pprof.Lookup("goroutine").WriteTo(os.Stderr, 1)
		printUsage(mnt)
		_ = exec.Command("umount", "-l", mnt).Run()
		os.Exit(1)
	})
	defer timer.Stop()
	f()
}

// printUsage prints what holds the space of mnt, a hung test's last
// evidence: its free space and every file with its size.
func printUsage(mnt string) {
	var st syscall.Statfs_t
	if err := syscall.Statfs(mnt, &st); err == nil {
		fmt.Fprintf(os.Stderr, "%s: %d bytes free of %d\n", mnt, st.Bavail*uint64(st.Bsize), st.Blocks*uint64(st.Bsize))
	}
	_ = filepath.WalkDir(mnt, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return nil
		}
		if fi, err := d.Info(); err == nil {
			fmt.Fprintf(os.Stderr, "%12d %s\n", fi.Size(), path)
		}
		return nil
	})
}

// InsertRandomRows inserts n rows (id, pad) into table in one statement,
// with ids from..from+n-1 and random (incompressible) pads of 2 KB: what
// fills a disk fastest through SQL.
func InsertRandomRows(db *sql.DB, table string, from, n int) error {
	var sb strings.Builder
	args := make([]any, 0, 2*n)
	sb.WriteString("INSERT INTO " + table + " VALUES ")
	for i := 0; i < n; i++ {
		if i > 0 {
			sb.WriteString(",")
		}
		b := make([]byte, 1500)
		_, _ = rand.Read(b)
		sb.WriteString("(?, ?)")
		args = append(args, from+i, base64.StdEncoding.EncodeToString(b))
	}
	_, err := db.Exec(sb.String(), args...)
	return err
}

// FillUp writes a file in mnt until its file system has no space left
// (another program taking every block, the released ballast included)
// and returns its path. Unlike FillLeaving it tolerates the free space
// shrinking meanwhile (a server writing beside it).
func FillUp(t testing.TB, mnt string) string {
	t.Helper()
	other := filepath.Join(mnt, "other-program.dat")
	f, err := os.OpenFile(other, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	buf := make([]byte, 64<<10)
	for {
		if _, err := f.Write(buf); err != nil {
			if errors.Is(err, syscall.ENOSPC) {
				return other
			}
			t.Fatalf("fill %s: %v", mnt, err)
		}
	}
}
