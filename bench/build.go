package bench

import (
	"archive/tar"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// BuildPercdb builds ./cmd/percdb of the module at repo into dir and
// returns the binary's path. With rev empty it builds the working tree as
// it is; otherwise it builds the git revision rev, exported into dir/src,
// so that a measurement does not depend on half-finished edits in a shared
// checkout.
func BuildPercdb(ctx context.Context, repo, rev, dir string) (string, error) {
	src := repo
	if rev != "" {
		src = filepath.Join(dir, "src")
		if err := ExportRevision(ctx, repo, rev, src); err != nil {
			return "", fmt.Errorf("build percdb: %w", err)
		}
	}
	bin, err := filepath.Abs(filepath.Join(dir, "percdb"))
	if err != nil {
		return "", fmt.Errorf("build percdb: %w", err)
	}
	cmd := exec.CommandContext(ctx, "go", "build", "-o", bin, "./cmd/percdb")
	cmd.Dir = src
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("build percdb in %s: %w\n%s", src, err, tail(out, 30))
	}
	return bin, nil
}

// ExportRevision writes the tree of git revision rev of the repository at
// repo into dir (which must not exist or be empty), the way `git archive`
// sees it, without touching the repository's index or working tree.
func ExportRevision(ctx context.Context, repo, rev, dir string) error {
	if strings.HasPrefix(rev, "-") {
		return fmt.Errorf("export %q: not a revision", rev)
	}
	cmd := exec.CommandContext(ctx, "git", "-C", repo, "archive", "--format=tar", rev)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		return fmt.Errorf("export %s: %w", rev, err)
	}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("export %s: %w", rev, err)
	}
	xerr := extractTar(out, dir)
	io.Copy(io.Discard, out) // let git finish if extraction stopped early
	if err := cmd.Wait(); err != nil {
		return fmt.Errorf("export %s: git archive: %w: %s", rev, err, strings.TrimSpace(stderr.String()))
	}
	if xerr != nil {
		return fmt.Errorf("export %s: %w", rev, xerr)
	}
	return nil
}

// extractTar writes the directories, regular files and symbolic links of a
// tar stream under dir, refusing names that would land outside it.
func extractTar(r io.Reader, dir string) error {
	tr := tar.NewReader(r)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		name := filepath.Clean(h.Name)
		if !filepath.IsLocal(name) {
			return fmt.Errorf("archive entry %q leaves the directory", h.Name)
		}
		path := filepath.Join(dir, name)
		switch h.Typeflag {
		case tar.TypeDir:
			err = os.MkdirAll(path, 0o755)
		case tar.TypeReg:
			err = writeFile(path, tr, os.FileMode(h.Mode).Perm())
		case tar.TypeSymlink:
			if err = os.MkdirAll(filepath.Dir(path), 0o755); err == nil {
				err = os.Symlink(h.Linkname, path)
			}
		}
		// Other entries (git's pax header with the commit id) carry no file.
		if err != nil {
			return fmt.Errorf("archive entry %q: %w", h.Name, err)
		}
	}
}

func writeFile(path string, r io.Reader, perm os.FileMode) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, r); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
