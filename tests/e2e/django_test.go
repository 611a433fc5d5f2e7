package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestDjango runs testdata/django/smoke.py, a Django project on Debian's
// python3-django and python3-mysqldb (mysqlclient), against percdb:
// makemigrations and migrate, ORM writes, aggregates, transaction.atomic
// rolled back and committed, select_for_update, a foreign key (the
// migration's ALTER TABLE ... ADD CONSTRAINT, an orphan refused with 1452,
// the ORM's cascading delete), and migrate again.
func TestDjango(t *testing.T) {
	python := pythonWith(t, "django, MySQLdb", "python3-django python3-mysqldb")
	// A copy of the project: makemigrations writes into it.
	dir := t.TempDir()
	if err := os.CopyFS(dir, os.DirFS(filepath.Join("testdata", "django"))); err != nil {
		t.Fatal(err)
	}
	s := startServer(t, "")
	host, port := s.HostPort()
	got := strings.TrimSpace(runProgram(t, nil, python, filepath.Join(dir, "smoke.py"), host, port))
	want := strings.Join([]string{
		"migrated",
		"customers [('ann', Decimal('10.50'), datetime.datetime(2024, 1, 2, 3, 4, 5)), ('bob', Decimal('0.00'), None)]",
		"orders {'n': 4, 's': Decimal('12.50'), 'a': Decimal('3.125000')}",
		"after rollback 10.50 0",
		"after commit 3.00 1",
		"left 3",
		"orphan refused 1452",
		"after cascade 1 1",
		"migrate again True",
	}, "\n")
	if got != want {
		t.Errorf("smoke.py printed\n%s\nwant\n%s", got, want)
	}
}
