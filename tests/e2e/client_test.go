package e2e

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/percdb/percdb/sql/sqltest"
)

// mariadbClient returns the path of the mariadb (or mysql) command-line
// client, skipping the test where neither is installed.
func mariadbClient(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"mariadb", "mysql"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	t.Skip("mariadb command-line client not installed (Debian: apt-get install mariadb-client)")
	return ""
}

// runClient runs the client with args and stdin and returns its output.
func runClient(t *testing.T, s *sqltest.Server, stdin string, args ...string) string {
	t.Helper()
	host, port := s.HostPort()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	argv := append([]string{"-h", host, "-P", port, "-u", "root"}, args...)
	cmd := exec.CommandContext(ctx, mariadbClient(t), argv...)
	cmd.Stdin = strings.NewReader(stdin)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		t.Fatalf("mariadb %v: %v\n%s", argv, err, out.String())
	}
	return out.String()
}

// TestMariadbClientExecute drives percdb with mariadb -e.
func TestMariadbClientExecute(t *testing.T) {
	s := startServer(t, "")
	out := runClient(t, s, "", "-e", `
		CREATE DATABASE shop;
		CREATE TABLE shop.items (id INT PRIMARY KEY AUTO_INCREMENT, name VARCHAR(20) NOT NULL, qty INT DEFAULT 0, KEY k_name (name));
		INSERT INTO shop.items (name, qty) VALUES ('apple', 3), ('pear', 5), ('plum', 0);
		UPDATE shop.items SET qty = qty + 1 WHERE name = 'PEAR';
		DELETE FROM shop.items WHERE qty = 0;
		SELECT id, name, qty FROM shop.items ORDER BY id;`)
	want := "id\tname\tqty\n1\tapple\t3\n2\tpear\t6\n"
	if out != want {
		t.Fatalf("output:\n%s\nwant:\n%s", out, want)
	}
	out = runClient(t, s, "", "--batch", "--skip-column-names", "-e", "SELECT @@version_comment LIMIT 1")
	if !strings.Contains(out, "percdb") {
		t.Fatalf("version comment = %q", out)
	}
}

// TestMariadbClientInteractive runs an interactive session on a terminal
// (script(1) provides one), as a user would type it: the client then also
// sends what it sends on its own (select @@version_comment, and on USE the
// table and column lists for completion).
func TestMariadbClientInteractive(t *testing.T) {
	client := mariadbClient(t)
	s := startServer(t, "")
	mustExec(t, s.Open(""), "CREATE DATABASE lib",
		"CREATE TABLE lib.books (id INT PRIMARY KEY, title VARCHAR(40))",
		"INSERT INTO lib.books VALUES (1, 'Dune'), (2, 'Emma')")
	session := "use lib;\nshow tables;\nselect title from books where id = 2;\nbegin;\ninsert into books values (3, 'Ulysses');\ncommit;\nselect count(*) from books;\nquit\n"

	// Piped: the client reads the session from stdin in batch mode.
	out := runClient(t, s, session)
	for _, want := range []string{"Tables_in_lib\nbooks", "title\nEmma", "count(*)\n3"} {
		if !strings.Contains(out, want) {
			t.Fatalf("piped session output lacks %q:\n%s", want, out)
		}
	}

	// On a terminal, where the client is interactive.
	scriptPath, err := exec.LookPath("script")
	if err != nil {
		t.Skip("script(1) not installed: interactive session on a terminal not tested")
	}
	host, port := s.HostPort()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmdline := client + " -h " + host + " -P " + port + " -u root"
	cmd := exec.CommandContext(ctx, scriptPath, "-qec", cmdline, "/dev/null")
	cmd.Stdin = strings.NewReader(strings.Replace(session, "insert into books values (3, 'Ulysses')", "insert into books values (4, 'Walden')", 1))
	var buf bytes.Buffer
	cmd.Stdout, cmd.Stderr = &buf, &buf
	if err := cmd.Run(); err != nil {
		t.Fatalf("interactive session: %v\n%s", err, buf.String())
	}
	out = buf.String()
	for _, want := range []string{"Database changed", "| books", "| Emma", " 4 |"} {
		if !strings.Contains(out, want) {
			t.Fatalf("interactive output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "ERROR") {
		t.Fatalf("interactive session had an error:\n%s", out)
	}
}

// TestMariadbClientSSL connects with mariadb --ssl (TLS required, the
// server not verified) to a server given no certificate, which offers the
// one it generated; with --ssl-ca and --ssl-verify-server-cert the client
// verifies it against the generated CA.
func TestMariadbClientSSL(t *testing.T) {
	s := startServer(t, "")
	out := runClient(t, s, "", "--ssl", "-e", "status")
	if !strings.Contains(out, "Cipher in use") {
		t.Fatalf("mariadb --ssl: no TLS in status:\n%s", out)
	}
	out = runClient(t, s, "", "--ssl-ca", filepath.Join(s.Dir, "ca.pem"), "--ssl-verify-server-cert", "-e", "status")
	if !strings.Contains(out, "Cipher in use") {
		t.Fatalf("mariadb --ssl-verify-server-cert: no TLS in status:\n%s", out)
	}
}

// TestMariadbClientLoadDataLocal loads a CSV file with the mariadb
// client's LOAD DATA LOCAL INFILE, as a user would (the client sends the
// file when --local-infile=1 and the server allows it, which percdb does
// by default).
func TestMariadbClientLoadDataLocal(t *testing.T) {
	s := startServer(t, "")
	file := filepath.Join(t.TempDir(), "items.csv")
	var b strings.Builder
	b.WriteString("id,name,qty\n")
	for i := 1; i <= 1000; i++ {
		fmt.Fprintf(&b, "%d,\"item, no. %d\",%d\n", i, i, i%7)
	}
	if err := os.WriteFile(file, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	out := runClient(t, s, "", "--local-infile=1", "--batch", "--skip-column-names", "-e", `
		CREATE DATABASE shop;
		CREATE TABLE shop.items (id INT PRIMARY KEY, name VARCHAR(40), qty INT);
		LOAD DATA LOCAL INFILE '`+file+`' INTO TABLE shop.items FIELDS TERMINATED BY ',' OPTIONALLY ENCLOSED BY '"' IGNORE 1 LINES;
		SELECT COUNT(*), MAX(qty) FROM shop.items;
		SELECT name FROM shop.items WHERE id = 1000;`)
	if want := "1000\t6\nitem, no. 1000\n"; out != want {
		t.Fatalf("output:\n%s\nwant:\n%s", out, want)
	}
}
