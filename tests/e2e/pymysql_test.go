package e2e

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// pythonWith returns a python3 interpreter that can import module,
// skipping the test where none can: Debian's packages (python3-pymysql)
// install into /usr/bin/python3's path, which a python3 found first on
// PATH may not share.
func pythonWith(t *testing.T, module, pkg string) string {
	t.Helper()
	cands := []string{"/usr/bin/python3"}
	if p, err := exec.LookPath("python3"); err == nil {
		cands = append(cands, p)
	}
	for _, p := range cands {
		if exec.Command(p, "-c", "import "+module).Run() == nil {
			return p
		}
	}
	t.Skipf("no python3 with %s (Debian: apt-get install %s)", module, pkg)
	return ""
}

// runPython runs script with python, the server's host and port as its
// arguments, and returns its output, failing the test if it fails.
func runPython(t *testing.T, python, script, host, port string) string {
	t.Helper()
	return runProgram(t, nil, python, "-c", script, host, port)
}

// runProgram runs a driver's test program (name with args, and env added
// to the test's environment) for up to three minutes and returns its
// output, failing the test if it fails.
func runProgram(t *testing.T, env []string, name string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	if env != nil {
		cmd.Env = append(os.Environ(), env...)
	}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s %v: %v\n%s", name, args, err, out.String())
	}
	return out.String()
}

// pymysqlTransactions is a PyMySQL program as applications (and Django,
// whose mysqlclient decides the same way) are written: a connection with
// autocommit off, whose rollback() undoes its writes and commit() keeps
// them, checked from a second connection. PyMySQL sends SET autocommit = 0
// only if the server's status flags say autocommit is on.
const pymysqlTransactions = `
import sys, pymysql
host, port = sys.argv[1], int(sys.argv[2])
def connect(**kw):
    return pymysql.connect(host=host, port=port, user="root", **kw)
admin = connect(autocommit=True)
with admin.cursor() as c:
    c.execute("CREATE DATABASE py")
    c.execute("CREATE TABLE py.acct (id INT PRIMARY KEY, bal INT)")
    c.execute("INSERT INTO py.acct VALUES (1, 100), (2, 100)")
def balances():
    with admin.cursor() as c:
        c.execute("SELECT bal FROM py.acct ORDER BY id")
        return [r[0] for r in c.fetchall()]
conn = connect(database="py", autocommit=False)
print("autocommit", conn.get_autocommit())
with conn.cursor() as c:
    c.execute("UPDATE acct SET bal = bal - 10 WHERE id = 1")
    c.execute("UPDATE acct SET bal = bal + 10 WHERE id = 2")
print("in transaction, others see", balances())
conn.rollback()
print("after rollback", balances())
with conn.cursor() as c:
    c.execute("UPDATE acct SET bal = bal - 30 WHERE id = 1")
    c.execute("UPDATE acct SET bal = bal + 30 WHERE id = 2")
conn.commit()
print("after commit", balances())
conn.autocommit(True)
with conn.cursor() as c:
    c.execute("UPDATE acct SET bal = 0 WHERE id = 1")
print("autocommit on", balances())
conn.close()
`

// TestPyMySQLTransactions runs pymysqlTransactions against percdb.
func TestPyMySQLTransactions(t *testing.T) {
	checkPyMySQL(t, pymysqlTransactions,
		"autocommit False",
		"in transaction, others see [100, 100]",
		"after rollback [100, 100]",
		"after commit [70, 130]",
		"autocommit on [0, 130]",
	)
}

// checkPyMySQL runs PyMySQL program script against a new percdb and
// compares the lines it prints with want.
func checkPyMySQL(t *testing.T, script string, want ...string) {
	t.Helper()
	python := pythonWith(t, "pymysql", "python3-pymysql")
	s := startServer(t, "")
	host, port := s.HostPort()
	got := strings.TrimSpace(runPython(t, python, script, host, port))
	if w := strings.Join(want, "\n"); got != w {
		t.Errorf("PyMySQL program printed\n%s\nwant\n%s", got, w)
	}
}

// pymysqlBulk is a PyMySQL program that loads data as applications do:
// executemany (which PyMySQL turns into one multi-row INSERT), LOAD DATA
// LOCAL INFILE with local_infile=True, inside a transaction that is
// rolled back and then committed, and aggregates read back as Python
// decimals (DECIMAL columns) as MySQL types them.
const pymysqlBulk = `
import sys, os, tempfile, pymysql
host, port = sys.argv[1], int(sys.argv[2])
conn = pymysql.connect(host=host, port=port, user="root", autocommit=False, local_infile=True)
with conn.cursor() as c:
    c.execute("CREATE DATABASE bulk")
    c.execute("CREATE TABLE bulk.t (id INT PRIMARY KEY, name VARCHAR(20), qty INT)")
    c.executemany("INSERT INTO bulk.t VALUES (%s, %s, %s)", [(i, "row %d" % i, i % 10) for i in range(1, 1001)])
    c.execute("SELECT COUNT(*), SUM(qty), AVG(qty) FROM bulk.t")
    print("executemany", c.fetchone())
conn.rollback()
with conn.cursor() as c:
    c.execute("SELECT COUNT(*) FROM bulk.t")
    print("after rollback", c.fetchone())
    f = tempfile.NamedTemporaryFile("w", suffix=".csv", delete=False)
    for i in range(1, 2001):
        f.write('%d,"name, %d",%d\n' % (i, i, i % 7))
    f.close()
    c.execute("LOAD DATA LOCAL INFILE %s INTO TABLE bulk.t FIELDS TERMINATED BY ',' ENCLOSED BY '\"'", (f.name,))
    os.unlink(f.name)
conn.commit()
with conn.cursor() as c:
    c.execute("SELECT COUNT(*), SUM(qty), AVG(qty), MAX(name) FROM bulk.t")
    print("after commit", c.fetchone())
conn.close()
`

// TestPyMySQLBulk runs pymysqlBulk against percdb.
func TestPyMySQLBulk(t *testing.T) {
	checkPyMySQL(t, pymysqlBulk,
		"executemany (1000, Decimal('4500'), Decimal('4.5000'))",
		"after rollback (0,)",
		"after commit (2000, Decimal('6000'), Decimal('3.0000'), 'name, 999')",
	)
}
