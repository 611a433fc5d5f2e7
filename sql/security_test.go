package sql_test

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"database/sql"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/percdb/percdb/kv"
	percsql "github.com/percdb/percdb/sql"
)

// node is a percdb server of a test, which can be restarted on its data
// directory with another configuration.
type node struct {
	t      *testing.T
	cfg    percsql.Config
	srv    *percsql.Server
	served chan error
}

// startNode starts percdb with cfg on a free port of 127.0.0.1 and a data
// directory of the test's (cfg.DataDir when set), and stops it when the
// test ends.
func startNode(t *testing.T, cfg percsql.Config) *node {
	t.Helper()
	if cfg.DataDir == "" {
		cfg.DataDir = t.TempDir()
	}
	cfg.Addr = "127.0.0.1:0"
	cfg.KV = kv.Options{SyncWrites: kv.SyncNone, ReserveSpace: -1} // no 2 GiB ballast per test store
	n := &node{t: t, cfg: cfg}
	n.start()
	t.Cleanup(n.stop)
	return n
}

func (n *node) start() {
	n.t.Helper()
	srv, err := percsql.Open(context.Background(), n.cfg)
	if err != nil {
		n.t.Fatalf("start percdb: %v", err)
	}
	n.srv, n.served = srv, make(chan error, 1)
	go func() { n.served <- srv.Serve() }()
}

func (n *node) stop() {
	if n.srv == nil {
		return
	}
	if err := n.srv.Close(); err != nil {
		n.t.Errorf("close percdb: %v", err)
	}
	if err := <-n.served; err != nil {
		n.t.Errorf("serve: %v", err)
	}
	n.srv = nil
}

// restart stops the node and starts it again on the same data directory
// with root password rootPassword.
func (n *node) restart(rootPassword string) {
	n.t.Helper()
	n.stop()
	n.cfg.RootPassword = rootPassword
	n.start()
}

// config returns a driver configuration for user:password on database db.
func (n *node) config(user, password, db string) *mysql.Config {
	cfg := mysql.NewConfig()
	cfg.User, cfg.Passwd = user, password
	cfg.Net, cfg.Addr, cfg.DBName = "tcp", n.srv.Addr().String(), db
	return cfg
}

// connect opens a pool for user:password, checks that it can log in, and
// returns the login's error if not.
func (n *node) connect(cfg *mysql.Config) (*sql.DB, error) {
	c, err := mysql.NewConnector(cfg)
	if err != nil {
		return nil, err
	}
	db := sql.OpenDB(c)
	if err := db.Ping(); err != nil {
		db.Close()
		return nil, err
	}
	n.t.Cleanup(func() { db.Close() })
	return db, nil
}

func (n *node) mustConnect(user, password, db string) *sql.DB {
	n.t.Helper()
	conn, err := n.connect(n.config(user, password, db))
	if err != nil {
		n.t.Fatalf("connect as %s: %v", user, err)
	}
	return conn
}

// mysqlErrorNumber returns the MySQL error number of err, 0 if none.
func mysqlErrorNumber(err error) uint16 {
	var me *mysql.MySQLError
	if errors.As(err, &me) {
		return me.Number
	}
	return 0
}

func wantMySQLError(t *testing.T, what string, err error, num uint16) {
	t.Helper()
	if got := mysqlErrorNumber(err); got != num {
		t.Fatalf("%s: error %v, want MySQL error %d", what, err, num)
	}
}

func mustQueryString(t *testing.T, db *sql.DB, query string) string {
	t.Helper()
	var s string
	if err := db.QueryRow(query).Scan(&s); err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	return s
}

// mustQueryLines returns the first column of every row, one per line.
func mustQueryLines(t *testing.T, db *sql.DB, query string) string {
	t.Helper()
	rows, err := db.Query(query)
	if err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	defer rows.Close()
	var lines []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			t.Fatalf("%s: %v", query, err)
		}
		lines = append(lines, s)
	}
	if err := rows.Err(); err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	return strings.Join(lines, "\n")
}

// TestUsersGrantsAndRestart checks accounts end to end: a user created and
// granted by root logs in with its password only, gets 1142 for what it
// was not granted (on GMS's path and where the fast path would run), and
// it, its grants and a changed password survive restarts until dropped.
func TestUsersGrantsAndRestart(t *testing.T) {
	n := startNode(t, percsql.Config{})
	root := n.mustConnect("root", "", "")
	mustExec(t, root,
		"CREATE DATABASE app",
		"CREATE TABLE app.open (id INT PRIMARY KEY, v INT)",
		"CREATE TABLE app.closed (id INT PRIMARY KEY, v INT)",
		"INSERT INTO app.open VALUES (1, 10), (2, 20)",
		"INSERT INTO app.closed VALUES (1, 10)",
		"CREATE USER 'alice'@'%' IDENTIFIED BY 'secret1'",
		"GRANT SELECT ON app.open TO 'alice'@'%'",
	)

	if _, err := n.connect(n.config("alice", "wrong", "")); err == nil {
		t.Fatal("alice logged in with a wrong password")
	} else {
		wantMySQLError(t, "wrong password", err, 1045)
		if !strings.Contains(err.Error(), "Access denied for user 'alice'") {
			t.Fatalf("wrong password: %v", err)
		}
	}
	if _, err := n.connect(n.config("nobody", "", "")); mysqlErrorNumber(err) != 1045 {
		t.Fatalf("unknown user: error %v, want 1045", err)
	}

	alice := n.mustConnect("alice", "secret1", "app")
	if got := mustQueryString(t, alice, "SELECT v FROM open WHERE id = 2"); got != "20" {
		t.Fatalf("granted point select = %s, want 20", got)
	}
	checkAliceRefused(t, alice)

	// Everything above must come back after a restart.
	n.restart("")
	alice = n.mustConnect("alice", "secret1", "app")
	if got := mustQueryString(t, alice, "SELECT COUNT(*) FROM open"); got != "2" {
		t.Fatalf("after restart: count = %s, want 2", got)
	}
	checkAliceRefused(t, alice)
	root = n.mustConnect("root", "", "")
	grants := mustQueryLines(t, root, "SHOW GRANTS FOR 'alice'@'%'")
	if !strings.Contains(grants, "GRANT SELECT ON `app`.`open`") {
		t.Fatalf("grants after restart: %q", grants)
	}

	// REVOKE, ALTER USER and GRANT take effect at once and persist.
	mustExec(t, root,
		"REVOKE SELECT ON app.open FROM 'alice'@'%'",
		"ALTER USER 'alice'@'%' IDENTIFIED BY 'secret2'",
		"GRANT SELECT, INSERT, UPDATE, DELETE ON *.* TO 'alice'@'%'",
		"REVOKE INSERT ON *.* FROM 'alice'@'%'",
	)
	n.restart("")
	if _, err := n.connect(n.config("alice", "secret1", "")); mysqlErrorNumber(err) != 1045 {
		t.Fatalf("old password after ALTER USER: error %v, want 1045", err)
	}
	alice = n.mustConnect("alice", "secret2", "app")
	if got := mustQueryString(t, alice, "SELECT v FROM closed WHERE id = 1"); got != "10" {
		t.Fatalf("global SELECT: v = %s, want 10", got)
	}
	_, err := alice.Exec("INSERT INTO open VALUES (3, 30)")
	wantMySQLError(t, "INSERT after REVOKE INSERT", err, 1142)

	// DROP USER removes the account for good.
	root = n.mustConnect("root", "", "")
	mustExec(t, root, "DROP USER 'alice'@'%'")
	if _, err := n.connect(n.config("alice", "secret2", "")); mysqlErrorNumber(err) != 1045 {
		t.Fatalf("dropped user: error %v, want 1045", err)
	}
	n.restart("")
	if _, err := n.connect(n.config("alice", "secret2", "")); mysqlErrorNumber(err) != 1045 {
		t.Fatalf("dropped user after restart: error %v, want 1045", err)
	}
}

// checkAliceRefused checks that alice, granted SELECT on app.open only,
// gets 1142 for everything else, prepared or not.
func checkAliceRefused(t *testing.T, alice *sql.DB) {
	t.Helper()
	for _, q := range []string{
		"SELECT v FROM closed WHERE id = 1",
		"SELECT * FROM closed",
		"INSERT INTO open VALUES (9, 90)",
		"UPDATE open SET v = 0 WHERE id = 1",
		"DELETE FROM open WHERE id = 1",
	} {
		_, err := alice.Exec(q)
		wantMySQLError(t, q, err, 1142)
	}
	// A prepared point select would run on the fast path for root.
	var v int
	err := alice.QueryRow("SELECT v FROM closed WHERE id = ?", 1).Scan(&v)
	wantMySQLError(t, "prepared point select of a table not granted", err, 1142)
	if err := alice.QueryRow("SELECT v FROM open WHERE id = ?", 1).Scan(&v); err != nil || v != 10 {
		t.Fatalf("prepared point select of a granted table: v = %d, %v", v, err)
	}
}

// TestRootPassword checks the --root-password rule: it sets root's
// password on a fresh node and at every start it is given; an empty one
// keeps what is stored.
func TestRootPassword(t *testing.T) {
	n := startNode(t, percsql.Config{RootPassword: "first"})
	if _, err := n.connect(n.config("root", "", "")); mysqlErrorNumber(err) != 1045 {
		t.Fatalf("root without password: error %v, want 1045", err)
	}
	n.mustConnect("root", "first", "")

	n.restart("second")
	if _, err := n.connect(n.config("root", "first", "")); mysqlErrorNumber(err) != 1045 {
		t.Fatalf("root with the old password: error %v, want 1045", err)
	}
	root := n.mustConnect("root", "second", "")
	mustExec(t, root, "ALTER USER 'root'@'localhost' IDENTIFIED BY 'third'")

	n.restart("")
	n.mustConnect("root", "third", "")
	if _, err := n.connect(n.config("root", "second", "")); mysqlErrorNumber(err) != 1045 {
		t.Fatalf("root with the replaced password: error %v, want 1045", err)
	}
}

// writeSelfSignedCert writes a self-signed certificate for 127.0.0.1 and
// its key to dir and returns their paths.
func writeSelfSignedCert(t *testing.T, dir string) (certFile, keyFile string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1),
		Subject:      pkix.Name{CommonName: "percdb test"},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(24 * time.Hour),
		IPAddresses:  []net.IP{net.ParseIP("127.0.0.1")},
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	certFile, keyFile = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}), 0o600); err != nil {
		t.Fatal(err)
	}
	return certFile, keyFile
}

// TestTLS checks that clients connect over TLS with --ssl-cert/--ssl-key,
// that plain connections still work, that caching_sha2_password accounts
// log in over TLS only, and that RequireSecureTransport refuses plain
// connections.
func TestTLS(t *testing.T) {
	certFile, keyFile := writeSelfSignedCert(t, t.TempDir())
	n := startNode(t, percsql.Config{SSLCert: certFile, SSLKey: keyFile})

	// The driver's tls=skip-verify, as a user would write it.
	cfg, err := mysql.ParseDSN(fmt.Sprintf("root@tcp(%s)/?tls=skip-verify", n.srv.Addr()))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := n.connect(cfg); err != nil {
		t.Fatalf("tls=skip-verify: %v", err)
	}

	// A TLS configuration that records the handshake proves the
	// connection is encrypted.
	var handshakes atomic.Int32
	tlsCfg := &tls.Config{
		InsecureSkipVerify: true,
		VerifyConnection: func(cs tls.ConnectionState) error {
			if cs.Version >= tls.VersionTLS12 && len(cs.PeerCertificates) == 1 {
				handshakes.Add(1)
			}
			return nil
		},
	}
	cfg = n.config("root", "", "")
	cfg.TLS = tlsCfg
	root, err := n.connect(cfg)
	if err != nil {
		t.Fatalf("TLS connect: %v", err)
	}
	if handshakes.Load() == 0 {
		t.Fatal("no TLS handshake")
	}
	// Clients learn from the session's status that they are encrypted.
	root.SetMaxOpenConns(1)
	var name, cipher, version string
	if err := root.QueryRow("SHOW STATUS LIKE 'Ssl_cipher'").Scan(&name, &cipher); err != nil || cipher == "" {
		t.Errorf("Ssl_cipher over TLS: %q (%v), want the cipher suite", cipher, err)
	}
	if err := root.QueryRow("SHOW STATUS LIKE 'Ssl_version'").Scan(&name, &version); err != nil || !strings.HasPrefix(version, "TLSv1.") {
		t.Errorf("Ssl_version over TLS: %q (%v), want TLSv1.n", version, err)
	}
	// percdb reads the commands of a TLS connection itself (package
	// wire): a prepared DO, and a statement of 65,535 parameters whose
	// only value is the last (past vitess's NULL bitmap of 65,528).
	if _, err := root.Exec("DO ?", 1); err != nil {
		t.Errorf("prepared DO over TLS: %v", err)
	}
	args := make([]any, 65535)
	args[len(args)-1] = 7
	var last int
	if err := root.QueryRow("SELECT COALESCE(?"+strings.Repeat(", ?", len(args)-1)+")", args...).Scan(&last); err != nil || last != 7 {
		t.Errorf("65,535 parameters over TLS: %d, %v; want 7", last, err)
	}
	plain := n.mustConnect("root", "", "")
	if err := plain.QueryRow("SHOW STATUS LIKE 'Ssl_cipher'").Scan(&name, &version); err != nil || version != "" {
		t.Errorf("Ssl_cipher without TLS: %q (%v), want empty", version, err)
	}
	mustExec(t, root, "CREATE USER 'sha'@'%' IDENTIFIED WITH caching_sha2_password BY 'shapw'")

	// Plain connections still work.
	n.mustConnect("root", "", "")

	// caching_sha2_password: the full exchange sends the password, which
	// percdb accepts over TLS only.
	cfg = n.config("sha", "shapw", "")
	cfg.TLS = tlsCfg
	if _, err := n.connect(cfg); err != nil {
		t.Fatalf("caching_sha2_password over TLS: %v", err)
	}
	cfg = n.config("sha", "wrong", "")
	cfg.TLS = tlsCfg
	if _, err := n.connect(cfg); mysqlErrorNumber(err) != 1045 {
		t.Fatalf("caching_sha2_password, wrong password: error %v, want 1045", err)
	}
	if _, err := n.connect(n.config("sha", "shapw", "")); mysqlErrorNumber(err) != 1045 {
		t.Fatalf("caching_sha2_password without TLS: error %v, want 1045", err)
	}

	n.stop()
	n.cfg.RequireSecureTransport = true
	n.start()
	if _, err := n.connect(n.config("root", "", "")); mysqlErrorNumber(err) != 3159 {
		t.Fatalf("plain connection under RequireSecureTransport: %v, want error 3159", err)
	}
	cfg = n.config("root", "", "")
	cfg.TLS = tlsCfg
	if _, err := n.connect(cfg); err != nil {
		t.Fatalf("TLS connect under RequireSecureTransport: %v", err)
	}
}

// TestTLSAutoCerts checks that a node started without a certificate
// offers TLS with the one it generated in its data directory (ca.pem,
// server-cert.pem, server-key.pem), that a client can verify it against
// ca.pem, that the node keeps it across restarts, and that
// DisableAutoCerts turns TLS off.
func TestTLSAutoCerts(t *testing.T) {
	n := startNode(t, percsql.Config{})

	// The driver's tls=skip-verify, as a user would write it.
	cfg, err := mysql.ParseDSN(fmt.Sprintf("root@tcp(%s)/?tls=skip-verify", n.srv.Addr()))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := n.connect(cfg); err != nil {
		t.Fatalf("tls=skip-verify: %v", err)
	}

	// Full verification against the generated CA, recording the
	// server's certificate.
	caPEM, err := os.ReadFile(filepath.Join(n.cfg.DataDir, "ca.pem"))
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(caPEM) {
		t.Fatal("ca.pem holds no certificate")
	}
	var seen []byte
	verified := func() *mysql.Config {
		cfg := n.config("root", "", "")
		cfg.TLS = &tls.Config{RootCAs: pool, ServerName: "127.0.0.1", VerifyConnection: func(cs tls.ConnectionState) error {
			seen = cs.PeerCertificates[0].Raw
			return nil
		}}
		return cfg
	}
	db, err := n.connect(verified())
	if err != nil {
		t.Fatalf("TLS verified against ca.pem: %v", err)
	}
	mustExec(t, db, "CREATE USER 'sha'@'%' IDENTIFIED WITH caching_sha2_password BY 'shapw'")
	first := seen

	n.restart("")
	cfg = verified()
	cfg.User, cfg.Passwd = "sha", "shapw"
	if _, err := n.connect(cfg); err != nil {
		t.Fatalf("caching_sha2_password over TLS after restart: %v", err)
	}
	if !bytes.Equal(seen, first) {
		t.Error("the restarted node presents another certificate")
	}

	n.stop()
	n.cfg.DisableAutoCerts = true
	n.start()
	cfg, _ = mysql.ParseDSN(fmt.Sprintf("root@tcp(%s)/?tls=skip-verify", n.srv.Addr()))
	if _, err := n.connect(cfg); err == nil {
		t.Error("TLS offered with DisableAutoCerts")
	}
	n.mustConnect("root", "", "")
}

// TestTLSConfigErrors checks that a half or broken TLS configuration
// fails Open with an error naming the problem.
func TestTLSConfigErrors(t *testing.T) {
	dir := t.TempDir()
	certFile, _ := writeSelfSignedCert(t, dir)
	for name, cfg := range map[string]percsql.Config{
		"cert without key":   {SSLCert: certFile},
		"missing files":      {SSLCert: filepath.Join(dir, "no.pem"), SSLKey: filepath.Join(dir, "no.key")},
		"require without it": {RequireSecureTransport: true, DisableAutoCerts: true},
	} {
		cfg.Addr, cfg.DataDir = "127.0.0.1:0", t.TempDir()
		cfg.KV = kv.Options{SyncWrites: kv.SyncNone, ReserveSpace: -1} // no 2 GiB ballast per store
		srv, err := percsql.Open(context.Background(), cfg)
		if err == nil {
			srv.Close()
			t.Errorf("%s: Open succeeded", name)
		}
	}
}

// TestMaxConnections checks that the connection beyond the limit gets
// 1040 and that a freed slot can be used again.
func TestMaxConnections(t *testing.T) {
	n := startNode(t, percsql.Config{MaxConnections: 2})
	c, err := mysql.NewConnector(n.config("root", "", ""))
	if err != nil {
		t.Fatal(err)
	}
	db := sql.OpenDB(c)
	defer db.Close()
	// A connection given back to the pool is closed, not kept idle.
	db.SetMaxIdleConns(0)
	ctx := context.Background()
	c1, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	c2, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	_, err = n.connect(n.config("root", "", ""))
	wantMySQLError(t, "third connection", err, 1040)
	if !strings.Contains(err.Error(), "Too many connections") {
		t.Fatalf("third connection: %v", err)
	}
	var one int
	if err := c2.QueryRowContext(ctx, "SELECT 1").Scan(&one); err != nil {
		t.Fatalf("open connection after a refusal: %v", err)
	}
	c2.Close()
	// The slot comes back when the server has seen the client go, which
	// happens after Close returns.
	for {
		_, err = n.connect(n.config("root", "", ""))
		if err == nil {
			break
		}
		wantMySQLError(t, "connection after one closed", err, 1040)
		time.Sleep(10 * time.Millisecond)
	}
	c1.Close()
}

// TestMaxExecutionTime checks that a SELECT running past
// max_execution_time fails with 3024 and that the connection and server
// go on.
func TestMaxExecutionTime(t *testing.T) {
	n := startNode(t, percsql.Config{})
	db := n.mustConnect("root", "", "")
	db.SetMaxOpenConns(1)
	mustExec(t, db,
		"CREATE DATABASE d",
		"CREATE TABLE d.t (id INT PRIMARY KEY)",
		"INSERT INTO d.t VALUES (1),(2),(3),(4),(5),(6),(7),(8),(9),(10)",
		"SET max_execution_time = 50",
	)
	for _, q := range []string{
		"SELECT SLEEP(600)",
		// A cross join far too big to finish: 10^9 rows.
		"SELECT COUNT(*) FROM d.t a, d.t b, d.t c, d.t e, d.t f, d.t g, d.t h, d.t i, d.t j",
	} {
		_, err := db.Exec(q)
		wantMySQLError(t, q, err, 3024)
	}
	if got := mustQueryString(t, db, "SELECT COUNT(*) FROM d.t"); got != "10" {
		t.Fatalf("after the timeouts: count = %s", got)
	}
	// Not a SELECT: no limit, as in MySQL.
	mustExec(t, db, "SET @slept = SLEEP(0.2)")
	mustExec(t, db, "SET max_execution_time = 0")
	if got := mustQueryString(t, db, "SELECT SLEEP(0.2)"); got != "0" {
		t.Fatalf("SLEEP without a limit = %s", got)
	}
}

// TestQueryMemoryBound checks that a query buffering more rows than the
// bound fails with 1038, while smaller ones and the server go on.
func TestQueryMemoryBound(t *testing.T) {
	n := startNode(t, percsql.Config{MaxQueryBufferedRows: 500})
	db := n.mustConnect("root", "", "")
	mustExec(t, db, "CREATE DATABASE d", "CREATE TABLE d.t (id INT PRIMARY KEY, v INT)")
	var b strings.Builder
	b.WriteString("INSERT INTO d.t VALUES ")
	for i := 0; i < 2000; i++ {
		if i > 0 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, "(%d, %d)", i, (i*7919)%2000)
	}
	mustExec(t, db, b.String())
	for _, q := range []string{
		"SELECT id FROM d.t ORDER BY v",
		"SELECT v, COUNT(*) FROM d.t GROUP BY v",
	} {
		_, err := db.Exec(q)
		wantMySQLError(t, q, err, 1038)
	}
	// A streaming scan buffers nothing; a small sort fits.
	if got := mustQueryString(t, db, "SELECT COUNT(*) FROM d.t"); got != "2000" {
		t.Fatalf("count = %s", got)
	}
	if got := mustQueryString(t, db, "SELECT id FROM d.t WHERE id < 100 ORDER BY v DESC LIMIT 1"); got == "" {
		t.Fatal("small sort returned nothing")
	}
}
