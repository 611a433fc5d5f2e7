package sql_test

import (
	"database/sql"
	"fmt"
	"math/rand"
	"strings"
	"testing"
)

// stockLevelSetup creates database sl with TPC-C's order_line and stock
// tables (one warehouse, 1,500 items, three districts of 300 orders of 5
// to 15 lines), analyzed, and returns a pool of one connection using it.
func stockLevelSetup(t *testing.T) *sql.DB {
	t.Helper()
	srv := startServer(t, true)
	db := openDB(t, srv, "")
	mustExec(t, db, "CREATE DATABASE sl", "USE sl",
		"CREATE TABLE order_line (ol_w_id INT NOT NULL, ol_d_id INT NOT NULL, ol_o_id INT NOT NULL, ol_number INT NOT NULL, "+
			"ol_i_id INT NOT NULL, PRIMARY KEY (ol_w_id, ol_d_id, ol_o_id, ol_number))",
		"CREATE TABLE stock (s_w_id INT NOT NULL, s_i_id INT NOT NULL, s_quantity INT NOT NULL, s_data VARCHAR(50), PRIMARY KEY (s_w_id, s_i_id))")
	r := rand.New(rand.NewSource(5))
	var vals []string
	for i := 1; i <= 1500; i++ {
		vals = append(vals, fmt.Sprintf("(1, %d, %d, 'data%d')", i, 10+r.Intn(91), i))
	}
	mustExec(t, db, "INSERT INTO sl.stock VALUES "+strings.Join(vals, ","))
	vals = vals[:0]
	for d := 1; d <= 3; d++ {
		for o := 1; o <= 300; o++ {
			for l := 1; l <= 5+r.Intn(11); l++ {
				vals = append(vals, fmt.Sprintf("(1, %d, %d, %d, %d)", d, o, l, 1+r.Intn(1500)))
			}
		}
	}
	mustExec(t, db, "INSERT INTO sl.order_line VALUES "+strings.Join(vals, ","), "ANALYZE TABLE sl.order_line, sl.stock")
	db.SetMaxOpenConns(1)
	mustExec(t, db, "USE sl")
	return db
}

// TestExplainLookupJoinCost checks that a join on the whole primary key of
// a large inner table, filtered by a column of no index, is planned as a
// lookup per outer row (eq_ref) rather than a hash join that reads the
// whole inner table: TPC-C's Stock-Level, the order lines of 20 orders
// joined to the warehouse's stock WHERE s_quantity < ?.
func TestExplainLookupJoinCost(t *testing.T) {
	db := stockLevelSetup(t)
	checkPlans(t, db, []planCase{
		{"SELECT COUNT(DISTINCT s_i_id) FROM order_line, stock WHERE ol_w_id = 1 AND ol_d_id = 2 AND ol_o_id < 281 AND ol_o_id >= 261 " +
			"AND s_w_id = 1 AND s_i_id = ol_i_id AND s_quantity < 15",
			[]explainRow{{"order_line", "range", "PRIMARY"}, {"stock", "eq_ref", "PRIMARY"}}},
		{"SELECT ol_o_id, s_data FROM order_line JOIN stock ON s_w_id = ol_w_id AND s_i_id = ol_i_id " +
			"WHERE ol_w_id = 1 AND ol_d_id = 3 AND ol_o_id = 7 AND s_quantity > 50",
			[]explainRow{{"order_line", "ref", "PRIMARY"}, {"stock", "eq_ref", "PRIMARY"}}},
	})
}

// TestExplainMergeOnKeyPrefix: a self-join whose equality on a key prefix
// of few values (w: 10) would make a merge join pair every row of a group
// (10^6 pairs here) is looked up on the whole primary key instead
// (eq_ref), the other equality (a.k = b.id) completing the key.
func TestExplainMergeOnKeyPrefix(t *testing.T) {
	srv := startServer(t, true)
	db := openDB(t, srv, "")
	mustExec(t, db, "CREATE DATABASE mp", "USE mp",
		"CREATE TABLE t (w INT NOT NULL, id INT NOT NULL, k INT, q INT, PRIMARY KEY (w, id), KEY (k))")
	r := rand.New(rand.NewSource(3))
	var vals []string
	for w := 1; w <= 10; w++ {
		for id := 1; id <= 300; id++ {
			vals = append(vals, fmt.Sprintf("(%d, %d, %d, %d)", w, id, 1+r.Intn(3000), r.Intn(100)))
		}
	}
	mustExec(t, db, "INSERT INTO mp.t VALUES "+strings.Join(vals, ","), "ANALYZE TABLE mp.t")
	db.SetMaxOpenConns(1)
	mustExec(t, db, "USE mp")
	checkPlans(t, db, []planCase{
		{"SELECT a.w, a.id, b.q FROM t a, t b WHERE a.k = b.id AND b.w = a.w AND a.q = 3 LIMIT 20",
			[]explainRow{{"a", "ALL", "NULL"}, {"b", "eq_ref", "PRIMARY"}}},
	})
}
