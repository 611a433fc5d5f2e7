package sql_test

import (
	"fmt"
	"math/rand"
	"strings"
	"testing"
)

// TestManyTableJoin joins many tables, FROM clause shuffled, on a tree of
// equalities between a non-indexed column of one table and the primary
// key of another, the shape of sqllogictest's select5: a chain of 15
// tables (GMS costs join orders) and a tree of 24 (more than the 15 it
// costs). Without
// percdb's greedy join order GMS keeps much of the FROM order and cross
// joins tables that share no predicate with the ones before them: 10^k
// rows for k such tables. The test checks the plan has no cross join and
// the answer is the one computed here by following the keys.
func TestManyTableJoin(t *testing.T) {
	t.Run("chain of 15", func(t *testing.T) { testManyTableJoin(t, 15, true) })
	t.Run("tree of 24", func(t *testing.T) { testManyTableJoin(t, 24, false) })
}

func testManyTableJoin(t *testing.T, tables int, chain bool) {
	const rows = 10
	srv := startServer(t, true)
	db := openDB(t, srv, "")
	r := rand.New(rand.NewSource(1))
	mustExec := func(q string) {
		t.Helper()
		if _, err := db.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	mustExec("CREATE DATABASE j")
	mustExec("USE j")
	db.SetMaxOpenConns(1) // USE holds for the one connection

	// b[k][a] is column b of table k in the row whose key a is.
	b := make([][]int, tables+1)
	for k := 1; k <= tables; k++ {
		mustExec(fmt.Sprintf("CREATE TABLE t%d (a%d INT PRIMARY KEY, b%d INT, x%d VARCHAR(20))", k, k, k, k))
		b[k] = make([]int, rows+1)
		perm := r.Perm(rows)
		var vals []string
		for a := 1; a <= rows; a++ {
			b[k][a] = perm[a-1] + 1
			vals = append(vals, fmt.Sprintf("(%d, %d, 't%d r%d')", a, b[k][a], k, a))
		}
		mustExec(fmt.Sprintf("INSERT INTO t%d VALUES %s", k, strings.Join(vals, ", ")))
	}

	// A tree over the tables: table k (k > 1) hangs off parent p < k
	// through b_p = a_k, so each row of p finds one row of k, and (b
	// being a permutation) each row of k one row of p. A chain when
	// chain is set. The constant picks a row of the last table, a leaf:
	// the join is read from there up through the non-indexed b columns
	// and down through the primary keys.
	parent := make([]int, tables+1)
	var conds []string
	for k := 2; k <= tables; k++ {
		parent[k] = 1 + r.Intn(k-1)
		if chain {
			parent[k] = k - 1
		}
		conds = append(conds, fmt.Sprintf("b%d = a%d", parent[k], k))
	}
	r.Shuffle(len(conds), func(i, j int) { conds[i], conds[j] = conds[j], conds[i] })
	const leafKey = 4
	conds = append(conds, fmt.Sprintf("a%d = %d", tables, leafKey))
	from := make([]string, tables)
	for k := 1; k <= tables; k++ {
		from[k-1] = fmt.Sprintf("t%d", k)
	}
	r.Shuffle(len(from), func(i, j int) { from[i], from[j] = from[j], from[i] })
	q := fmt.Sprintf("SELECT x%d, x%d, x%d FROM %s WHERE %s", 1, tables/2, tables,
		strings.Join(from, ", "), strings.Join(conds, " AND "))

	// Follow the keys up from the leaf's row to t1, then down.
	key := make([]int, tables+1)
	for k, a := tables, leafKey; ; {
		key[k] = a
		if k == 1 {
			break
		}
		p := parent[k]
		for pa := 1; pa <= rows; pa++ {
			if b[p][pa] == a {
				k, a = p, pa
				break
			}
		}
	}
	for k := 2; k <= tables; k++ {
		key[k] = b[parent[k]][key[parent[k]]]
	}
	if key[tables] != leafKey {
		t.Fatalf("test's own walk of the keys is wrong: t%d key %d, want %d", tables, key[tables], leafKey)
	}
	want := fmt.Sprintf("t1 r%d|t%d r%d|t%d r%d", key[1], tables/2, key[tables/2], tables, key[tables])

	var plan strings.Builder
	rs, err := db.Query("EXPLAIN PLAN " + q)
	if err != nil {
		t.Fatalf("EXPLAIN PLAN: %v", err)
	}
	for rs.Next() {
		var line string
		if err := rs.Scan(&line); err != nil {
			t.Fatal(err)
		}
		plan.WriteString(line + "\n")
	}
	if err := rs.Err(); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(plan.String(), "CrossJoin") {
		t.Errorf("plan of a connected %d-table join has a cross join:\n%s", tables, plan.String())
	}

	rs, err = db.Query(q)
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	var got []string
	for rs.Next() {
		var x1, x2, x3 string
		if err := rs.Scan(&x1, &x2, &x3); err != nil {
			t.Fatal(err)
		}
		got = append(got, x1+"|"+x2+"|"+x3)
	}
	if err := rs.Err(); err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0] != want {
		t.Errorf("%s\n= %q, want [%q]", q, got, want)
	}
}
