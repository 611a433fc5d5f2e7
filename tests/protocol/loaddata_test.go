package protocol

import (
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/percdb/percdb/tests/isolation/testserver"
)

// localFile writes content to a file of the test's and lets go-sql-driver
// send it for LOAD DATA LOCAL INFILE.
func localFile(t *testing.T, name, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	mysql.RegisterLocalFile(path)
	t.Cleanup(func() { mysql.DeregisterLocalFile(path) })
	return path
}

// openOne opens a pool of one connection to s, so that session state
// (transactions, variables) holds from one statement to the next.
func openOne(t *testing.T, s *testserver.Server, opts string) *sql.DB {
	t.Helper()
	db, err := sql.Open("mysql", withOptions(s.DSN, opts))
	if err != nil {
		t.Fatal(err)
	}
	db.SetMaxOpenConns(1)
	t.Cleanup(func() { db.Close() })
	return db
}

// rowsOf returns the rows of query as lines of values joined by |.
func rowsOf(t *testing.T, db *sql.DB, query string) string {
	t.Helper()
	rows, err := db.Query(query)
	if err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	return scanRows(t, rows)
}

// scanRows reads and closes rows, returning them as lines of values
// joined by |, NULL for NULL.
func scanRows(t *testing.T, rows *sql.Rows) string {
	t.Helper()
	defer rows.Close()
	cols, _ := rows.Columns()
	var out []string
	for rows.Next() {
		vals := make([]sql.NullString, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			t.Fatal(err)
		}
		parts := make([]string, len(vals))
		for i, v := range vals {
			parts[i] = "NULL"
			if v.Valid {
				parts[i] = v.String
			}
		}
		out = append(out, strings.Join(parts, "|"))
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return strings.Join(out, "\n")
}

// mustExec runs each statement, failing the test on an error.
func mustExec(t *testing.T, db *sql.DB, stmts ...string) {
	t.Helper()
	for _, q := range stmts {
		if _, err := db.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
}

// TestLoadDataLocal loads files in the formats LOAD DATA describes
// (FIELDS TERMINATED, ENCLOSED and ESCAPED BY, LINES STARTING and
// TERMINATED BY, IGNORE n LINES, a column list with user variables and
// SET), inside transactions that commit and roll back.
func TestLoadDataLocal(t *testing.T) {
	forEachServer(t, func(t *testing.T, s *testserver.Server) {
		db := openOne(t, s, "")
		mustExec(t, db, "CREATE TABLE ld (id INT PRIMARY KEY, name VARCHAR(40), note VARCHAR(40), v DECIMAL(10,2))")

		for _, c := range []struct {
			what, file, content, load, want string
		}{{
			// MySQL's default format: tab-separated, \N for NULL,
			// backslash escapes.
			what: "tab-separated", file: "rows.tsv",
			content: "1\tone\t\\N\t1.50\n2\ttab\\there\tnew\\nline\t-2\n3\tback\\\\slash\t\t0\n",
			want:    "1|one|NULL|1.50\n2|tab\there|new\nline|-2.00\n3|back\\slash||0.00",
		}, {
			// CSV with a header line, quotes, CRLF, a column list with a
			// user variable and SET.
			what: "CSV", file: "rows.csv",
			content: "id,name,v\r\n10,\"Smith, J\",\"3.25\"\r\n11,plain,4\r\n12,\"say \"\"hi\"\"\",5\r\n",
			load:    "FIELDS TERMINATED BY ',' OPTIONALLY ENCLOSED BY '\"' LINES TERMINATED BY '\\r\\n' IGNORE 1 LINES (id, @n, v) SET name = UPPER(@n), note = CONCAT('from ', @n)",
			want:    "10|SMITH, J|from Smith, J|3.25\n11|PLAIN|from plain|4.00\n12|SAY \"HI\"|from say \"hi\"|5.00",
		}, {
			// LINES STARTING BY skips lines without the prefix and what
			// comes before it; another escape character.
			what: "prefixed", file: "prefixed.txt",
			content: "xxx20|a\nskip this line\nfooxxx21|b^|c\n",
			load:    "FIELDS TERMINATED BY '|' ESCAPED BY '^' LINES STARTING BY 'xxx' (id, name)",
			want:    "20|a|NULL|NULL\n21|b|c|NULL|NULL",
		}} {
			f := localFile(t, c.file, c.content)
			mustExec(t, db, "DELETE FROM ld", "LOAD DATA LOCAL INFILE '"+f+"' INTO TABLE ld "+c.load)
			if got := rowsOf(t, db, "SELECT id, name, note, v FROM ld ORDER BY id"); got != c.want {
				t.Errorf("%s load:\n%s\nwant\n%s", c.what, got, c.want)
			}
		}

		// In the session's transaction: rolled back, then committed.
		rows := localFile(t, "tx.tsv", "100\ta\n101\tb\n")
		mustExec(t, db, "DELETE FROM ld", "BEGIN", "LOAD DATA LOCAL INFILE '"+rows+"' INTO TABLE ld (id, name)")
		if got := rowsOf(t, db, "SELECT COUNT(*) FROM ld"); got != "2" {
			t.Errorf("inside the transaction: %s rows, want 2", got)
		}
		mustExec(t, db, "ROLLBACK")
		if got := rowsOf(t, db, "SELECT COUNT(*) FROM ld"); got != "0" {
			t.Errorf("after ROLLBACK: %s rows, want 0", got)
		}
		mustExec(t, db, "SET autocommit = 0", "LOAD DATA LOCAL INFILE '"+rows+"' INTO TABLE ld (id, name)", "COMMIT", "SET autocommit = 1")
		if got := rowsOf(t, db, "SELECT id, name FROM ld ORDER BY id"); got != "100|a\n101|b" {
			t.Errorf("after COMMIT: %s", got)
		}
	})
}

// TestLoadDataLocalDisabled turns local_infile off: LOAD DATA LOCAL fails
// with MySQL's 3948 and loads nothing; on again, it loads.
func TestLoadDataLocalDisabled(t *testing.T) {
	forEachServer(t, func(t *testing.T, s *testserver.Server) {
		db := openOne(t, s, "")
		mustExec(t, db, "CREATE TABLE ldoff (id INT PRIMARY KEY)")
		f := localFile(t, "ids.txt", "1\n2\n")
		mustExec(t, db, "SET GLOBAL local_infile = 0")
		defer mustExec(t, db, "SET GLOBAL local_infile = 1")
		_, err := db.Exec("LOAD DATA LOCAL INFILE '" + f + "' INTO TABLE ldoff")
		var me *mysql.MySQLError
		want := uint16(3948) // ER_CLIENT_LOCAL_FILES_DISABLED
		if s.Flavor == testserver.MariaDB {
			want = 4166 // MariaDB's ER_LOAD_INFILE_CAPABILITY_DISABLED
		}
		if !errors.As(err, &me) || me.Number != want {
			t.Fatalf("LOAD DATA LOCAL with local_infile off: %v, want error %d", err, want)
		}
		mustExec(t, db, "SET GLOBAL local_infile = 1", "LOAD DATA LOCAL INFILE '"+f+"' INTO TABLE ldoff")
		if got := rowsOf(t, db, "SELECT COUNT(*) FROM ldoff"); got != "2" {
			t.Errorf("%s rows, want 2", got)
		}
	})
}

// TestLoadDataLocalLarge loads 100,000 rows and logs how long it took
// (not asserted: the machine may be loaded).
func TestLoadDataLocalLarge(t *testing.T) {
	if testing.Short() {
		t.Skip("100,000 rows")
	}
	forEachServer(t, func(t *testing.T, s *testserver.Server) {
		const n = 100_000
		var b strings.Builder
		for i := range n {
			fmt.Fprintf(&b, "%d,name %d,%d.5\n", i, i, i%1000)
		}
		f := localFile(t, "large.csv", b.String())
		db := openOne(t, s, "")
		mustExec(t, db, "CREATE TABLE ldbig (id INT PRIMARY KEY, name VARCHAR(40), v DECIMAL(10,2))")
		start := time.Now()
		res, err := db.Exec("LOAD DATA LOCAL INFILE '" + f + "' INTO TABLE ldbig FIELDS TERMINATED BY ','")
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%d rows loaded in %v", n, time.Since(start))
		if got, _ := res.RowsAffected(); got != n {
			t.Errorf("%d rows affected, want %d", got, n)
		}
		if got := rowsOf(t, db, "SELECT COUNT(*), MIN(id), MAX(id), MAX(name), MAX(v) FROM ldbig"); got != fmt.Sprintf("%d|0|%d|name 99999|999.50", n, n-1) {
			t.Errorf("loaded table: %s", got)
		}
	})
}
