package sql_test

import (
	"context"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	percsql "github.com/percdb/percdb/sql"
	"github.com/percdb/percdb/sql/console"
	"github.com/percdb/percdb/tests/testproc"
)

// consoleScenario starts a node with a status port and leaves it with
// known work to show: statements of a few digests, a slow statement
// (long_query_time 0 on one session), a pessimistic transaction holding a
// row lock and another connection's UPDATE waiting for it. It returns
// the server, the waiting connection's ID and the channel the waiting
// UPDATE's error arrives on.
func consoleScenario(t *testing.T) (srv *percsql.Server, waiterID uint64, waited <-chan error) {
	t.Helper()
	srv = startServerConfig(t, percsql.Config{StatusAddr: "127.0.0.1:0"})
	db := openDB(t, srv, "")
	mustExec(t, db, "CREATE DATABASE cs", "CREATE TABLE cs.t (id INT PRIMARY KEY, v INT)")
	for i := 0; i < 20; i++ {
		mustExec(t, db, fmt.Sprintf("INSERT INTO cs.t VALUES (%d, %d)", i, i))
		queryRows(t, db, fmt.Sprintf("SELECT v FROM cs.t WHERE id = %d", i))
	}
	ctx := context.Background()
	conn := func() *sql.Conn { return dedicatedConn(t, db) }
	slow, holder, waiter := conn(), conn(), conn()
	// The connections' ids, for the checks below.
	waiterID = connID(t, waiter)
	connID(t, holder)
	for _, s := range []string{"SET SESSION long_query_time = 0", "SELECT COUNT(*) FROM cs.t WHERE v >= 0"} {
		if _, err := slow.ExecContext(ctx, s); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []*sql.Conn{holder, waiter} {
		if _, err := c.ExecContext(ctx, "BEGIN PESSIMISTIC"); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := holder.ExecContext(ctx, "UPDATE cs.t SET v = 100 WHERE id = 1"); err != nil {
		t.Fatal(err)
	}
	ch := make(chan error, 1)
	go func() {
		_, err := waiter.ExecContext(ctx, "UPDATE cs.t SET v = 200 WHERE id = 1")
		ch <- err
	}()
	t.Cleanup(func() {
		_, _ = holder.ExecContext(ctx, "ROLLBACK")
	})
	// Until the waiter waits.
	for !strings.Contains(consoleGet(t, srv, "/api/processes"), "waiting for row lock") {
		select {
		case err := <-ch:
			t.Fatalf("the UPDATE that should wait for a lock ended: %v; processes: %s", err, consoleGet(t, srv, "/api/processes"))
		case <-time.After(5 * time.Millisecond):
		}
	}
	return srv, waiterID, ch
}

// consoleGet fetches path from srv's status port, failing on anything
// but 200.
func consoleGet(t *testing.T, srv *percsql.Server, path string) string {
	t.Helper()
	code, body := httpGet(t, srv, path)
	if code != http.StatusOK {
		t.Fatalf("GET %s: %d %s", path, code, body)
	}
	return string(body)
}

// TestConsoleAPI checks the console's JSON endpoints against the node's
// known state, and that POST /api/kill stops a lock wait (1317) without
// harming the connection.
func TestConsoleAPI(t *testing.T) {
	srv, waiterID, waited := consoleScenario(t)

	var stmts []struct {
		DigestText string  `json:"digest_text"`
		Count      uint64  `json:"count"`
		AvgMs      float64 `json:"avg_ms"`
	}
	if err := json.Unmarshal([]byte(consoleGet(t, srv, "/api/statements")), &stmts); err != nil {
		t.Fatal(err)
	}
	found := false
	for _, s := range stmts {
		if s.DigestText == "select `v` from `cs` . `t` where `id` = ?" {
			found = s.Count == 20 && s.AvgMs > 0
		}
	}
	if !found {
		t.Errorf("/api/statements has no point select counted 20 times: %+v", stmts)
	}

	var procs []struct {
		ID         uint32 `json:"id"`
		Command    string `json:"command"`
		State      string `json:"state"`
		Info       string `json:"info"`
		TxnStartTS string `json:"txn_start_ts"`
	}
	if err := json.Unmarshal([]byte(consoleGet(t, srv, "/api/processes")), &procs); err != nil {
		t.Fatal(err)
	}
	var waiterTS string
	for _, p := range procs {
		if uint64(p.ID) == waiterID {
			waiterTS = p.TxnStartTS
			if p.Command != "Query" || p.State != "waiting for row lock" || !strings.HasPrefix(p.Info, "UPDATE cs.t SET v = 200") || p.TxnStartTS == "0" {
				t.Errorf("the waiter in /api/processes: %+v", p)
			}
		}
	}

	var trx struct {
		Transactions []struct {
			StartTS string `json:"start_ts"`
			State   string `json:"state"`
			ConnID  uint32 `json:"conn_id"`
		} `json:"transactions"`
		LockWaits []struct {
			ConnID        uint32 `json:"conn_id"`
			StartTS       string `json:"start_ts"`
			HoldingConnID uint32 `json:"holding_conn_id"`
		} `json:"lock_waits"`
	}
	if err := json.Unmarshal([]byte(consoleGet(t, srv, "/api/transactions")), &trx); err != nil {
		t.Fatal(err)
	}
	states := map[string]int{}
	for _, x := range trx.Transactions {
		states[x.State]++
	}
	if states["LockWaiting"] != 1 || states["Idle"] < 1 {
		t.Errorf("/api/transactions: %+v", trx.Transactions)
	}
	if len(trx.LockWaits) != 1 || uint64(trx.LockWaits[0].ConnID) != waiterID || trx.LockWaits[0].StartTS != waiterTS || trx.LockWaits[0].HoldingConnID == 0 {
		t.Errorf("/api/transactions lock waits: %+v, want the waiter (start_ts %s) and its holder", trx.LockWaits, waiterTS)
	}

	// The heatmap: cs.t's rows were read and written.
	var heat console.Heatmap
	if err := json.Unmarshal([]byte(consoleGet(t, srv, "/api/heatmap")), &heat); err != nil {
		t.Fatal(err)
	}
	var read, written uint64
	for _, r := range heat.Rows {
		if r.Table == "cs.t" && r.Part == "rows" {
			for j := range r.ReadKeys {
				read += r.ReadKeys[j]
				written += r.WriteKeys[j]
			}
		}
	}
	if len(heat.Times) == 0 || read == 0 || written == 0 {
		t.Errorf("/api/heatmap: cs.t's rows read %d keys and written %d over %d columns, want both: %+v", read, written, len(heat.Times), heat.Rows)
	}

	if slow := consoleGet(t, srv, "/api/slow"); !strings.Contains(slow, "SELECT COUNT(*) FROM cs.t WHERE v >= 0") {
		t.Errorf("/api/slow lacks the slow statement: %.500s", slow)
	}

	// The overview's sampler needs two samples for a point.
	for {
		var o struct {
			Samples []map[string]float64 `json:"samples"`
			Totals  map[string]float64   `json:"totals"`
		}
		if err := json.Unmarshal([]byte(consoleGet(t, srv, "/api/overview")), &o); err != nil {
			t.Fatal(err)
		}
		if len(o.Samples) > 0 {
			if o.Totals["queries"] < 40 || o.Totals["connections"] < 3 {
				t.Errorf("/api/overview totals: %v", o.Totals)
			}
			break
		}
		time.Sleep(100 * time.Millisecond)
	}

	// The wait in SHOW STATUS, under InnoDB's names.
	db := openDB(t, srv, "")
	if w, n := serverStatus(t, db, "Innodb_row_lock_current_waits"), serverStatus(t, db, "Innodb_row_lock_waits"); w != 1 || n < 1 {
		t.Errorf("Innodb_row_lock_current_waits %d, Innodb_row_lock_waits %d with one connection waiting", w, n)
	}

	// KILL QUERY through the console.
	req, _ := http.NewRequest(http.MethodPost, "http://"+srv.StatusAddr().String()+"/api/kill",
		strings.NewReader(fmt.Sprintf(`{"id": %d, "query": true}`, waiterID)))
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("POST /api/kill: %d", resp.StatusCode)
	}
	var me *mysql.MySQLError
	if err := <-waited; !errors.As(err, &me) || me.Number != 1317 {
		t.Fatalf("the UPDATE killed from the console: %v, want 1317", err)
	}
	if w := serverStatus(t, db, "Innodb_row_lock_current_waits"); w != 0 {
		t.Errorf("Innodb_row_lock_current_waits %d after the waiter was killed", w)
	}
	// No longer waiting; the connection is still there.
	if p := consoleGet(t, srv, "/api/processes"); strings.Contains(p, "waiting for row lock") || !strings.Contains(p, fmt.Sprintf(`"id":%d,`, waiterID)) {
		t.Errorf("after KILL QUERY: %s", p)
	}
}

// envScreenshots names a directory where TestConsoleInBrowser saves a
// screenshot of each page (docs/images for the documentation).
const envScreenshots = "PERCDB_CONSOLE_SCREENSHOTS"

// TestConsoleInBrowser loads each page of the console in headless
// Chromium (its DOM after the page's script ran) against a node with
// known work, and checks that the page rendered that work and logged
// nothing to the browser's console. It skips when chromium is not
// installed (scripts/install-test-deps.sh installs it).
func TestConsoleInBrowser(t *testing.T) {
	browser := testproc.Browser(t)
	srv, _, _ := consoleScenario(t)
	for len(consoleGet(t, srv, "/api/overview")) < 200 { // until the first chart point
		time.Sleep(100 * time.Millisecond)
	}
	shots := os.Getenv(envScreenshots)
	base := "http://" + srv.StatusAddr().String() + "/"
	for _, c := range []struct {
		page string
		want []string
	}{
		{"overview", []string{`<polyline`, `data-series="qps"`, `statements/s`}},
		{"statements", []string{"select `v` from `cs` . `t` where `id` = ?", "insert into `cs` . `t` values"}},
		{"slow", []string{"SELECT COUNT(*) FROM cs.t WHERE v &gt;= 0"}},
		{"processes", []string{"waiting for row lock", "UPDATE cs.t SET v = 200 WHERE id = 1", `data-kill-query=`}},
		{"transactions", []string{"LockWaiting", "Idle", "update `cs` . `t` set `v` = ? where `id` = ?"}},
		{"heatmap", []string{"cs.t rows", `data-value="`, "darkest:"}},
		{"storage", []string{"cs.t", "L6", "compaction debt", "life time", "10m0s"}},
	} {
		t.Run(c.page, func(t *testing.T) {
			dom, logs := testproc.Chromium(t, browser, "--dump-dom", base+"#"+c.page)
			if !strings.Contains(dom, `data-rendered="`+c.page+`"`) {
				t.Fatalf("the page did not render (data-error: %q); DOM: %.2000s", dataError(dom), dom)
			}
			for _, w := range c.want {
				if !strings.Contains(dom, w) {
					t.Errorf("the rendered page lacks %q", w)
				}
			}
			if logs != "" {
				t.Errorf("the browser's console: %s", logs)
			}
			if shots != "" {
				testproc.Chromium(t, browser, "--screenshot="+filepath.Join(shots, "console-"+c.page+".png"), base+"#"+c.page)
			}
		})
	}
}

// dataError returns the page's data-error attribute, set when a fetch
// failed.
func dataError(dom string) string {
	m := regexp.MustCompile(`data-error="([^"]*)"`).FindStringSubmatch(dom)
	if m == nil {
		return ""
	}
	return m[1]
}

// TestConsoleStorage checks /api/storage against a node with known data:
// the largest table first with its size, a dropped table's range waiting
// for the GC safe point, the disk and the LSM's levels.
func TestConsoleStorage(t *testing.T) {
	srv := startServerConfig(t, percsql.Config{StatusAddr: "127.0.0.1:0"})
	db := openDB(t, srv, "")
	mustExec(t, db, "CREATE DATABASE st", "CREATE TABLE st.big (id INT PRIMARY KEY, pad VARCHAR(2100))",
		"CREATE TABLE st.small (id INT PRIMARY KEY)", "INSERT INTO st.small VALUES (1)", "CREATE TABLE st.gone (id INT PRIMARY KEY)")
	rng := rand.New(rand.NewPCG(3, 4))
	for from := 0; from < 2000; from += 100 {
		var sb strings.Builder
		sb.WriteString("INSERT INTO st.big VALUES ")
		for i := from; i < from+100; i++ {
			b := make([]byte, 750)
			for j := range b {
				b[j] = byte(rng.Uint32())
			}
			fmt.Fprintf(&sb, "%s(%d, '%s')", map[bool]string{true: "", false: ","}[i == from], i, hex.EncodeToString(b))
		}
		mustExec(t, db, sb.String())
	}
	mustExec(t, db, "DROP TABLE st.gone")
	if err := srv.FlushStorage(); err != nil {
		t.Fatal(err)
	}
	var st console.Storage
	// The drop's range is listed once the node's deleter has stamped it.
	for try := 0; ; try++ {
		st = console.Storage{}
		if err := json.Unmarshal([]byte(consoleGet(t, srv, "/api/storage")), &st); err != nil {
			t.Fatal(err)
		}
		stamped := false
		for _, r := range st.GC.PendingRanges {
			stamped = stamped || (strings.HasSuffix(r.What, "TABLE gone") && r.NotBefore != 0)
		}
		if stamped {
			break
		}
		if try == 100 {
			t.Fatalf("no stamped range of the dropped st.gone: %+v", st.GC.PendingRanges)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if !st.Local || st.DiskTotal == 0 || st.DiskAvailable > st.DiskTotal || !strings.HasSuffix(st.Dir, "kv") || st.StoreBytes == 0 || len(st.Levels) != 7 {
		t.Errorf("/api/storage: %+v", st)
	}
	// 2,000 rows of 1,500 incompressible bytes: about 3 MB.
	if len(st.Tables) < 2 || st.Tables[0].Table != "st.big" || st.Tables[0].Bytes < 2_000_000 || st.Tables[0].Bytes > 10_000_000 {
		t.Errorf("/api/storage tables: %+v, want st.big first at about 3 MB", st.Tables)
	}
	for _, tb := range st.Tables {
		if tb.Table == "st.gone" {
			t.Errorf("the dropped st.gone is listed: %+v", st.Tables)
		}
	}
	if st.GC.LifeTime != "10m0s" || st.GC.RunInterval != "10m0s" {
		t.Errorf("/api/storage gc: %+v", st.GC)
	}
}
