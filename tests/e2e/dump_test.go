package e2e

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/percdb/percdb/tests/isolation/testserver"
)

// The dump and restore round trip a user runs first: mariadb-dump of a
// database with every common column type and object kind
// (testdata/dump/schema.sql), with the usual option sets, restored with
// the mariadb client into another database, must give the same tables,
// rows, views, triggers and procedures. With PERCDB_TEST_MARIADB set, a
// dump MariaDB 10.11 makes of the same database is restored into percdb
// too, and the rows compared with MariaDB's.

// dumpOptionSets are the mariadb-dump option sets the round trip runs
// with. rows says whether the dump has the rows, where filters them;
// routines whether it has the procedures (triggers it has by default);
// tables, when set, are the only tables dumped.
var dumpOptionSets = []struct {
	name     string
	args     []string
	rows     bool
	where    string
	routines bool
	tables   []string
}{
	{name: "default", rows: true},
	{name: "single-transaction", args: []string{"--single-transaction"}, rows: true},
	{name: "routines-triggers-events", args: []string{"--routines", "--triggers", "--events"}, rows: true, routines: true},
	{name: "hex-blob", args: []string{"--hex-blob", "--routines"}, rows: true, routines: true},
	{name: "complete-insert-one-row-each", args: []string{"--complete-insert", "--extended-insert=FALSE"}, rows: true},
	{name: "no-data", args: []string{"--no-data"}},
	{name: "where", args: []string{"--where=id > 100"}, rows: true, where: "id > 100", tables: []string{"alltypes"}},
	{name: "order-by-primary-replace", args: []string{"--order-by-primary", "--replace", "--skip-comments", "--single-transaction", "--quick"}, rows: true},
}

// tool returns the path of the first of names on PATH, skipping the test
// when none is installed.
func tool(t *testing.T, names ...string) string {
	t.Helper()
	for _, name := range names {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	t.Skipf("%s not installed (Debian: apt-get install mariadb-client)", names[0])
	return ""
}

// runTool runs prog against the server at host:port as root, with stdin,
// and returns its standard output; it fails the test when prog fails.
func runTool(t *testing.T, prog, host, port, stdin string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	argv := append([]string{"-h", host, "-P", port, "-u", "root"}, args...)
	cmd := exec.CommandContext(ctx, prog, argv...)
	cmd.Stdin = strings.NewReader(stdin)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s %v: %v\n%s", filepath.Base(prog), argv, err, errOut.String())
	}
	return out.String()
}

// dumpSchema returns the statements that fill the test database.
func dumpSchema(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "dump", "schema.sql"))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestDumpRestore dumps the test database with each option set and
// restores the dump into a new database of the same server.
func TestDumpRestore(t *testing.T) {
	dump := tool(t, "mariadb-dump", "mysqldump")
	client := mariadbClient(t)
	s := startServer(t, "")
	host, port := s.HostPort()
	mustExec(t, s.Open(""), "CREATE DATABASE dumpdb")
	runTool(t, client, host, port, dumpSchema(t), "dumpdb")
	src := s.Open("dumpdb")
	want := snapshot(t, src)
	for i, set := range dumpOptionSets {
		t.Run(set.name, func(t *testing.T) {
			args := append(append(append([]string{}, set.args...), "dumpdb"), set.tables...)
			out := runTool(t, dump, host, port, "", args...)
			db := fmt.Sprintf("restored%d", i)
			mustExec(t, s.Open(""), "CREATE DATABASE "+db)
			runTool(t, client, host, port, out, db)
			got := snapshot(t, s.Open(db))
			exp := dumped(t, want, src, set.rows, set.where, set.routines, set.tables)
			compareSnapshots(t, exp, got, false)
		})
	}
}

// TestDumpFromMariaDB restores into percdb a dump MariaDB makes of the
// test database, and compares the rows with MariaDB's.
func TestDumpFromMariaDB(t *testing.T) {
	dump := tool(t, "mariadb-dump", "mysqldump")
	client := mariadbClient(t)
	if os.Getenv(testserver.EnvMariaDB) == "" {
		t.Skipf("%s not set: no MariaDB to dump", testserver.EnvMariaDB)
	}
	cfg := startMariaDB(t)
	mhost, mport, _ := strings.Cut(cfg.Addr, ":")
	runTool(t, client, mhost, mport, "CREATE DATABASE dumpdb CHARACTER SET utf8mb4 COLLATE utf8mb4_general_ci")
	runTool(t, client, mhost, mport, dumpSchema(t), "dumpdb")
	cfg.DBName = "dumpdb"
	mdb, err := sql.Open("mysql", cfg.FormatDSN())
	if err != nil {
		t.Fatal(err)
	}
	defer mdb.Close()
	want := snapshot(t, mdb)

	s := startServer(t, "")
	host, port := s.HostPort()
	mustExec(t, s.Open(""), "CREATE DATABASE fromm")
	for _, args := range [][]string{nil, {"--single-transaction", "--routines", "--triggers"}} {
		out := runTool(t, dump, mhost, mport, "", append(append([]string{}, args...), "dumpdb")...)
		runTool(t, client, host, port, out, "fromm")
		compareSnapshots(t, want, snapshot(t, s.Open("fromm")), true)
	}
}

// dbSnapshot is what a database holds, by object: "rows t" (the rows of
// table t in order, each cell hex-encoded), "create t" (SHOW CREATE TABLE
// or VIEW), "trigger x", "procedure p".
type dbSnapshot map[string]string

// snapshot reads db's tables, views, triggers and procedures.
func snapshot(t *testing.T, db *sql.DB) dbSnapshot {
	t.Helper()
	out := dbSnapshot{}
	for _, r := range queryRows(t, db, "SHOW FULL TABLES") {
		name, kind := r[0], r[1]
		if kind == "VIEW" {
			out["create "+name] = queryRows(t, db, "SHOW CREATE VIEW `"+name+"`")[0][1]
			continue
		}
		out["create "+name] = queryRows(t, db, "SHOW CREATE TABLE `"+name+"`")[0][1]
		out["rows "+name] = hexRows(t, db, "SELECT * FROM `"+name+"` ORDER BY 1, 2")
	}
	for _, r := range queryRows(t, db, "SELECT TRIGGER_NAME, ACTION_STATEMENT FROM information_schema.TRIGGERS WHERE TRIGGER_SCHEMA = DATABASE()") {
		out["trigger "+r[0]] = r[1]
	}
	for _, r := range queryRows(t, db, "SELECT ROUTINE_NAME, ROUTINE_DEFINITION FROM information_schema.ROUTINES WHERE ROUTINE_SCHEMA = DATABASE()") {
		out["procedure "+r[0]] = r[1]
	}
	return out
}

// dumped returns what a dump of the database src, whose snapshot is
// want, holds: no rows (rows false) or those where selects, no procedures
// unless routines, and only tables when some are named.
func dumped(t *testing.T, want dbSnapshot, src *sql.DB, rows bool, where string, routines bool, tables []string) dbSnapshot {
	t.Helper()
	out := dbSnapshot{}
	for k, v := range want {
		kind, name, _ := strings.Cut(k, " ")
		switch {
		case kind == "procedure" && !routines:
		case len(tables) > 0 && (kind != "rows" && kind != "create" || !slices.Contains(tables, name)):
		case kind == "rows" && !rows:
			out[k] = ""
		case kind == "rows" && where != "":
			out[k] = hexRows(t, src, "SELECT * FROM `"+name+"` WHERE "+where+" ORDER BY 1, 2")
		default:
			out[k] = v
		}
	}
	return out
}

// hexRows returns the rows of q, one line each, every value hex-encoded
// (NULL as NULL), so that binary data compares exactly.
func hexRows(t *testing.T, db *sql.DB, q string) string {
	t.Helper()
	rows, err := db.Query(q)
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	defer rows.Close()
	cols, _ := rows.Columns()
	var lines []string
	for rows.Next() {
		vals := make([]sql.RawBytes, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			t.Fatal(err)
		}
		cells := make([]string, len(vals))
		for i, v := range vals {
			cells[i] = "NULL"
			if v != nil {
				cells[i] = fmt.Sprintf("%x", []byte(v))
			}
		}
		lines = append(lines, strings.Join(cells, " "))
	}
	if err := rows.Err(); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return strings.Join(lines, "\n")
}

// compareSnapshots reports each object whose content differs. With
// rowsOnly (snapshots of different servers), only rows are compared, and
// two cells that are the same number written differently (-2.25e100 and
// -2.25e+100) are equal.
func compareSnapshots(t *testing.T, want, got dbSnapshot, rowsOnly bool) {
	t.Helper()
	keys := map[string]bool{}
	for k := range want {
		keys[k] = true
	}
	for k := range got {
		keys[k] = true
	}
	var sorted []string
	for k := range keys {
		if !rowsOnly || strings.HasPrefix(k, "rows ") {
			sorted = append(sorted, k)
		}
	}
	sort.Strings(sorted)
	for _, k := range sorted {
		w, inWant := want[k]
		g, inGot := got[k]
		switch {
		case !inWant:
			t.Errorf("%s: restored but not in the source", k)
		case !inGot:
			t.Errorf("%s: not restored", k)
		case w != g && !(rowsOnly && sameNumbers(w, g)):
			if strings.HasPrefix(k, "rows ") {
				w, g = unhexLines(w), unhexLines(g)
			}
			t.Errorf("%s differs:\n got %s\nwant %s", k, g, w)
		}
	}
}

// sameNumbers reports whether two hexRows answers differ only in how
// their numbers are written.
func sameNumbers(a, b string) bool {
	al, bl := strings.Split(a, "\n"), strings.Split(b, "\n")
	if len(al) != len(bl) {
		return false
	}
	for i := range al {
		ac, bc := strings.Split(al[i], " "), strings.Split(bl[i], " ")
		if len(ac) != len(bc) {
			return false
		}
		for j := range ac {
			if ac[j] == bc[j] {
				continue
			}
			x, xerr := strconv.ParseFloat(unhex(ac[j]), 64)
			y, yerr := strconv.ParseFloat(unhex(bc[j]), 64)
			if xerr != nil || yerr != nil || x != y {
				return false
			}
		}
	}
	return true
}

// unhex decodes a hexRows cell; NULL stays NULL.
func unhex(cell string) string {
	var b []byte
	if _, err := fmt.Sscanf(cell, "%x", &b); err != nil {
		return cell
	}
	return string(b)
}

// unhexLines writes hexRows lines readably, for a failure's message.
func unhexLines(s string) string {
	var out []string
	for _, line := range strings.Split(s, "\n") {
		var cells []string
		for _, c := range strings.Split(line, " ") {
			cells = append(cells, strconv.Quote(unhex(c)))
		}
		out = append(out, strings.Join(cells, ","))
	}
	return strings.Join(out, "\n    ")
}
