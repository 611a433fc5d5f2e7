package crash

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strings"
)

// Checker compares the workload's tables with a History of what the
// clients were told.
type Checker struct {
	// DB's default database is Cfg.Database.
	DB  *sql.DB
	Cfg Config
}

// Report is what one check found.
type Report struct {
	// Violations describe every broken rule; empty means the data is
	// consistent with the history.
	Violations []string
	// Txns is how many transactions of the history were checked, by
	// outcome.
	Txns map[Outcome]int
	// Present is how many transactions of unknown outcome were found
	// committed (the others were found absent).
	UnknownPresent int
	// Rows is the number of rows read per table.
	Rows map[string]int
}

// OK reports whether no rule was broken.
func (r *Report) OK() bool { return len(r.Violations) == 0 }

// String lists the violations (the first 30) or says the check passed.
func (r *Report) String() string {
	if r.OK() {
		return fmt.Sprintf("consistent: %d committed, %d failed, %d unknown (%d of them committed) transactions checked; rows %v",
			r.Txns[Committed], r.Txns[Failed], r.Txns[Unknown], r.UnknownPresent, r.Rows)
	}
	const show = 30
	v := r.Violations
	more := ""
	if len(v) > show {
		more = fmt.Sprintf("\n... and %d more", len(v)-show)
		v = v[:show]
	}
	return fmt.Sprintf("%d violations:\n%s%s", len(r.Violations), strings.Join(v, "\n"), more)
}

func (r *Report) violate(format string, args ...any) {
	r.Violations = append(r.Violations, fmt.Sprintf(format, args...))
}

// snapshot is the content of the workload's tables as one transaction
// read it.
type snapshot struct {
	accounts  map[int64]int64
	transfers map[int64]transferRow
	items     map[int64]itemRow
	orders    map[int64]orderRow
	lines     map[int64][]lineRow // by order id
	counters  map[int64]counterRow
	// byIndex are the rows read through secondary indexes, to compare
	// with the table scans.
	transfersBySrc map[int64][]int64 // account -> transfer ids
	itemsByWorker  map[int64][]int64 // worker -> item ids
	ordersByWorker map[int64][]int64 // worker -> order ids
}

type transferRow struct{ src, dst, amount int64 }
type itemRow struct {
	worker, seq int64
	pad         string
}
type orderRow struct{ worker, nlines, total int64 }
type lineRow struct {
	line, qty int64
	pad       string
}
type counterRow struct{ orders, qty int64 }

// Check reads every table of the workload in one read-only transaction
// and checks, against h:
//   - a committed transaction is there, all of it; a failed one is not
//     there at all; one of unknown outcome is all there or not at all;
//   - nothing is there that no client committed;
//   - each account's balance is its initial balance plus the transfers in
//     the ledger, and the balances sum to Accounts*InitialBalance;
//   - every order has exactly its lines, every line its order, and each
//     worker's counters row sums its orders;
//   - reading through each secondary index finds the same rows as the
//     table scan, and the unique key of items holds.
//
// An error means the tables could not be read; broken rules are in the
// Report.
func (c *Checker) Check(ctx context.Context, h *History) (*Report, error) {
	cfg := c.Cfg.withDefaults()
	s, err := c.read(ctx)
	if err != nil {
		return nil, err
	}
	r := &Report{Txns: make(map[Outcome]int), Rows: map[string]int{
		"accounts": len(s.accounts), "transfers": len(s.transfers), "items": len(s.items),
		"orders": len(s.orders), "order_lines": countLines(s.lines), "counters": len(s.counters),
	}}
	txns := h.Txns()
	for _, id := range sortedIDs(txns) {
		t := txns[id]
		r.Txns[t.Outcome]++
		present, whole, detail := s.find(t, cfg)
		switch {
		case present && !whole:
			r.violate("%s %d (%s): partly visible or changed: %s", t.Kind, t.ID, t.Outcome, detail)
		case t.Outcome == Committed && !present:
			r.violate("%s %d: acknowledged as committed but lost", t.Kind, t.ID)
		case t.Outcome == Failed && present:
			r.violate("%s %d: failed at its client but visible", t.Kind, t.ID)
		case t.Outcome == Unknown && present:
			r.UnknownPresent++
		}
	}
	s.checkUnrecorded(txns, r)
	s.checkBank(cfg, r)
	s.checkOrders(r)
	s.checkIndexes(r)
	return r, nil
}

// find reports whether t's writes are in the snapshot: present if any
// row of t is, whole if all of them are and equal what t wrote (else
// detail says what differs).
func (s *snapshot) find(t Txn, cfg Config) (present, whole bool, detail string) {
	switch t.Kind {
	case Transfer:
		row, ok := s.transfers[t.ID]
		if want := (transferRow{int64(t.From), int64(t.To), t.Amount}); ok && row != want {
			return true, false, fmt.Sprintf("ledger row %+v, want %+v", row, want)
		}
		// The balances are checked against the ledger as a whole.
		return ok, ok, ""
	case Item:
		row, ok := s.items[t.ID]
		if ok && (row.worker != int64(t.Worker) || row.seq != t.Seq || row.pad != itemPad(t.ID, cfg.ItemPad)) {
			return true, false, fmt.Sprintf("row worker %d seq %d pad of %d bytes, want worker %d seq %d pad of %d bytes",
				row.worker, row.seq, len(row.pad), t.Worker, t.Seq, cfg.ItemPad)
		}
		return ok, ok, ""
	case Order:
		o, hasOrder := s.orders[t.ID]
		lines := s.lines[t.ID]
		if !hasOrder && len(lines) == 0 {
			return false, false, ""
		}
		whole = hasOrder && o == orderRow{int64(t.Worker), int64(len(t.Lines)), t.Total()} && len(lines) == len(t.Lines)
		for i, l := range lines {
			if i >= len(t.Lines) || l.line != int64(i+1) || l.qty != t.Lines[i].Qty || l.pad != linePad(t.ID, i+1, t.Lines[i].Pad) {
				whole = false
			}
		}
		if !whole {
			detail = fmt.Sprintf("order row found %v %+v with %d lines, want %d lines of total %d", hasOrder, o, len(lines), len(t.Lines), t.Total())
		}
		return true, whole, detail
	}
	return false, false, ""
}

// checkUnrecorded reports rows that no transaction of the history wrote.
func (s *snapshot) checkUnrecorded(txns map[int64]Txn, r *Report) {
	unrecorded := func(table string, ids []int64, kind Kind) {
		for _, id := range ids {
			if t, ok := txns[id]; !ok || t.Kind != kind {
				r.violate("%s row %d: no client committed it", table, id)
			}
		}
	}
	unrecorded("transfers", sortedIDs(s.transfers), Transfer)
	unrecorded("items", sortedIDs(s.items), Item)
	unrecorded("orders", sortedIDs(s.orders), Order)
}

// checkBank checks the balances against the ledger.
func (s *snapshot) checkBank(cfg Config, r *Report) {
	want := make(map[int64]int64, cfg.Accounts)
	for i := range cfg.Accounts {
		want[int64(i)] = cfg.InitialBalance
	}
	for _, t := range s.transfers {
		want[t.src] -= t.amount
		want[t.dst] += t.amount
	}
	var sum int64
	for _, id := range sortedIDs(want) {
		got, ok := s.accounts[id]
		if !ok {
			r.violate("account %d: missing", id)
			continue
		}
		sum += got
		if got != want[id] {
			r.violate("account %d: balance %d, the ledger says %d", id, got, want[id])
		}
	}
	if len(s.accounts) != cfg.Accounts {
		r.violate("%d accounts, want %d", len(s.accounts), cfg.Accounts)
	}
	if total := int64(cfg.Accounts) * cfg.InitialBalance; sum != total {
		r.violate("balances sum to %d, want %d", sum, total)
	}
}

// checkOrders checks orders, lines and counters against each other.
func (s *snapshot) checkOrders(r *Report) {
	type sums struct{ orders, qty int64 }
	byWorker := make(map[int64]sums)
	for _, id := range sortedIDs(s.orders) {
		o := s.orders[id]
		lines := s.lines[id]
		var qty int64
		for i, l := range lines {
			qty += l.qty
			if l.line != int64(i+1) {
				r.violate("order %d: line numbers %v", id, lineNumbers(lines))
				break
			}
		}
		if int64(len(lines)) != o.nlines || qty != o.total {
			r.violate("order %d: %d lines of total %d, the order row says %d lines of total %d", id, len(lines), qty, o.nlines, o.total)
		}
		w := byWorker[o.worker]
		w.orders++
		w.qty += o.total
		byWorker[o.worker] = w
	}
	for _, id := range sortedIDs(s.lines) {
		if _, ok := s.orders[id]; !ok {
			r.violate("order %d: %d lines without their order", id, len(s.lines[id]))
		}
	}
	for _, w := range sortedIDs(s.counters) {
		c := s.counters[w]
		if got := byWorker[w]; got.orders != c.orders || got.qty != c.qty {
			r.violate("counters of worker %d: %d orders of qty %d, the orders table has %d of qty %d", w, c.orders, c.qty, got.orders, got.qty)
		}
	}
	for _, w := range sortedIDs(byWorker) {
		if _, ok := s.counters[w]; !ok {
			r.violate("worker %d has orders but no counters row", w)
		}
	}
}

// checkIndexes compares the rows read through secondary indexes with the
// table scans, and checks the unique key of items.
func (s *snapshot) checkIndexes(r *Report) {
	compare := func(index string, key int64, viaIndex []int64, want []int64) {
		slices.Sort(viaIndex)
		slices.Sort(want)
		if !slices.Equal(viaIndex, want) {
			r.violate("index %s, key %d: the index finds %v, the table scan %v", index, key, viaIndex, want)
		}
	}
	bySrc := make(map[int64][]int64)
	for id, t := range s.transfers {
		bySrc[t.src] = append(bySrc[t.src], id)
	}
	for src := range s.accounts {
		compare("transfers.src", src, s.transfersBySrc[src], bySrc[src])
	}
	itemsByWorker := make(map[int64][]int64)
	seqs := make(map[[2]int64]int64)
	for id, it := range s.items {
		itemsByWorker[it.worker] = append(itemsByWorker[it.worker], id)
		k := [2]int64{it.worker, it.seq}
		if other, dup := seqs[k]; dup {
			r.violate("items %d and %d share the unique key (worker %d, seq %d)", other, id, it.worker, it.seq)
		}
		seqs[k] = id
	}
	ordersByWorker := make(map[int64][]int64)
	for id, o := range s.orders {
		ordersByWorker[o.worker] = append(ordersByWorker[o.worker], id)
	}
	for w := range s.counters {
		compare("items.worker_seq", w, s.itemsByWorker[w], itemsByWorker[w])
		compare("orders.worker", w, s.ordersByWorker[w], ordersByWorker[w])
	}
}

func lineNumbers(lines []lineRow) []int64 {
	out := make([]int64, len(lines))
	for i, l := range lines {
		out[i] = l.line
	}
	return out
}

func countLines(m map[int64][]lineRow) int {
	n := 0
	for _, l := range m {
		n += len(l)
	}
	return n
}

// read reads the tables in one read-only transaction, so that the
// snapshot is consistent even if writers run.
func (c *Checker) read(ctx context.Context) (*snapshot, error) {
	tx, err := c.DB.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return nil, fmt.Errorf("check: begin: %w", err)
	}
	defer tx.Rollback()
	s := &snapshot{
		accounts: make(map[int64]int64), transfers: make(map[int64]transferRow), items: make(map[int64]itemRow),
		orders: make(map[int64]orderRow), lines: make(map[int64][]lineRow), counters: make(map[int64]counterRow),
		transfersBySrc: make(map[int64][]int64), itemsByWorker: make(map[int64][]int64), ordersByWorker: make(map[int64][]int64),
	}
	scans := []struct {
		query string
		args  []any
		row   func(scan func(...any) error) error
	}{
		{"SELECT id, bal FROM accounts", nil, func(scan func(...any) error) error {
			var id, bal int64
			err := scan(&id, &bal)
			s.accounts[id] = bal
			return err
		}},
		{"SELECT id, src, dst, amount FROM transfers", nil, func(scan func(...any) error) error {
			var id int64
			var t transferRow
			err := scan(&id, &t.src, &t.dst, &t.amount)
			s.transfers[id] = t
			return err
		}},
		{"SELECT id, worker, seq, pad FROM items", nil, func(scan func(...any) error) error {
			var id int64
			var it itemRow
			err := scan(&id, &it.worker, &it.seq, &it.pad)
			s.items[id] = it
			return err
		}},
		{"SELECT id, worker, nlines, total FROM orders", nil, func(scan func(...any) error) error {
			var id int64
			var o orderRow
			err := scan(&id, &o.worker, &o.nlines, &o.total)
			s.orders[id] = o
			return err
		}},
		{"SELECT order_id, line, qty, pad FROM order_lines ORDER BY order_id, line", nil, func(scan func(...any) error) error {
			var id int64
			var l lineRow
			err := scan(&id, &l.line, &l.qty, &l.pad)
			s.lines[id] = append(s.lines[id], l)
			return err
		}},
		{"SELECT worker, orders, qty FROM counters", nil, func(scan func(...any) error) error {
			var w int64
			var c counterRow
			err := scan(&w, &c.orders, &c.qty)
			s.counters[w] = c
			return err
		}},
	}
	for _, sc := range scans {
		if err := queryRows(ctx, tx, sc.query, sc.args, sc.row); err != nil {
			return nil, err
		}
	}
	// Point and range reads that the planner serves from the secondary
	// indexes (an equality on their first column).
	byIndex := func(query string, keys map[int64]bool, into map[int64][]int64) error {
		for k := range keys {
			if err := queryRows(ctx, tx, query, []any{k}, func(scan func(...any) error) error {
				var id int64
				err := scan(&id)
				into[k] = append(into[k], id)
				return err
			}); err != nil {
				return err
			}
		}
		return nil
	}
	accounts, workers := keySet(s.accounts), keySet(s.counters)
	if err := byIndex("SELECT id FROM transfers WHERE src = ?", accounts, s.transfersBySrc); err != nil {
		return nil, err
	}
	if err := byIndex("SELECT id FROM items WHERE worker = ?", workers, s.itemsByWorker); err != nil {
		return nil, err
	}
	if err := byIndex("SELECT id FROM orders WHERE worker = ?", workers, s.ordersByWorker); err != nil {
		return nil, err
	}
	if err := tx.Commit(); err != nil {
		return nil, fmt.Errorf("check: commit the read transaction: %w", err)
	}
	return s, nil
}

// keySet returns the keys of m.
func keySet[V any](m map[int64]V) map[int64]bool {
	out := make(map[int64]bool, len(m))
	for k := range m {
		out[k] = true
	}
	return out
}

// queryRows runs a query and calls row for each result row.
func queryRows(ctx context.Context, tx *sql.Tx, query string, args []any, row func(scan func(...any) error) error) error {
	rows, err := tx.QueryContext(ctx, query, args...)
	if err != nil {
		return fmt.Errorf("check: %s: %w", query, err)
	}
	defer rows.Close()
	for rows.Next() {
		if err := row(rows.Scan); err != nil {
			return fmt.Errorf("check: %s: %w", query, err)
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("check: %s: %w", query, err)
	}
	return nil
}
