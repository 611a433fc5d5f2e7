package tpcc

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// LoadOptions configure Load.
type LoadOptions struct {
	Scale Scale
	// Loaders is how many connections insert in parallel. Default: 4.
	Loaders int
	// Seed makes the population reproducible; the same seed must be given
	// to the run for the NURand constants to match (clause 2.1.6.1).
	Seed int64
	// Now is the load's timestamp (C_SINCE, H_DATE, O_ENTRY_D). Default:
	// the current time.
	Now time.Time
	// Progress, when set, is called after every statement with the rows
	// inserted so far, from the loaders' goroutines at the same time.
	Progress func(rows int64)
}

// maxBatchRows and maxBatchBytes bound one multi-row INSERT.
const (
	maxBatchRows  = 500
	maxBatchBytes = 256 << 10
)

// loadUnit is one independent part of the population, with its own random
// source so that the data does not depend on which loader runs it.
type loadUnit struct {
	name string
	run  func(ctx context.Context, ins *inserter, r *Rand) error
}

// Load populates the tables of Schema, already created and empty in the
// database db is connected to, following clause 4.3.3.1 at opts.Scale.
// It returns the rows inserted.
func Load(ctx context.Context, db *sql.DB, opts LoadOptions) (int64, error) {
	s := opts.Scale
	if err := s.Validate(); err != nil {
		return 0, err
	}
	if opts.Loaders <= 0 {
		opts.Loaders = 4
	}
	if opts.Now.IsZero() {
		opts.Now = time.Now()
	}
	now := quote(opts.Now.UTC().Format(time.DateTime))
	consts := NewConstants(opts.Seed)
	var units []loadUnit
	const chunk = 1000
	for lo := 1; lo <= s.Items; lo += chunk {
		hi := min(lo+chunk-1, s.Items)
		units = append(units, loadUnit{fmt.Sprintf("item %d-%d", lo, hi), func(ctx context.Context, ins *inserter, r *Rand) error {
			return loadItems(ctx, ins, r, lo, hi)
		}})
	}
	for w := 1; w <= s.Warehouses; w++ {
		units = append(units, loadUnit{fmt.Sprintf("warehouse %d", w), func(ctx context.Context, ins *inserter, r *Rand) error {
			return loadWarehouse(ctx, ins, r, s, w)
		}})
		for lo := 1; lo <= s.Items; lo += chunk {
			hi := min(lo+chunk-1, s.Items)
			units = append(units, loadUnit{fmt.Sprintf("stock %d %d-%d", w, lo, hi), func(ctx context.Context, ins *inserter, r *Rand) error {
				return loadStock(ctx, ins, r, w, lo, hi)
			}})
		}
		for d := 1; d <= s.Districts; d++ {
			units = append(units, loadUnit{fmt.Sprintf("customer %d/%d", w, d), func(ctx context.Context, ins *inserter, r *Rand) error {
				return loadCustomers(ctx, ins, r, s, w, d, now)
			}}, loadUnit{fmt.Sprintf("orders %d/%d", w, d), func(ctx context.Context, ins *inserter, r *Rand) error {
				return loadOrders(ctx, ins, r, s, w, d, now)
			}})
		}
	}

	var rows atomic.Int64
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	next := make(chan int)
	var wg sync.WaitGroup
	for range opts.Loaders {
		wg.Add(1)
		go func() {
			defer wg.Done()
			conn, err := db.Conn(ctx)
			if err != nil {
				cancel(fmt.Errorf("tpcc load: %w", err))
				return
			}
			defer conn.Close()
			for i := range next {
				u := units[i]
				ins := &inserter{conn: conn, rows: &rows, progress: opts.Progress}
				if err := u.run(ctx, ins, NewRand(opts.Seed*1_000_003+int64(i), consts)); err != nil {
					cancel(fmt.Errorf("tpcc load %s: %w", u.name, err))
					return
				}
			}
		}()
	}
feed:
	for i := range units {
		select {
		case next <- i:
		case <-ctx.Done():
			break feed
		}
	}
	close(next)
	wg.Wait()
	return rows.Load(), context.Cause(ctx)
}

func loadItems(ctx context.Context, ins *inserter, r *Rand, lo, hi int) error {
	b := ins.batch("item", "i_id, i_im_id, i_name, i_price, i_data")
	for id := lo; id <= hi; id++ {
		if err := b.add(ctx, strconv.Itoa(id), strconv.Itoa(r.Int(1, 10000)), quote(r.AString(14, 24)),
			r.Fixed(1, 100, 2), quote(r.data())); err != nil {
			return err
		}
	}
	return b.flush(ctx)
}

// address returns street 1, street 2, city, state and zip, quoted.
func (r *Rand) address() []string {
	return []string{quote(r.AString(10, 20)), quote(r.AString(10, 20)), quote(r.AString(10, 20)),
		quote(r.AString(2, 2)), quote(r.zip())}
}

func loadWarehouse(ctx context.Context, ins *inserter, r *Rand, s Scale, w int) error {
	b := ins.batch("warehouse", "w_id, w_name, w_street_1, w_street_2, w_city, w_state, w_zip, w_tax, w_ytd")
	vals := append([]string{strconv.Itoa(w), quote(r.AString(6, 10))}, r.address()...)
	// D_YTD is the 10.00 of the district's customers' first payment
	// (30,000.00 at the standard scale, 3.3.2.9), W_YTD the sum of its
	// districts' (3.3.2.1).
	dYTD := formatUnits(1000*s.Customers, 2)
	if err := b.add(ctx, append(vals, r.Fixed(0, 0.2, 4), formatUnits(1000*s.Customers*s.Districts, 2))...); err != nil {
		return err
	}
	if err := b.flush(ctx); err != nil {
		return err
	}
	b = ins.batch("district", "d_id, d_w_id, d_name, d_street_1, d_street_2, d_city, d_state, d_zip, d_tax, d_ytd, d_next_o_id")
	for d := 1; d <= s.Districts; d++ {
		vals := append([]string{strconv.Itoa(d), strconv.Itoa(w), quote(r.AString(6, 10))}, r.address()...)
		if err := b.add(ctx, append(vals, r.Fixed(0, 0.2, 4), dYTD, strconv.Itoa(s.Customers+1))...); err != nil {
			return err
		}
	}
	return b.flush(ctx)
}

func loadStock(ctx context.Context, ins *inserter, r *Rand, w, lo, hi int) error {
	b := ins.batch("stock", "s_i_id, s_w_id, s_quantity, s_dist_01, s_dist_02, s_dist_03, s_dist_04, s_dist_05, "+
		"s_dist_06, s_dist_07, s_dist_08, s_dist_09, s_dist_10, s_ytd, s_order_cnt, s_remote_cnt, s_data")
	for id := lo; id <= hi; id++ {
		vals := []string{strconv.Itoa(id), strconv.Itoa(w), strconv.Itoa(r.Int(10, 100))}
		for range 10 {
			vals = append(vals, quote(r.AString(24, 24)))
		}
		if err := b.add(ctx, append(vals, "0", "0", "0", quote(r.data()))...); err != nil {
			return err
		}
	}
	return b.flush(ctx)
}

func loadCustomers(ctx context.Context, ins *inserter, r *Rand, s Scale, w, d int, now string) error {
	b := ins.batch("customer", "c_id, c_d_id, c_w_id, c_first, c_middle, c_last, c_street_1, c_street_2, c_city, c_state, c_zip, "+
		"c_phone, c_since, c_credit, c_credit_lim, c_discount, c_balance, c_ytd_payment, c_payment_cnt, c_delivery_cnt, c_data")
	h := ins.batch("history", "h_c_id, h_c_d_id, h_c_w_id, h_d_id, h_w_id, h_date, h_amount, h_data")
	ws, ds := strconv.Itoa(w), strconv.Itoa(d)
	for c := 1; c <= s.Customers; c++ {
		cs := strconv.Itoa(c)
		credit := "'GC'"
		if r.Int(1, 10) == 1 {
			credit = "'BC'"
		}
		vals := append([]string{cs, ds, ws, quote(r.AString(8, 16)), "'OE'", quote(r.lastNameLoad(c, s.Customers))}, r.address()...)
		vals = append(vals, quote(r.NString(16, 16)), now, credit, "50000.00", r.Fixed(0, 0.5, 4),
			"-10.00", "10.00", "1", "0", quote(r.AString(300, 500)))
		if err := b.add(ctx, vals...); err != nil {
			return err
		}
		if err := h.add(ctx, cs, ds, ws, ds, ws, now, "10.00", quote(r.AString(12, 24))); err != nil {
			return err
		}
	}
	return errors.Join(b.flush(ctx), h.flush(ctx))
}

func loadOrders(ctx context.Context, ins *inserter, r *Rand, s Scale, w, d int, now string) error {
	o := ins.batch("orders", "o_id, o_d_id, o_w_id, o_c_id, o_entry_d, o_carrier_id, o_ol_cnt, o_all_local")
	ol := ins.batch("order_line", "ol_o_id, ol_d_id, ol_w_id, ol_number, ol_i_id, ol_supply_w_id, ol_delivery_d, ol_quantity, ol_amount, ol_dist_info")
	no := ins.batch("new_order", "no_o_id, no_d_id, no_w_id")
	ws, ds := strconv.Itoa(w), strconv.Itoa(d)
	// O_C_ID is a random permutation of the customers.
	perm := r.r.Perm(s.Customers)
	for oid := 1; oid <= s.Customers; oid++ {
		os := strconv.Itoa(oid)
		delivered := oid < s.firstNew()
		carrier, deliveryD := "NULL", "NULL"
		if delivered {
			carrier, deliveryD = strconv.Itoa(r.Int(1, 10)), now
		}
		lines := r.Int(5, 15)
		if err := o.add(ctx, os, ds, ws, strconv.Itoa(perm[oid-1]+1), now, carrier, strconv.Itoa(lines), "1"); err != nil {
			return err
		}
		for n := 1; n <= lines; n++ {
			amount := "0.00"
			if !delivered {
				amount = r.Fixed(0.01, 9999.99, 2)
			}
			if err := ol.add(ctx, os, ds, ws, strconv.Itoa(n), strconv.Itoa(r.Int(1, s.Items)), ws, deliveryD,
				"5", amount, quote(r.AString(24, 24))); err != nil {
				return err
			}
		}
		if !delivered {
			if err := no.add(ctx, os, ds, ws); err != nil {
				return err
			}
		}
	}
	return errors.Join(o.flush(ctx), ol.flush(ctx), no.flush(ctx))
}

// inserter sends multi-row INSERTs on one connection.
type inserter struct {
	conn     *sql.Conn
	rows     *atomic.Int64
	progress func(int64)
}

func (ins *inserter) batch(table, columns string) *batch {
	return &batch{ins: ins, head: "INSERT INTO " + table + " (" + columns + ") VALUES "}
}

// batch accumulates the rows of one multi-row INSERT.
type batch struct {
	ins  *inserter
	head string
	sb   strings.Builder
	n    int
}

// add appends a row of SQL literals, sending the statement when it is full.
func (b *batch) add(ctx context.Context, vals ...string) error {
	if b.n == 0 {
		b.sb.WriteString(b.head)
	} else {
		b.sb.WriteByte(',')
	}
	b.sb.WriteByte('(')
	b.sb.WriteString(strings.Join(vals, ","))
	b.sb.WriteByte(')')
	b.n++
	if b.n >= maxBatchRows || b.sb.Len() >= maxBatchBytes {
		return b.flush(ctx)
	}
	return nil
}

// loadAttempts bounds the retries of one load statement on a retryable
// error (a server may report a conflict on its own bookkeeping).
const loadAttempts = 5

func (b *batch) flush(ctx context.Context) error {
	if b.n == 0 {
		return nil
	}
	q := b.sb.String()
	var err error
	for range loadAttempts {
		if _, err = b.ins.conn.ExecContext(ctx, q); err == nil || !Retryable(err) {
			break
		}
	}
	if err != nil {
		return fmt.Errorf("insert %d rows: %w", b.n, err)
	}
	total := b.ins.rows.Add(int64(b.n))
	if b.ins.progress != nil {
		b.ins.progress(total)
	}
	b.sb.Reset()
	b.n = 0
	return nil
}

// quote renders s as a SQL string literal.
func quote(s string) string {
	var sb strings.Builder
	sb.Grow(len(s) + 2)
	sb.WriteByte('\'')
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '\'', '\\':
			sb.WriteByte('\\')
			sb.WriteByte(c)
		default:
			sb.WriteByte(c)
		}
	}
	sb.WriteByte('\'')
	return sb.String()
}
