package durablefile_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/percdb/percdb/internal/durablefile"
)

// TestWriteReplaces: Write creates the file, replaces it whole, and leaves
// no temporary file behind; a leftover temporary file does not matter.
func TestWriteReplaces(t *testing.T) {
	path := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(path+".tmp", []byte("torn"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"first contents", "2nd"} {
		if err := durablefile.Write(path, []byte(want), 0o644); err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(path)
		if err != nil || string(got) != want {
			t.Fatalf("read %q %v, want %q", got, err, want)
		}
		if _, err := os.Stat(path + ".tmp"); !os.IsNotExist(err) {
			t.Fatalf("temporary file left: %v", err)
		}
	}
	if err := durablefile.Write(filepath.Join(t.TempDir(), "missing", "f"), nil, 0o644); err == nil {
		t.Fatal("write into a missing directory succeeded")
	}
}
