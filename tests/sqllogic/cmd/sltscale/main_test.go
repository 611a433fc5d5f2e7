package main

import (
	"bytes"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/percdb/percdb/tests/sqllogic"
)

const sample = `hash-threshold 8

statement ok
CREATE TABLE tab0(pk INTEGER PRIMARY KEY, col0 INTEGER, col1 FLOAT, col2 TEXT, col3 INTEGER, col4 FLOAT, col5 TEXT)

statement ok
INSERT INTO tab0 VALUES(0,544,473.59,'lupfg',846,31.38,'crmer')

statement ok
INSERT INTO tab0 VALUES(1,551,716.92,'sxtsd',562,145.36,'xxacr')

statement ok
CREATE TABLE tab1(pk INTEGER PRIMARY KEY, col0 INTEGER, col1 FLOAT, col2 TEXT, col3 INTEGER, col4 FLOAT, col5 TEXT)

statement ok
INSERT INTO tab1 SELECT * FROM tab0

query I rowsort
SELECT pk FROM tab1 WHERE col0 > 5
----
0
1
`

// TestScale checks that the rewritten file parses, keeps every other
// record in order, and has the asked number of tab0 rows in place of the
// file's own.
func TestScale(t *testing.T) {
	out, err := scale([]byte(sample), 50, rand.New(rand.NewPCG(1, 0)))
	if err != nil {
		t.Fatal(err)
	}
	if n := bytes.Count(out, tab0Insert); n != 50 {
		t.Fatalf("%d tab0 rows, want 50", n)
	}
	if bytes.Contains(out, []byte("'lupfg'")) {
		t.Fatal("the file's own rows are still there")
	}
	recs, err := sqllogic.Parse(bytes.NewReader(out))
	if err != nil {
		t.Fatal(err)
	}
	// CREATE, 50 INSERTs, CREATE, INSERT ... SELECT, the query.
	if len(recs) != 54 {
		t.Fatalf("%d records, want 54", len(recs))
	}
	if !strings.Contains(string(out), "INSERT INTO tab1 SELECT * FROM tab0\n\nquery I rowsort") {
		t.Fatalf("records around tab0's rows changed:\n%s", out)
	}
	if _, err := scale([]byte("statement ok\nCREATE TABLE t(a INT)\n"), 5, rand.New(rand.NewPCG(1, 0))); err == nil {
		t.Fatal("a file without tab0 rows was scaled")
	}
}
