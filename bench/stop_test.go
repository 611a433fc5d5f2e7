package bench

import (
	"os"
	"testing"
)

// TestStopWithoutProcess checks that a server whose start failed before
// its process ran (mariadb-install-db failing) stops without a panic and
// removes its directory.
func TestStopWithoutProcess(t *testing.T) {
	s, err := newServer("noproc", ServerOptions{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Stop(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(s.dir); !os.IsNotExist(err) {
		t.Fatalf("directory %s left after Stop: %v", s.dir, err)
	}
}
