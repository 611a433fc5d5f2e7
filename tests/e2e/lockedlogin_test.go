package e2e

import (
	"bytes"
	"context"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"
)

// clientLogin runs the mariadb client as user with password (and extra
// arguments; SELECT 1 unless they give -e) against s and returns what it
// printed and whether it failed.
func clientLogin(t *testing.T, host, port, user, password string, extra ...string) (string, bool) {
	t.Helper()
	client := mariadbClient(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	argv := append([]string{"-h", host, "-P", port, "-u", user, "--password=" + password}, extra...)
	if !slices.Contains(extra, "-e") {
		argv = append(argv, "-e", "SELECT 1")
	}
	cmd := exec.CommandContext(ctx, client, argv...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	return out.String(), err != nil
}

// TestLockedAccountLogin logs in to locked accounts with the mariadb
// client, as MySQL answers: the right password gets 3118
// (ER_ACCOUNT_HAS_BEEN_LOCKED, "Account is locked"), a wrong one 1045, so
// the lock tells nothing to whoever does not know the password; for
// mysql_native_password, caching_sha2_password (over TLS, its full
// exchange) and an account without a password. Unlocked, they log in.
// Before, every login of a locked account was 1045.
func TestLockedAccountLogin(t *testing.T) {
	mariadbClient(t)
	s := startServer(t, "")
	db := s.Open("")
	mustExec(t, db,
		"CREATE USER 'lkn'@'%' IDENTIFIED BY 'pn' ACCOUNT LOCK",
		"CREATE USER 'lks'@'%' IDENTIFIED WITH caching_sha2_password BY 'ps' ACCOUNT LOCK",
		"CREATE USER 'lke'@'%' ACCOUNT LOCK")
	host, port := s.HostPort()
	cases := []struct {
		user, password string
		extra          []string
		want           string
	}{
		{"lkn", "pn", nil, "ERROR 3118"},
		{"lkn", "wrong", nil, "ERROR 1045"},
		{"lks", "ps", []string{"--ssl"}, "ERROR 3118"},
		{"lks", "wrong", []string{"--ssl"}, "ERROR 1045"},
		{"lke", "", nil, "ERROR 3118"},
		{"lke", "x", nil, "ERROR 1045"},
	}
	for _, c := range cases {
		out, failed := clientLogin(t, host, port, c.user, c.password, c.extra...)
		if !failed || !strings.Contains(out, c.want) {
			t.Errorf("login %s with %q %v: failed %v, output %q, want %s", c.user, c.password, c.extra, failed, out, c.want)
		}
		if c.want == "ERROR 3118" && !strings.Contains(out, "Account is locked") {
			t.Errorf("login %s: %q does not say the account is locked", c.user, out)
		}
	}
	mustExec(t, db, "ALTER USER 'lkn'@'%', 'lks'@'%', 'lke'@'%' ACCOUNT UNLOCK")
	for _, c := range cases {
		if c.want != "ERROR 3118" {
			continue
		}
		if out, failed := clientLogin(t, host, port, c.user, c.password, c.extra...); failed {
			t.Errorf("login %s after ACCOUNT UNLOCK: %s", c.user, out)
		}
	}
}
