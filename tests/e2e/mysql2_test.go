package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// nodeModules returns a node_modules directory that holds package pkg
// (mysql2, sequelize): the one scripts/install-test-deps.sh installs into
// ($PERCDB_NPM_PREFIX, default ~/.cache/percdb/npm), or npm's global one.
func nodeModules(t *testing.T, pkg string) string {
	t.Helper()
	var cands []string
	if p := os.Getenv("PERCDB_NPM_PREFIX"); p != "" {
		cands = append(cands, filepath.Join(p, "node_modules"))
	}
	if home, err := os.UserHomeDir(); err == nil {
		cands = append(cands, filepath.Join(home, ".cache", "percdb", "npm", "node_modules"))
	}
	if out, err := exec.Command("npm", "root", "-g").Output(); err == nil {
		cands = append(cands, strings.TrimSpace(string(out)))
	}
	for _, d := range cands {
		if _, err := os.Stat(filepath.Join(d, pkg, "package.json")); err == nil {
			return d
		}
	}
	t.Skipf("node's %s not installed (scripts/install-test-deps.sh installs it with npm)", pkg)
	return ""
}

// TestNodeMySQL2 runs testdata/driver_smoke.js with node's mysql2
// against percdb: prepared statements, a transaction rolled back and one
// committed, and the types mysql2 decodes in the binary and the text
// protocol.
func TestNodeMySQL2(t *testing.T) {
	got := runNodeScript(t, "mysql2", "driver_smoke.js")
	want := strings.Join([]string{
		"inserted 1",
		"inserted 1",
		"inserted 1",
		"row owner 1 100.25 2024-01-15T00:00:00.000Z 2024-01-15T10:20:30.125Z 01:30:00",
		"row owner 2 200.25 2024-02-15T00:00:00.000Z 2024-02-15T10:20:30.125Z 02:30:00",
		"in transaction, others see [100.25,200.25,300.25]",
		"after rollback [100.25,200.25,300.25]",
		"after commit [30.25,270.25,300.25]",
		"deleted 1",
		// A zero date is length 0 in the binary protocol (as MySQL sends
		// it), which mysql2 writes without the column's fraction.
		`zero dates {"owner":null,"bal":null,"opened":"0000-00-00","seen":"0000-00-00 00:00:00","t":null}`,
		`zero dates text {"owner":null,"bal":null,"opened":"0000-00-00","seen":"0000-00-00 00:00:00.000","t":null}`,
	}, "\n")
	if got != want {
		t.Errorf("driver_smoke.js printed\n%s\nwant\n%s", got, want)
	}
}

// runNodeScript runs testdata/script with node, with package pkg
// installed, against a new server, and returns what it printed, trimmed;
// it skips the test where node or pkg is missing.
func runNodeScript(t *testing.T, pkg, script string) string {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("no node (Debian: apt-get install nodejs)")
	}
	modules := nodeModules(t, pkg)
	s := startServer(t, "")
	host, port := s.HostPort()
	return strings.TrimSpace(runProgram(t, []string{"NODE_PATH=" + modules}, node, filepath.Join("testdata", script), host, port))
}
