package testproc

import (
	"bytes"
	"context"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"
)

// Browser returns the path of headless-capable Chromium, skipping the test
// when none is on PATH (scripts/install-test-deps.sh installs it).
func Browser(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	t.Skip("no chromium on PATH: scripts/install-test-deps.sh installs it")
	return ""
}

var consoleLine = regexp.MustCompile(`(?m)^.*:CONSOLE[:(].*$`)

// Chromium runs headless Chromium with arg (--dump-dom, --screenshot=F)
// on url, letting the page's script run (virtual time: its fetches and
// timers complete), and returns what it printed and the page's console
// messages.
func Chromium(t *testing.T, browser, arg, url string) (out, console string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, browser, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
		"--no-first-run", "--window-size=1400,900", "--enable-logging=stderr", "--v=0",
		"--user-data-dir="+t.TempDir(), "--virtual-time-budget=3000", arg, url)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s %s: %v\n%s", browser, arg, err, stderr.String())
	}
	return stdout.String(), strings.Join(consoleLine.FindAllString(stderr.String(), -1), "\n")
}
