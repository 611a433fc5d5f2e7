package bench

import (
	"database/sql"
	"fmt"
	"net"
	"strconv"
	"strings"

	"github.com/go-sql-driver/mysql"
)

// SplitList splits a comma-separated flag value, dropping empty items and
// surrounding spaces.
func SplitList(s string) []string {
	var out []string
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}

// ParseInts parses a comma-separated list of integers.
func ParseInts(s string) ([]int, error) {
	var out []int
	for _, f := range SplitList(s) {
		n, err := strconv.Atoi(f)
		if err != nil {
			return nil, fmt.Errorf("%q is not a number", f)
		}
		out = append(out, n)
	}
	return out, nil
}

// Open returns a pool of at most conns connections as root to database db
// ("" for none) of the server on 127.0.0.1:port. Statements with
// arguments become server-side prepared statements (go-sql-driver's
// default).
func Open(port int, db string, conns int) *sql.DB {
	cfg := mysql.NewConfig()
	cfg.User, cfg.Net = "root", "tcp"
	cfg.Addr = net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	cfg.DBName = db
	conn, err := mysql.NewConnector(cfg)
	if err != nil {
		// NewConnector fails only on a configuration it cannot use, and
		// this one is built here.
		panic(fmt.Sprintf("bench: open: %v", err))
	}
	pool := sql.OpenDB(conn)
	pool.SetMaxOpenConns(conns)
	pool.SetMaxIdleConns(conns)
	return pool
}

// QuoteArgs renders args for a shell, quoting the ones that need it.
func QuoteArgs(args []string) string {
	q := make([]string, len(args))
	for i, a := range args {
		if a == "" || strings.ContainsAny(a, " \t'\"$`\\*?;&|<>()") {
			a = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
		}
		q[i] = a
	}
	return strings.Join(q, " ")
}
