package tpcc

import (
	"context"
	"database/sql"
	"fmt"
)

// Scale holds the cardinalities of the population (clause 4.3.3.1 and
// 1.2.1), so that tests can run the same rules on a small database.
type Scale struct {
	// Warehouses is the scale factor W.
	Warehouses int
	// Items is the size of ITEM and of STOCK per warehouse (100,000).
	Items int
	// Districts per warehouse (10).
	Districts int
	// Customers per district (3,000); also the orders per district at load.
	Customers int
	// NewOrders is how many of a district's last orders are undelivered at
	// load (900): orders Customers-NewOrders+1 .. Customers.
	NewOrders int
}

// StandardScale is the specification's population for w warehouses.
func StandardScale(w int) Scale {
	return Scale{Warehouses: w, Items: 100000, Districts: 10, Customers: 3000, NewOrders: 900}
}

// Validate reports a scale the rules cannot be applied to.
func (s Scale) Validate() error {
	switch {
	case s.Warehouses < 1:
		return fmt.Errorf("tpcc: %d warehouses: want at least 1", s.Warehouses)
	case s.Items < 15:
		return fmt.Errorf("tpcc: %d items: want at least 15 (an order has up to 15 lines)", s.Items)
	case s.Districts < 1 || s.Districts > 10:
		return fmt.Errorf("tpcc: %d districts: want 1..10 (S_DIST_01..10)", s.Districts)
	case s.Customers < 1:
		return fmt.Errorf("tpcc: %d customers: want at least 1", s.Customers)
	case s.NewOrders < 0 || s.NewOrders > s.Customers:
		return fmt.Errorf("tpcc: %d new orders of %d: want 0..customers", s.NewOrders, s.Customers)
	}
	return nil
}

// firstNew is the first undelivered order of a district at load (2101).
func (s Scale) firstNew() int { return s.Customers - s.NewOrders + 1 }

// Schema is the DDL of the nine tables, in creation order. The primary keys
// are those of clause 1.3; the secondary indexes on CUSTOMER (for the
// lookup by last name of Payment and Order-Status) and ORDERS (for
// Order-Status's latest order of a customer) are the ones every
// implementation adds. HISTORY has no primary key in the specification and
// gets none. There are no foreign keys: the checks of 3.3.2 verify the
// relationships.
var Schema = []string{
	`CREATE TABLE warehouse (
  w_id SMALLINT NOT NULL,
  w_name VARCHAR(10), w_street_1 VARCHAR(20), w_street_2 VARCHAR(20), w_city VARCHAR(20),
  w_state CHAR(2), w_zip CHAR(9),
  w_tax DECIMAL(4,4), w_ytd DECIMAL(12,2),
  PRIMARY KEY (w_id))`,
	`CREATE TABLE district (
  d_id TINYINT NOT NULL, d_w_id SMALLINT NOT NULL,
  d_name VARCHAR(10), d_street_1 VARCHAR(20), d_street_2 VARCHAR(20), d_city VARCHAR(20),
  d_state CHAR(2), d_zip CHAR(9),
  d_tax DECIMAL(4,4), d_ytd DECIMAL(12,2), d_next_o_id INT,
  PRIMARY KEY (d_w_id, d_id))`,
	`CREATE TABLE customer (
  c_id INT NOT NULL, c_d_id TINYINT NOT NULL, c_w_id SMALLINT NOT NULL,
  c_first VARCHAR(16), c_middle CHAR(2), c_last VARCHAR(16),
  c_street_1 VARCHAR(20), c_street_2 VARCHAR(20), c_city VARCHAR(20), c_state CHAR(2), c_zip CHAR(9),
  c_phone CHAR(16), c_since DATETIME, c_credit CHAR(2),
  c_credit_lim DECIMAL(12,2), c_discount DECIMAL(4,4), c_balance DECIMAL(12,2),
  c_ytd_payment DECIMAL(12,2), c_payment_cnt SMALLINT, c_delivery_cnt SMALLINT,
  c_data VARCHAR(500),
  PRIMARY KEY (c_w_id, c_d_id, c_id),
  INDEX idx_customer (c_w_id, c_d_id, c_last, c_first))`,
	`CREATE TABLE history (
  h_c_id INT, h_c_d_id TINYINT, h_c_w_id SMALLINT, h_d_id TINYINT, h_w_id SMALLINT,
  h_date DATETIME, h_amount DECIMAL(6,2), h_data VARCHAR(24))`,
	`CREATE TABLE new_order (
  no_o_id INT NOT NULL, no_d_id TINYINT NOT NULL, no_w_id SMALLINT NOT NULL,
  PRIMARY KEY (no_w_id, no_d_id, no_o_id))`,
	`CREATE TABLE orders (
  o_id INT NOT NULL, o_d_id TINYINT NOT NULL, o_w_id SMALLINT NOT NULL,
  o_c_id INT, o_entry_d DATETIME, o_carrier_id TINYINT, o_ol_cnt TINYINT, o_all_local TINYINT,
  PRIMARY KEY (o_w_id, o_d_id, o_id),
  INDEX idx_orders (o_w_id, o_d_id, o_c_id, o_id))`,
	`CREATE TABLE order_line (
  ol_o_id INT NOT NULL, ol_d_id TINYINT NOT NULL, ol_w_id SMALLINT NOT NULL, ol_number TINYINT NOT NULL,
  ol_i_id INT, ol_supply_w_id SMALLINT, ol_delivery_d DATETIME,
  ol_quantity TINYINT, ol_amount DECIMAL(6,2), ol_dist_info CHAR(24),
  PRIMARY KEY (ol_w_id, ol_d_id, ol_o_id, ol_number))`,
	`CREATE TABLE item (
  i_id INT NOT NULL, i_im_id INT, i_name VARCHAR(24), i_price DECIMAL(5,2), i_data VARCHAR(50),
  PRIMARY KEY (i_id))`,
	`CREATE TABLE stock (
  s_i_id INT NOT NULL, s_w_id SMALLINT NOT NULL, s_quantity SMALLINT,
  s_dist_01 CHAR(24), s_dist_02 CHAR(24), s_dist_03 CHAR(24), s_dist_04 CHAR(24), s_dist_05 CHAR(24),
  s_dist_06 CHAR(24), s_dist_07 CHAR(24), s_dist_08 CHAR(24), s_dist_09 CHAR(24), s_dist_10 CHAR(24),
  s_ytd DECIMAL(8,0), s_order_cnt SMALLINT, s_remote_cnt SMALLINT, s_data VARCHAR(50),
  PRIMARY KEY (s_w_id, s_i_id))`,
}

// Tables are the table names, in the order of Schema.
var Tables = []string{"warehouse", "district", "customer", "history", "new_order", "orders", "order_line", "item", "stock"}

// CreateSchema drops database name if it exists and creates it with the
// tables of Schema. db must be connected without a default database or to
// name itself; the statements qualify every table.
func CreateSchema(ctx context.Context, db *sql.DB, name string) error {
	for _, q := range []string{"DROP DATABASE IF EXISTS " + name, "CREATE DATABASE " + name} {
		if _, err := db.ExecContext(ctx, q); err != nil {
			return fmt.Errorf("tpcc: %s: %w", q, err)
		}
	}
	conn, err := db.Conn(ctx)
	if err != nil {
		return fmt.Errorf("tpcc: create schema: %w", err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, "USE "+name); err != nil {
		return fmt.Errorf("tpcc: USE %s: %w", name, err)
	}
	for i, q := range Schema {
		if _, err := conn.ExecContext(ctx, q); err != nil {
			return fmt.Errorf("tpcc: create table %s: %w", Tables[i], err)
		}
	}
	return nil
}
