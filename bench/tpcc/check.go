package tpcc

import (
	"context"
	"database/sql"
	"fmt"
	"math/big"
	"slices"
	"strings"
	"time"
)

// Check is one consistency condition of clause 3.3.2: two sides, each a set
// of (key, value) pairs computed from the database, that must agree on
// every key.
type Check struct {
	// ID is the clause, e.g. "3.3.2.1"; Text says what it demands.
	ID, Text string
	// InitialOnly marks a condition that holds only for the initial
	// population (3.3.2.11: deliveries change it).
	InitialOnly bool
	// ZeroMissing makes a key present on one side only compare against 0
	// (the sides are sums, and an empty sum is 0); otherwise it fails.
	ZeroMissing bool
	// Left and Right compute the two sides.
	Left, Right source
}

// values maps a key (the key columns joined with "/") to a value.
type values map[string]*big.Rat

// source computes one side of a check.
type source func(ctx context.Context, db *sql.DB) (values, error)

// query is a source from one SQL query whose last column is the value and
// whose other columns are the key. A key returned twice is summed.
func query(q string) source {
	return func(ctx context.Context, db *sql.DB) (values, error) {
		return queryValues(ctx, db, q, 1)
	}
}

// queryValues runs q and adds sign * value per key.
func queryValues(ctx context.Context, db *sql.DB, q string, sign int64) (values, error) {
	rows, err := db.QueryContext(ctx, q)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", q, err)
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", q, err)
	}
	out := values{}
	raw := make([]sql.NullString, len(cols))
	dest := make([]any, len(cols))
	for i := range raw {
		dest[i] = &raw[i]
	}
	for rows.Next() {
		if err := rows.Scan(dest...); err != nil {
			return nil, fmt.Errorf("%s: %w", q, err)
		}
		key := make([]string, len(cols)-1)
		for i := range key {
			key[i] = raw[i].String
		}
		k := strings.Join(key, "/")
		v := raw[len(cols)-1]
		if !v.Valid {
			return nil, fmt.Errorf("%s: NULL value for key %s", q, k)
		}
		r, ok := new(big.Rat).SetString(v.String)
		if !ok {
			return nil, fmt.Errorf("%s: value %q for key %s is not a number", q, v.String, k)
		}
		r.Mul(r, big.NewRat(sign, 1))
		if prev, ok := out[k]; ok {
			r.Add(r, prev)
		}
		out[k] = r
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", q, err)
	}
	return out, nil
}

// deliveredPerCustomer is, per customer (w/d/c), the sum of OL_AMOUNT of
// the delivered order lines of the customer's orders, minus, when
// minusHistory, the sum of the customer's H_AMOUNT. The join of ORDERS and
// ORDER-LINE is made here rather than by the server, so that the check
// measures the data, not the server's join planning (the scan and
// analytics benchmark times the server's version of it).
func deliveredPerCustomer(minusHistory bool) source {
	return func(ctx context.Context, db *sql.DB) (values, error) {
		customerOf := map[string]string{}
		rows, err := db.QueryContext(ctx, "SELECT o_w_id, o_d_id, o_id, o_c_id FROM orders")
		if err != nil {
			return nil, fmt.Errorf("orders: %w", err)
		}
		for rows.Next() {
			var w, d, o, c string
			if err := rows.Scan(&w, &d, &o, &c); err != nil {
				rows.Close()
				return nil, fmt.Errorf("orders: %w", err)
			}
			customerOf[w+"/"+d+"/"+o] = w + "/" + d + "/" + c
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return nil, fmt.Errorf("orders: %w", err)
		}
		perOrder, err := queryValues(ctx, db, "SELECT ol_w_id, ol_d_id, ol_o_id, SUM(ol_amount) FROM order_line WHERE ol_delivery_d IS NOT NULL GROUP BY ol_w_id, ol_d_id, ol_o_id", 1)
		if err != nil {
			return nil, err
		}
		out := values{}
		for o, v := range perOrder {
			c, ok := customerOf[o]
			if !ok {
				return nil, fmt.Errorf("order lines of order %s, which does not exist", o)
			}
			if prev, ok := out[c]; ok {
				v = new(big.Rat).Add(prev, v)
			}
			out[c] = v
		}
		if minusHistory {
			hist, err := queryValues(ctx, db, "SELECT h_c_w_id, h_c_d_id, h_c_id, SUM(h_amount) FROM history GROUP BY h_c_w_id, h_c_d_id, h_c_id", -1)
			if err != nil {
				return nil, err
			}
			for c, v := range hist {
				if prev, ok := out[c]; ok {
					v = new(big.Rat).Add(prev, v)
				}
				out[c] = v
			}
		}
		return out, nil
	}
}

// Checks returns the consistency conditions 3.3.2.1 to 3.3.2.12 for a
// database of scale sc.
func Checks(sc Scale) []Check {
	return []Check{
		{ID: "3.3.2.1", Text: "W_YTD = sum(D_YTD) per warehouse",
			Left:  query("SELECT w_id, w_ytd FROM warehouse"),
			Right: query("SELECT d_w_id, SUM(d_ytd) FROM district GROUP BY d_w_id")},
		{ID: "3.3.2.2", Text: "D_NEXT_O_ID - 1 = max(O_ID) per district",
			Left:  query("SELECT d_w_id, d_id, d_next_o_id - 1 FROM district"),
			Right: query("SELECT o_w_id, o_d_id, MAX(o_id) FROM orders GROUP BY o_w_id, o_d_id")},
		{ID: "3.3.2.2", Text: "D_NEXT_O_ID - 1 = max(NO_O_ID) per district",
			Left:  query("SELECT d_w_id, d_id, d_next_o_id - 1 FROM district"),
			Right: query("SELECT no_w_id, no_d_id, MAX(no_o_id) FROM new_order GROUP BY no_w_id, no_d_id")},
		{ID: "3.3.2.3", Text: "max(NO_O_ID) - min(NO_O_ID) + 1 = rows in NEW-ORDER per district",
			Left:  query("SELECT no_w_id, no_d_id, MAX(no_o_id) - MIN(no_o_id) + 1 FROM new_order GROUP BY no_w_id, no_d_id"),
			Right: query("SELECT no_w_id, no_d_id, COUNT(*) FROM new_order GROUP BY no_w_id, no_d_id")},
		{ID: "3.3.2.4", Text: "sum(O_OL_CNT) = rows in ORDER-LINE per district",
			Left:  query("SELECT o_w_id, o_d_id, SUM(o_ol_cnt) FROM orders GROUP BY o_w_id, o_d_id"),
			Right: query("SELECT ol_w_id, ol_d_id, COUNT(*) FROM order_line GROUP BY ol_w_id, ol_d_id")},
		{ID: "3.3.2.5", Text: "O_CARRIER_ID is NULL exactly for the orders with a NEW-ORDER row",
			Left:  query("SELECT o_w_id, o_d_id, o_id, 1 FROM orders WHERE o_carrier_id IS NULL"),
			Right: query("SELECT no_w_id, no_d_id, no_o_id, 1 FROM new_order")},
		{ID: "3.3.2.6", Text: "O_OL_CNT = rows in ORDER-LINE per order",
			Left:  query("SELECT o_w_id, o_d_id, o_id, o_ol_cnt FROM orders"),
			Right: query("SELECT ol_w_id, ol_d_id, ol_o_id, COUNT(*) FROM order_line GROUP BY ol_w_id, ol_d_id, ol_o_id")},
		{ID: "3.3.2.7", Text: "OL_DELIVERY_D is NULL exactly on the lines of orders with O_CARRIER_ID NULL",
			Left:  query("SELECT o_w_id, o_d_id, o_id, o_ol_cnt FROM orders WHERE o_carrier_id IS NULL"),
			Right: query("SELECT ol_w_id, ol_d_id, ol_o_id, COUNT(*) FROM order_line WHERE ol_delivery_d IS NULL GROUP BY ol_w_id, ol_d_id, ol_o_id")},
		{ID: "3.3.2.8", Text: "W_YTD = sum(H_AMOUNT) per warehouse",
			Left:  query("SELECT w_id, w_ytd FROM warehouse"),
			Right: query("SELECT h_w_id, SUM(h_amount) FROM history GROUP BY h_w_id")},
		{ID: "3.3.2.9", Text: "D_YTD = sum(H_AMOUNT) per district",
			Left:  query("SELECT d_w_id, d_id, d_ytd FROM district"),
			Right: query("SELECT h_w_id, h_d_id, SUM(h_amount) FROM history GROUP BY h_w_id, h_d_id")},
		{ID: "3.3.2.10", Text: "C_BALANCE = sum(delivered OL_AMOUNT) - sum(H_AMOUNT) per customer", ZeroMissing: true,
			Left:  query("SELECT c_w_id, c_d_id, c_id, c_balance FROM customer"),
			Right: deliveredPerCustomer(true)},
		{ID: "3.3.2.11", Text: fmt.Sprintf("rows in ORDER - rows in NEW-ORDER = %d per district", sc.firstNew()-1), InitialOnly: true,
			Left:  query("SELECT o_w_id, o_d_id, COUNT(*) FROM orders GROUP BY o_w_id, o_d_id"),
			Right: query(fmt.Sprintf("SELECT no_w_id, no_d_id, COUNT(*) + %d FROM new_order GROUP BY no_w_id, no_d_id", sc.firstNew()-1))},
		{ID: "3.3.2.12", Text: "C_BALANCE + C_YTD_PAYMENT = sum(delivered OL_AMOUNT) per customer", ZeroMissing: true,
			Left:  query("SELECT c_w_id, c_d_id, c_id, c_balance + c_ytd_payment FROM customer"),
			Right: deliveredPerCustomer(false)},
	}
}

// CheckResult is the outcome of one Check.
type CheckResult struct {
	ID, Text string
	// Status is "pass", "FAIL", "error", "timeout", "skipped" (after a
	// timeout) or "n/a" (an InitialOnly check after a run).
	Status string
	// Detail says what differed, or why it could not be run.
	Detail string
	Took   time.Duration
}

// Passed reports whether the check held or did not apply.
func (r CheckResult) Passed() bool { return r.Status == "pass" || r.Status == "n/a" }

// maxMismatches bounds the differing keys quoted in a failed check.
const maxMismatches = 3

// RunChecks runs the checks on db, each bounded by timeout (0: none).
// initial says the database is as loaded, with no transaction run on it.
// After a check times out the rest are skipped: a server that cannot
// answer one in time would otherwise hold the caller for every one.
func RunChecks(ctx context.Context, db *sql.DB, checks []Check, initial bool, timeout time.Duration) []CheckResult {
	var out []CheckResult
	timedOut := false
	for _, c := range checks {
		r := CheckResult{ID: c.ID, Text: c.Text}
		if c.InitialOnly && !initial {
			r.Status, r.Detail = "n/a", "holds for the initial population only"
			out = append(out, r)
			continue
		}
		if timedOut {
			r.Status, r.Detail = "skipped", "an earlier check timed out"
			out = append(out, r)
			continue
		}
		began := time.Now()
		cctx, cancel := ctx, context.CancelFunc(func() {})
		if timeout > 0 {
			cctx, cancel = context.WithTimeout(ctx, timeout)
		}
		r.Status, r.Detail = c.run(cctx, db)
		cancel()
		r.Took = time.Since(began)
		if r.Status == "error" && cctx.Err() != nil && ctx.Err() == nil {
			r.Status, r.Detail = "timeout", fmt.Sprintf("not finished in %v", timeout)
			timedOut = true
		}
		out = append(out, r)
	}
	return out
}

func (c Check) run(ctx context.Context, db *sql.DB) (status, detail string) {
	left, err := c.Left(ctx, db)
	if err != nil {
		return "error", err.Error()
	}
	right, err := c.Right(ctx, db)
	if err != nil {
		return "error", err.Error()
	}
	var diffs []string
	zero := new(big.Rat)
	keys := make(map[string]bool, len(left))
	for k := range left {
		keys[k] = true
	}
	for k := range right {
		keys[k] = true
	}
	sorted := make([]string, 0, len(keys))
	for k := range keys {
		sorted = append(sorted, k)
	}
	slices.Sort(sorted)
	for _, k := range sorted {
		l, r := left[k], right[k]
		if c.ZeroMissing {
			if l == nil {
				l = zero
			}
			if r == nil {
				r = zero
			}
		}
		switch {
		case l == nil:
			diffs = append(diffs, fmt.Sprintf("%s: only right (%s)", k, r.FloatString(2)))
		case r == nil:
			diffs = append(diffs, fmt.Sprintf("%s: only left (%s)", k, l.FloatString(2)))
		case l.Cmp(r) != 0:
			diffs = append(diffs, fmt.Sprintf("%s: %s <> %s", k, l.FloatString(2), r.FloatString(2)))
		}
	}
	if len(diffs) == 0 {
		return "pass", fmt.Sprintf("%d keys", len(sorted))
	}
	n, more := len(diffs), ""
	if len(diffs) > maxMismatches {
		more = fmt.Sprintf(" and %d more", len(diffs)-maxMismatches)
		diffs = diffs[:maxMismatches]
	}
	return "FAIL", fmt.Sprintf("%d of %d keys differ: %s%s", n, len(sorted), strings.Join(diffs, "; "), more)
}
