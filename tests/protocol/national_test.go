package protocol

import (
	"database/sql"
	"strings"
	"testing"

	"github.com/percdb/percdb/tests/isolation/testserver"
)

// TestNationalLiteralPrepared prepares statements with N'...' literals
// through go-sql-driver's server-side prepared statements: vitess, which
// parses a prepared statement before percdb sees it, refused N'...' with
// 1064 (as GMS's parser did for a query); MySQL reads it as a utf8mb3
// string.
func TestNationalLiteralPrepared(t *testing.T) {
	forEachServer(t, func(t *testing.T, s *testserver.Server) {
		db, err := sql.Open("mysql", s.DSN)
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		var got, cs string
		if err := db.QueryRow("SELECT CONCAT(?, N'b'), CHARSET(n'x')", "a").Scan(&got, &cs); err != nil {
			t.Fatal(err)
		}
		if got != "ab" || cs != "utf8mb3" {
			t.Errorf("CONCAT(?, N'b'), CHARSET(n'x') = %q, %q; want ab, utf8mb3", got, cs)
		}
		if _, err := db.Exec("CREATE TABLE nl (id INT PRIMARY KEY, s VARCHAR(10))"); err != nil {
			t.Fatal(err)
		}
		if _, err := db.Exec("INSERT INTO nl VALUES (?, N'x')", 1); err != nil {
			t.Fatalf("INSERT: %v", err)
		}
		// In a multi-statement query, where a statement's end is an
		// offset into the text as written.
		mdb, err := sql.Open("mysql", s.DSN+"?multiStatements=true")
		if err != nil {
			t.Fatal(err)
		}
		defer mdb.Close()
		rows, err := mdb.Query("SELECT N'a'; SELECT n'b' AS x; SELECT 'c'")
		if err != nil {
			t.Fatal(err)
		}
		var vals []string
		for {
			for rows.Next() {
				var v string
				if err := rows.Scan(&v); err != nil {
					t.Fatal(err)
				}
				vals = append(vals, v)
			}
			if !rows.NextResultSet() {
				break
			}
		}
		if err := rows.Close(); err != nil || strings.Join(vals, ",") != "a,b,c" {
			t.Errorf("multi-statement query: %q, %v; want a,b,c", vals, err)
		}
		var id int
		if err := db.QueryRow("SELECT id FROM nl WHERE s = N'x' AND id = ?", 1).Scan(&id); err != nil || id != 1 {
			t.Errorf("SELECT: %d, %v; want 1", id, err)
		}
	})
}
