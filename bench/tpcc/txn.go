package tpcc

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
)

// TxnType is one of the five transactions.
type TxnType int

// The five transactions of clause 2, in the order of the mix.
const (
	NewOrder TxnType = iota
	Payment
	OrderStatus
	Delivery
	StockLevel
	numTxnTypes
)

var txnNames = [numTxnTypes]string{"new-order", "payment", "order-status", "delivery", "stock-level"}

// String returns the transaction's name, e.g. "new-order".
func (t TxnType) String() string { return txnNames[t] }

// mixPercent is the standard mix (clause 5.2.3's minimums, with New-Order
// taking the rest): 45/43/4/4/4.
var mixPercent = [numTxnTypes]int{45, 43, 4, 4, 4}

// pick draws a transaction type from the mix.
func (r *Rand) pick() TxnType {
	n := r.Int(1, 100)
	for t, p := range mixPercent {
		if n <= p {
			return TxnType(t)
		}
		n -= p
	}
	return NewOrder
}

// session is one worker's connection with the statements prepared on it.
type session struct {
	db    *sql.DB
	conn  *sql.Conn
	stmts map[string]*sql.Stmt
}

// ensure (re)connects after a lost connection.
func (s *session) ensure(ctx context.Context) error {
	if s.conn != nil {
		return nil
	}
	conn, err := s.db.Conn(ctx)
	if err != nil {
		return fmt.Errorf("connect: %w", err)
	}
	s.conn, s.stmts = conn, map[string]*sql.Stmt{}
	return nil
}

// drop forgets the connection and its statements.
func (s *session) drop() {
	if s.conn == nil {
		return
	}
	for _, st := range s.stmts {
		st.Close()
	}
	s.conn.Close()
	s.conn, s.stmts = nil, nil
}

// stmt returns q prepared on the session's connection, preparing it on
// first use.
func (s *session) stmt(ctx context.Context, q string) (*sql.Stmt, error) {
	if st, ok := s.stmts[q]; ok {
		return st, nil
	}
	st, err := s.conn.PrepareContext(ctx, q)
	if err != nil {
		return nil, fmt.Errorf("prepare %q: %w", q, err)
	}
	s.stmts[q] = st
	return st, nil
}

func (s *session) exec(ctx context.Context, q string, args ...any) (sql.Result, error) {
	st, err := s.stmt(ctx, q)
	if err != nil {
		return nil, err
	}
	res, err := st.ExecContext(ctx, args...)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", q, err)
	}
	return res, nil
}

// row scans the one row of q into dest; sql.ErrNoRows when there is none.
func (s *session) row(ctx context.Context, q string, args []any, dest ...any) error {
	st, err := s.stmt(ctx, q)
	if err != nil {
		return err
	}
	if err := st.QueryRowContext(ctx, args...).Scan(dest...); err != nil {
		if errors.Is(err, sql.ErrNoRows) {
			return err
		}
		return fmt.Errorf("%s: %w", q, err)
	}
	return nil
}

// rows runs q and calls scan for every row.
func (s *session) rows(ctx context.Context, q string, args []any, scan func(*sql.Rows) error) error {
	st, err := s.stmt(ctx, q)
	if err != nil {
		return err
	}
	rs, err := st.QueryContext(ctx, args...)
	if err != nil {
		return fmt.Errorf("%s: %w", q, err)
	}
	defer rs.Close()
	for rs.Next() {
		if err := scan(rs); err != nil {
			return fmt.Errorf("%s: %w", q, err)
		}
	}
	if err := rs.Err(); err != nil {
		return fmt.Errorf("%s: %w", q, err)
	}
	return nil
}

// rollbackTimeout bounds the ROLLBACK sent after a failure, which runs
// even when the run's context is already cancelled.
const rollbackTimeout = 10 * time.Second

// inTxn runs body between BEGIN and COMMIT on the session's connection,
// rolling back when body fails. errRollback from body is returned after a
// successful ROLLBACK.
func (s *session) inTxn(ctx context.Context, body func() error) error {
	if _, err := s.conn.ExecContext(ctx, "BEGIN"); err != nil {
		return fmt.Errorf("BEGIN: %w", err)
	}
	err := body()
	if err == nil {
		if _, err = s.conn.ExecContext(ctx, "COMMIT"); err == nil {
			return nil
		}
		err = fmt.Errorf("COMMIT: %w", err)
	}
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), rollbackTimeout)
	defer cancel()
	if _, rerr := s.conn.ExecContext(rctx, "ROLLBACK"); rerr != nil {
		// The connection is in an unknown state: start afresh.
		s.drop()
		if errors.Is(err, errRollback) {
			return fmt.Errorf("ROLLBACK: %w", rerr)
		}
	}
	return err
}

// txnInput is the input of one transaction, drawn before it starts so that
// a retry runs the same transaction again.
type txnInput interface {
	run(ctx context.Context, s *session) error
}

// draw returns the input of a transaction of type t for a terminal whose
// home is warehouse w, district d.
func (r *Rand) draw(t TxnType, sc Scale, w, d int, stockIN bool) txnInput {
	switch t {
	case NewOrder:
		return r.newOrder(sc, w, stockIN)
	case Payment:
		return r.payment(sc, w)
	case OrderStatus:
		in := orderStatusInput{w: w, d: r.Int(1, sc.Districts)}
		in.cust = r.customer(sc)
		return in
	case Delivery:
		return deliveryInput{w: w, districts: sc.Districts, carrier: r.Int(1, 10)}
	default:
		// The terminal's district is fixed for Stock-Level (clause 2.8.1.2).
		return stockLevelInput{w: w, d: d, threshold: r.Int(10, 20)}
	}
}

// customerRef selects a customer by number or, 60% of the time, by last
// name (clauses 2.5.1.2, 2.6.1.2).
type customerRef struct {
	id   int
	last string
}

func (r *Rand) customer(sc Scale) customerRef {
	if r.Int(1, 100) <= 60 {
		return customerRef{last: r.LastNameRun(sc.Customers)}
	}
	return customerRef{id: r.CustomerID(sc.Customers)}
}

// resolve returns the customer's number: for a last name, the one at
// position ceil(n/2) of the customers of that name sorted by C_FIRST.
func (c customerRef) resolve(ctx context.Context, s *session, w, d int) (int, error) {
	if c.last == "" {
		return c.id, nil
	}
	var ids []int
	err := s.rows(ctx, "SELECT c_id FROM customer WHERE c_w_id = ? AND c_d_id = ? AND c_last = ? ORDER BY c_first",
		[]any{w, d, c.last}, func(rs *sql.Rows) error {
			var id int
			err := rs.Scan(&id)
			ids = append(ids, id)
			return err
		})
	if err != nil {
		return 0, err
	}
	if len(ids) == 0 {
		return 0, errApp(fmt.Sprintf("no customer named %s in district %d/%d", c.last, w, d))
	}
	return ids[(len(ids)+1)/2-1], nil
}

// orderLine is one line of a New-Order's input.
type orderLine struct {
	item, supplyW, qty int
}

type newOrderInput struct {
	w, d, c int
	lines   []orderLine
	stockIN bool
}

func (r *Rand) newOrder(sc Scale, w int, stockIN bool) newOrderInput {
	in := newOrderInput{w: w, d: r.Int(1, sc.Districts), c: r.CustomerID(sc.Customers), stockIN: stockIN}
	n := r.Int(5, 15)
	rollback := r.Int(1, 100) == 1
	for i := range n {
		l := orderLine{item: r.ItemID(sc.Items), supplyW: w, qty: r.Int(1, 10)}
		if sc.Warehouses > 1 && r.Int(1, 100) == 1 {
			for l.supplyW == w {
				l.supplyW = r.Int(1, sc.Warehouses)
			}
		}
		if rollback && i == n-1 {
			l.item = sc.Items + 1 // unused: the transaction rolls back
		}
		in.lines = append(in.lines, l)
	}
	// Stock rows are locked in one global order, as BenchmarkSQL does, so
	// that two New-Orders cannot deadlock on them; the order's lines are a
	// set, so this changes no result.
	slices.SortStableFunc(in.lines, func(a, b orderLine) int {
		if a.supplyW != b.supplyW {
			return a.supplyW - b.supplyW
		}
		return a.item - b.item
	})
	return in
}

// cents parses a DECIMAL(_,2) as an integer number of cents.
func cents(s string) (int, error) {
	whole, frac, _ := strings.Cut(s, ".")
	frac = (frac + "00")[:2]
	neg := strings.HasPrefix(whole, "-")
	n, err := strconv.Atoi(strings.TrimPrefix(whole, "-") + frac)
	if err != nil {
		return 0, fmt.Errorf("decimal %q: %w", s, err)
	}
	if neg {
		n = -n
	}
	return n, nil
}

// stockRow is what New-Order reads of a STOCK row.
type stockRow struct {
	qty  int
	data string
	dist string
}

func (in newOrderInput) run(ctx context.Context, s *session) error {
	return s.inTxn(ctx, func() error {
		var discount, last, credit, wTax, dTax string
		if err := s.row(ctx, "SELECT c_discount, c_last, c_credit FROM customer WHERE c_w_id = ? AND c_d_id = ? AND c_id = ?",
			[]any{in.w, in.d, in.c}, &discount, &last, &credit); err != nil {
			return err
		}
		if err := s.row(ctx, "SELECT w_tax FROM warehouse WHERE w_id = ?", []any{in.w}, &wTax); err != nil {
			return err
		}
		var oid int
		if err := s.row(ctx, "SELECT d_next_o_id, d_tax FROM district WHERE d_w_id = ? AND d_id = ? FOR UPDATE",
			[]any{in.w, in.d}, &oid, &dTax); err != nil {
			return err
		}
		if _, err := s.exec(ctx, "UPDATE district SET d_next_o_id = ? WHERE d_w_id = ? AND d_id = ?", oid+1, in.w, in.d); err != nil {
			return err
		}
		allLocal := 1
		for _, l := range in.lines {
			if l.supplyW != in.w {
				allLocal = 0
			}
		}
		now := time.Now().UTC().Format(time.DateTime)
		if _, err := s.exec(ctx, "INSERT INTO orders (o_id, o_d_id, o_w_id, o_c_id, o_entry_d, o_carrier_id, o_ol_cnt, o_all_local) VALUES (?, ?, ?, ?, ?, NULL, ?, ?)",
			oid, in.d, in.w, in.c, now, len(in.lines), allLocal); err != nil {
			return err
		}
		if _, err := s.exec(ctx, "INSERT INTO new_order (no_o_id, no_d_id, no_w_id) VALUES (?, ?, ?)", oid, in.d, in.w); err != nil {
			return err
		}
		prices := make([]int, len(in.lines))
		for i, l := range in.lines {
			var price, name, data string
			err := s.row(ctx, "SELECT i_price, i_name, i_data FROM item WHERE i_id = ?", []any{l.item}, &price, &name, &data)
			if errors.Is(err, sql.ErrNoRows) {
				return errRollback
			}
			if err != nil {
				return err
			}
			if prices[i], err = cents(price); err != nil {
				return err
			}
		}
		distCol := fmt.Sprintf("s_dist_%02d", in.d)
		var stock map[[2]int]*stockRow
		if in.stockIN {
			var err error
			if stock, err = in.lockStock(ctx, s, distCol); err != nil {
				return err
			}
		}
		for i, l := range in.lines {
			st := stock[[2]int{l.supplyW, l.item}]
			if st == nil {
				st = &stockRow{}
				if err := s.row(ctx, "SELECT s_quantity, s_data, "+distCol+" FROM stock WHERE s_w_id = ? AND s_i_id = ? FOR UPDATE",
					[]any{l.supplyW, l.item}, &st.qty, &st.data, &st.dist); err != nil {
					return fmt.Errorf("stock %d/%d: %w", l.supplyW, l.item, err)
				}
			}
			if st.qty >= l.qty+10 {
				st.qty -= l.qty
			} else {
				st.qty += 91 - l.qty
			}
			remote := 0
			if l.supplyW != in.w {
				remote = 1
			}
			if _, err := s.exec(ctx, "UPDATE stock SET s_quantity = ?, s_ytd = s_ytd + ?, s_order_cnt = s_order_cnt + 1, s_remote_cnt = s_remote_cnt + ? WHERE s_w_id = ? AND s_i_id = ?",
				st.qty, l.qty, remote, l.supplyW, l.item); err != nil {
				return err
			}
			amount := formatUnits(prices[i]*l.qty, 2)
			if _, err := s.exec(ctx, "INSERT INTO order_line (ol_o_id, ol_d_id, ol_w_id, ol_number, ol_i_id, ol_supply_w_id, ol_delivery_d, ol_quantity, ol_amount, ol_dist_info) VALUES (?, ?, ?, ?, ?, ?, NULL, ?, ?, ?)",
				oid, in.d, in.w, i+1, l.item, l.supplyW, l.qty, amount, st.dist); err != nil {
				return err
			}
		}
		return nil
	})
}

// lockStock reads and locks the stock rows of every line with one
// row-constructor IN, the variant of New-Order that leaves the server one
// statement instead of one per line.
func (in newOrderInput) lockStock(ctx context.Context, s *session, distCol string) (map[[2]int]*stockRow, error) {
	stock := map[[2]int]*stockRow{}
	var args []any
	for _, l := range in.lines {
		k := [2]int{l.supplyW, l.item}
		if _, ok := stock[k]; !ok {
			stock[k] = nil
			args = append(args, l.supplyW, l.item)
		}
	}
	q := "SELECT s_w_id, s_i_id, s_quantity, s_data, " + distCol + " FROM stock WHERE (s_w_id, s_i_id) IN (" +
		strings.TrimSuffix(strings.Repeat("(?, ?), ", len(args)/2), ", ") + ") FOR UPDATE"
	err := s.rows(ctx, q, args, func(rs *sql.Rows) error {
		var k [2]int
		st := &stockRow{}
		if err := rs.Scan(&k[0], &k[1], &st.qty, &st.data, &st.dist); err != nil {
			return err
		}
		stock[k] = st
		return nil
	})
	if err != nil {
		return nil, err
	}
	for k, st := range stock {
		if st == nil {
			return nil, errApp(fmt.Sprintf("stock row %d/%d missing", k[0], k[1]))
		}
	}
	return stock, nil
}

type paymentInput struct {
	w, d, cw, cd int
	cust         customerRef
	amount       int // cents
}

func (r *Rand) payment(sc Scale, w int) paymentInput {
	in := paymentInput{w: w, d: r.Int(1, sc.Districts), amount: r.Int(100, 500000)}
	in.cw, in.cd = w, in.d
	// 15% of payments are made at a remote warehouse (clause 2.5.1.2).
	if sc.Warehouses > 1 && r.Int(1, 100) <= 15 {
		for in.cw == w {
			in.cw = r.Int(1, sc.Warehouses)
		}
		in.cd = r.Int(1, sc.Districts)
	}
	in.cust = r.customer(sc)
	return in
}

func (in paymentInput) run(ctx context.Context, s *session) error {
	amount := formatUnits(in.amount, 2)
	return s.inTxn(ctx, func() error {
		if _, err := s.exec(ctx, "UPDATE warehouse SET w_ytd = w_ytd + ? WHERE w_id = ?", amount, in.w); err != nil {
			return err
		}
		var wName, dName string
		var street1, street2, city, state, zip string
		if err := s.row(ctx, "SELECT w_street_1, w_street_2, w_city, w_state, w_zip, w_name FROM warehouse WHERE w_id = ?",
			[]any{in.w}, &street1, &street2, &city, &state, &zip, &wName); err != nil {
			return err
		}
		if _, err := s.exec(ctx, "UPDATE district SET d_ytd = d_ytd + ? WHERE d_w_id = ? AND d_id = ?", amount, in.w, in.d); err != nil {
			return err
		}
		if err := s.row(ctx, "SELECT d_street_1, d_street_2, d_city, d_state, d_zip, d_name FROM district WHERE d_w_id = ? AND d_id = ?",
			[]any{in.w, in.d}, &street1, &street2, &city, &state, &zip, &dName); err != nil {
			return err
		}
		cid, err := in.cust.resolve(ctx, s, in.cw, in.cd)
		if err != nil {
			return err
		}
		var first, middle, last, phone, since, credit, creditLim, discount, balance string
		if err := s.row(ctx, "SELECT c_first, c_middle, c_last, c_street_1, c_street_2, c_city, c_state, c_zip, c_phone, c_since, c_credit, c_credit_lim, c_discount, c_balance FROM customer WHERE c_w_id = ? AND c_d_id = ? AND c_id = ? FOR UPDATE",
			[]any{in.cw, in.cd, cid}, &first, &middle, &last, &street1, &street2, &city, &state, &zip, &phone, &since, &credit, &creditLim, &discount, &balance); err != nil {
			return err
		}
		if credit == "BC" {
			var data string
			if err := s.row(ctx, "SELECT c_data FROM customer WHERE c_w_id = ? AND c_d_id = ? AND c_id = ?",
				[]any{in.cw, in.cd, cid}, &data); err != nil {
				return err
			}
			data = fmt.Sprintf("%d %d %d %d %d %s | %s", cid, in.cd, in.cw, in.d, in.w, amount, data)
			if len(data) > 500 {
				data = data[:500]
			}
			if _, err := s.exec(ctx, "UPDATE customer SET c_balance = c_balance - ?, c_ytd_payment = c_ytd_payment + ?, c_payment_cnt = c_payment_cnt + 1, c_data = ? WHERE c_w_id = ? AND c_d_id = ? AND c_id = ?",
				amount, amount, data, in.cw, in.cd, cid); err != nil {
				return err
			}
		} else if _, err := s.exec(ctx, "UPDATE customer SET c_balance = c_balance - ?, c_ytd_payment = c_ytd_payment + ?, c_payment_cnt = c_payment_cnt + 1 WHERE c_w_id = ? AND c_d_id = ? AND c_id = ?",
			amount, amount, in.cw, in.cd, cid); err != nil {
			return err
		}
		_, err = s.exec(ctx, "INSERT INTO history (h_c_d_id, h_c_w_id, h_c_id, h_d_id, h_w_id, h_date, h_amount, h_data) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
			in.cd, in.cw, cid, in.d, in.w, time.Now().UTC().Format(time.DateTime), amount, wName+"    "+dName)
		return err
	})
}

type orderStatusInput struct {
	w, d int
	cust customerRef
}

func (in orderStatusInput) run(ctx context.Context, s *session) error {
	return s.inTxn(ctx, func() error {
		cid, err := in.cust.resolve(ctx, s, in.w, in.d)
		if err != nil {
			return err
		}
		var balance, first, middle, last string
		if err := s.row(ctx, "SELECT c_balance, c_first, c_middle, c_last FROM customer WHERE c_w_id = ? AND c_d_id = ? AND c_id = ?",
			[]any{in.w, in.d, cid}, &balance, &first, &middle, &last); err != nil {
			return err
		}
		var oid int
		var carrier sql.NullInt64
		var entry string
		err = s.row(ctx, "SELECT o_id, o_carrier_id, o_entry_d FROM orders WHERE o_w_id = ? AND o_d_id = ? AND o_c_id = ? ORDER BY o_id DESC LIMIT 1",
			[]any{in.w, in.d, cid}, &oid, &carrier, &entry)
		if errors.Is(err, sql.ErrNoRows) {
			return errApp(fmt.Sprintf("customer %d/%d/%d has no order", in.w, in.d, cid))
		}
		if err != nil {
			return err
		}
		return s.rows(ctx, "SELECT ol_i_id, ol_supply_w_id, ol_quantity, ol_amount, ol_delivery_d FROM order_line WHERE ol_w_id = ? AND ol_d_id = ? AND ol_o_id = ?",
			[]any{in.w, in.d, oid}, func(rs *sql.Rows) error {
				var item, supply, qty int
				var amount string
				var delivered sql.NullString
				return rs.Scan(&item, &supply, &qty, &amount, &delivered)
			})
	})
}

type deliveryInput struct {
	w, districts, carrier int
}

// run delivers the oldest undelivered order of every district in one
// transaction (clause 2.7.4; the deferred execution of 2.7.2 is not
// modelled: the terminal waits for it).
func (in deliveryInput) run(ctx context.Context, s *session) error {
	return s.inTxn(ctx, func() error {
		now := time.Now().UTC().Format(time.DateTime)
		for d := 1; d <= in.districts; d++ {
			var oid int
			err := s.row(ctx, "SELECT no_o_id FROM new_order WHERE no_w_id = ? AND no_d_id = ? ORDER BY no_o_id LIMIT 1 FOR UPDATE",
				[]any{in.w, d}, &oid)
			if errors.Is(err, sql.ErrNoRows) {
				continue // nothing to deliver in this district (clause 2.7.4.2)
			}
			if err != nil {
				return err
			}
			res, err := s.exec(ctx, "DELETE FROM new_order WHERE no_w_id = ? AND no_d_id = ? AND no_o_id = ?", in.w, d, oid)
			if err != nil {
				return err
			}
			if n, err := res.RowsAffected(); err != nil || n != 1 {
				return errApp(fmt.Sprintf("new_order %d/%d/%d locked FOR UPDATE but %d rows deleted (%v)", in.w, d, oid, n, err))
			}
			var cid int
			if err := s.row(ctx, "SELECT o_c_id FROM orders WHERE o_w_id = ? AND o_d_id = ? AND o_id = ?", []any{in.w, d, oid}, &cid); err != nil {
				return fmt.Errorf("order %d/%d/%d: %w", in.w, d, oid, err)
			}
			if _, err := s.exec(ctx, "UPDATE orders SET o_carrier_id = ? WHERE o_w_id = ? AND o_d_id = ? AND o_id = ?", in.carrier, in.w, d, oid); err != nil {
				return err
			}
			if _, err := s.exec(ctx, "UPDATE order_line SET ol_delivery_d = ? WHERE ol_w_id = ? AND ol_d_id = ? AND ol_o_id = ?", now, in.w, d, oid); err != nil {
				return err
			}
			var total sql.NullString
			if err := s.row(ctx, "SELECT SUM(ol_amount) FROM order_line WHERE ol_w_id = ? AND ol_d_id = ? AND ol_o_id = ?", []any{in.w, d, oid}, &total); err != nil {
				return err
			}
			if !total.Valid {
				return errApp(fmt.Sprintf("order %d/%d/%d has no order lines", in.w, d, oid))
			}
			if _, err := s.exec(ctx, "UPDATE customer SET c_balance = c_balance + ?, c_delivery_cnt = c_delivery_cnt + 1 WHERE c_w_id = ? AND c_d_id = ? AND c_id = ?",
				total.String, in.w, d, cid); err != nil {
				return err
			}
		}
		return nil
	})
}

type stockLevelInput struct {
	w, d, threshold int
}

func (in stockLevelInput) run(ctx context.Context, s *session) error {
	return s.inTxn(ctx, func() error {
		var next int
		if err := s.row(ctx, "SELECT d_next_o_id FROM district WHERE d_w_id = ? AND d_id = ?", []any{in.w, in.d}, &next); err != nil {
			return err
		}
		var low int
		return s.row(ctx, "SELECT COUNT(DISTINCT s_i_id) FROM order_line, stock WHERE ol_w_id = ? AND ol_d_id = ? AND ol_o_id < ? AND ol_o_id >= ? AND s_w_id = ? AND s_i_id = ol_i_id AND s_quantity < ?",
			[]any{in.w, in.d, next, next - 20, in.w, in.threshold}, &low)
	})
}

// TxnTypes returns the five transaction types in mix order.
func TxnTypes() []TxnType {
	out := make([]TxnType, numTxnTypes)
	for i := range out {
		out[i] = TxnType(i)
	}
	return out
}
