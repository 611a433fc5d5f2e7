package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// connectorJ is where Debian's libmariadb-java puts MariaDB Connector/J.
const connectorJ = "/usr/share/java/mariadb-java-client.jar"

// TestConnectorJ compiles testdata/DriverSmoke.java with javac and runs
// it against percdb with MariaDB Connector/J and server-side prepared
// statements (useServerPrepStmts=true): batched inserts, reads by
// parameter, rollback and commit with autocommit off, and the temporal
// and decimal types drivers decode from the binary protocol, over TLS
// with the certificate percdb generates.
func TestConnectorJ(t *testing.T) {
	got := runJava(t, "DriverSmoke")
	want := strings.Join([]string{
		"connected with TLS",
		"batch [1, 1, 1]",
		"row owner 1 100.25 2024-01-15 2024-01-15 10:20:30.0 01:30:00",
		"row owner 2 200.25 2024-02-15 2024-02-15 10:20:30.0 02:30:00",
		"in transaction, others see [100.25,200.25,300.25]",
		"after rollback [100.25,200.25,300.25]",
		"after commit [30.25,270.25,300.25]",
		"deleted 1",
		"autocommit on [30.25,270.25]",
		"zero dates null null null null null",
	}, "\n")
	if got != want {
		t.Errorf("DriverSmoke printed\n%s\nwant\n%s", got, want)
	}
}

// TestConnectorJCallOutParams runs testdata/CallOutParams.java: a JDBC
// CallableStatement reads a procedure's INOUT and OUT parameters (BIGINT,
// VARCHAR, DATE) from the result set percdb sends after the body's
// SELECT, flagged SERVER_PS_OUT_PARAMS, twice on one prepared CALL.
func TestConnectorJCallOutParams(t *testing.T) {
	got := runJava(t, "CallOutParams")
	want := strings.Join([]string{
		"k 2 body body x 14 label times 2 at 2024-03-05",
		"k 3 body body x 21 label times 3 at 2024-03-05",
	}, "\n")
	if got != want {
		t.Errorf("CallOutParams printed\n%s\nwant\n%s", got, want)
	}
}

// runJava compiles testdata/<class>.java with javac, runs it with MariaDB
// Connector/J against a fresh percdb server (arguments: host port) and
// returns what it printed, trimmed; it skips the test without a JDK or
// Connector/J.
func runJava(t *testing.T, class string) string {
	t.Helper()
	javac, err := exec.LookPath("javac")
	if err != nil {
		t.Skip("no javac (Debian: apt-get install default-jdk-headless)")
	}
	java, err := exec.LookPath("java")
	if err != nil {
		t.Skip("no java (Debian: apt-get install default-jdk-headless)")
	}
	if _, err := os.Stat(connectorJ); err != nil {
		t.Skipf("no MariaDB Connector/J at %s (Debian: apt-get install libmariadb-java)", connectorJ)
	}
	dir := t.TempDir()
	runProgram(t, nil, javac, "-d", dir, filepath.Join("testdata", class+".java"))

	s := startServer(t, "")
	host, port := s.HostPort()
	return strings.TrimSpace(runProgram(t, nil, java, "-cp", dir+string(os.PathListSeparator)+connectorJ, class, host, port))
}
