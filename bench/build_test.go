package bench

import (
	"archive/tar"
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func tarOf(t *testing.T, entries ...tar.Header) *bytes.Buffer {
	t.Helper()
	var b bytes.Buffer
	tw := tar.NewWriter(&b)
	for _, h := range entries {
		body := ""
		if h.Typeflag == tar.TypeReg {
			body = "content of " + h.Name
			h.Size = int64(len(body))
		}
		if err := tw.WriteHeader(&h); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write([]byte(body)); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	return &b
}

func TestExtractTar(t *testing.T) {
	dir := t.TempDir()
	b := tarOf(t,
		tar.Header{Name: "pax_global_header", Typeflag: tar.TypeXGlobalHeader},
		tar.Header{Name: "cmd/", Typeflag: tar.TypeDir, Mode: 0o755},
		tar.Header{Name: "cmd/percdb/main.go", Typeflag: tar.TypeReg, Mode: 0o644},
		tar.Header{Name: "link", Typeflag: tar.TypeSymlink, Linkname: "cmd/percdb/main.go"},
	)
	if err := extractTar(b, dir); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(filepath.Join(dir, "link"))
	if err != nil || string(got) != "content of cmd/percdb/main.go" {
		t.Errorf("through the link: %q, %v", got, err)
	}

	for _, name := range []string{"../evil", "/etc/evil"} {
		b := tarOf(t, tar.Header{Name: name, Typeflag: tar.TypeReg, Mode: 0o644})
		if err := extractTar(b, t.TempDir()); err == nil || !strings.Contains(err.Error(), "leaves the directory") {
			t.Errorf("entry %q: err = %v, want refused", name, err)
		}
	}
}

// TestExportRevision exports a committed file and not an uncommitted edit.
func TestExportRevision(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	repo := t.TempDir()
	git := func(args ...string) {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-C", repo, "-c", "user.name=t", "-c", "user.email=t@t"}, args...)...)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	git("init", "-q")
	if err := os.WriteFile(filepath.Join(repo, "f.txt"), []byte("committed"), 0o644); err != nil {
		t.Fatal(err)
	}
	git("add", "f.txt")
	git("commit", "-q", "-m", "c")
	if err := os.WriteFile(filepath.Join(repo, "f.txt"), []byte("edited"), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "src")
	if err := ExportRevision(context.Background(), repo, "HEAD", out); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(filepath.Join(out, "f.txt")); string(got) != "committed" {
		t.Errorf("exported f.txt = %q, want the committed text", got)
	}
	if err := ExportRevision(context.Background(), repo, "no-such-rev", t.TempDir()); err == nil {
		t.Error("unknown revision exported")
	}
	if err := ExportRevision(context.Background(), repo, "--output=/tmp/x", t.TempDir()); err == nil {
		t.Error("option accepted as a revision")
	}
}
