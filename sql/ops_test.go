package sql_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"testing"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	percsql "github.com/percdb/percdb/sql"
)

// httpGet fetches path from the status port of srv and returns the
// status code and body.
func httpGet(t *testing.T, srv *percsql.Server, path string) (int, []byte) {
	t.Helper()
	resp, err := http.Get("http://" + srv.StatusAddr().String() + path)
	if err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
	return resp.StatusCode, body
}

// scrape reads /metrics with Prometheus' text parser.
func scrape(t *testing.T, srv *percsql.Server) map[string]*dto.MetricFamily {
	t.Helper()
	code, body := httpGet(t, srv, "/metrics")
	if code != http.StatusOK {
		t.Fatalf("GET /metrics: %d %s", code, body)
	}
	// The legacy scheme: percdb's metric names are all [a-zA-Z_:][a-zA-Z0-9_:]*.
	p := expfmt.NewTextParser(model.LegacyValidation)
	fams, err := p.TextToMetricFamilies(strings.NewReader(string(body)))
	if err != nil {
		t.Fatalf("parse /metrics: %v\n%s", err, body)
	}
	return fams
}

// metricValue returns the value of the sample of family name whose labels
// are labels ("k=v" pairs), failing when there is none.
func metricValue(t *testing.T, fams map[string]*dto.MetricFamily, name string, labels ...string) float64 {
	t.Helper()
	f, ok := fams[name]
	if !ok {
		t.Fatalf("no metric family %s", name)
	}
next:
	for _, m := range f.GetMetric() {
		have := map[string]string{}
		for _, l := range m.GetLabel() {
			have[l.GetName()] = l.GetValue()
		}
		for _, kv := range labels {
			k, v, _ := strings.Cut(kv, "=")
			if have[k] != v {
				continue next
			}
		}
		switch {
		case m.Counter != nil:
			return m.Counter.GetValue()
		case m.Gauge != nil:
			return m.Gauge.GetValue()
		case m.Histogram != nil:
			return float64(m.Histogram.GetSampleCount())
		case m.Untyped != nil:
			return m.Untyped.GetValue()
		}
	}
	t.Fatalf("no sample of %s with %v", name, labels)
	return 0
}

// TestStatusPort checks the status port: /status answers 200 with its
// JSON fields, /metrics parses with Prometheus' own text parser and its
// counters move with traffic by exactly the traffic sent, SHOW STATUS
// and /metrics agree, and /debug/pprof/ answers.
func TestStatusPort(t *testing.T) {
	srv := startServerConfig(t, percsql.Config{StatusAddr: "127.0.0.1:0"})
	db := openDB(t, srv, "")
	db.SetMaxOpenConns(1)
	mustExec(t, db, "CREATE DATABASE ops", "CREATE TABLE ops.t (id INT PRIMARY KEY, v INT)")

	code, body := httpGet(t, srv, "/status")
	if code != http.StatusOK {
		t.Fatalf("GET /status: %d %s", code, body)
	}
	var st map[string]any
	if err := json.Unmarshal(body, &st); err != nil {
		t.Fatalf("/status is not JSON: %v: %s", err, body)
	}
	for _, f := range []string{"ready", "version", "git_hash", "go_version", "start_time", "uptime_seconds", "connections"} {
		if _, ok := st[f]; !ok {
			t.Errorf("/status has no %q: %s", f, body)
		}
	}
	if st["ready"] != true || st["version"] != percsql.DefaultVersion || st["connections"].(float64) < 1 {
		t.Errorf("/status = %s, want ready, version %s and the open connection", body, percsql.DefaultVersion)
	}

	before := scrape(t, srv)
	const n = 7
	for i := 0; i < n; i++ {
		mustExec(t, db, fmt.Sprintf("INSERT INTO ops.t VALUES (%d, %d)", i, i))
		var v int
		if err := db.QueryRow(fmt.Sprintf("SELECT v FROM ops.t WHERE id = %d", i)).Scan(&v); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := db.Exec("SELECT * FROM ops.nosuch"); err == nil {
		t.Fatal("a select of a missing table succeeded")
	}
	after := scrape(t, srv)

	delta := func(name string, labels ...string) float64 {
		return metricValue(t, after, name, labels...) - metricValue(t, before, name, labels...)
	}
	for _, c := range []struct {
		name   string
		labels []string
		want   float64
	}{
		{"percdb_queries_total", []string{"type=insert", "result=ok"}, n},
		{"percdb_queries_total", []string{"type=select", "result=ok"}, n},
		{"percdb_queries_total", []string{"type=select", "result=error"}, 1},
		{"percdb_query_duration_seconds", []string{"type=insert"}, n},
		{"percdb_query_duration_seconds", []string{"type=select"}, n + 1},
		// Each autocommit INSERT commits in one phase (one region).
		{"percdb_commits_total", []string{"protocol=1pc"}, n},
	} {
		if got := delta(c.name, c.labels...); got != c.want {
			t.Errorf("%s%v moved by %v, want %v", c.name, c.labels, got, c.want)
		}
	}
	if got := delta("percdb_transactions_total", "result=committed"); got < n {
		t.Errorf("percdb_transactions_total{result=committed} moved by %v, want at least %d", got, n)
	}
	// KV requests by command: every INSERT prewrites (in one phase), and
	// every point select reads its key.
	if got := delta("percdb_kv_requests_total", "command=prewrite", "result=ok"); got < n {
		t.Errorf("percdb_kv_requests_total{command=prewrite,result=ok} moved by %v, want at least %d", got, n)
	}
	if got := delta("percdb_kv_request_duration_seconds", "command=prewrite"); got < n {
		t.Errorf("percdb_kv_request_duration_seconds{command=prewrite} counted %v requests, want at least %d", got, n)
	}
	if got := delta("percdb_kv_requests_total", "command=get", "result=ok") + delta("percdb_kv_requests_total", "command=batch_get", "result=ok") +
		delta("percdb_kv_requests_total", "command=scan", "result=ok"); got < n {
		t.Errorf("the point selects made %v KV reads, want at least %d", got, n)
	}
	if got := delta("percdb_kv_request_bytes_total", "command=prewrite"); got <= 0 {
		t.Errorf("percdb_kv_request_bytes_total{command=prewrite} moved by %v", got)
	}
	if got := delta("percdb_fastpath_hits_total") + delta("percdb_fastpath_fallthroughs_total", "reason=learning"); got < 1 {
		t.Errorf("the fast path counted none of %d point selects", n)
	}
	for _, name := range []string{"percdb_pebble_disk_usage_bytes", "percdb_pebble_read_amplification",
		"percdb_pebble_block_cache_hits_total", "percdb_pebble_compactions_total", "percdb_oracle_calls_total",
		"percdb_lock_resolutions_total", "go_goroutines", "process_resident_memory_bytes"} {
		if _, ok := after[name]; !ok {
			t.Errorf("/metrics has no %s", name)
		}
	}
	if got := metricValue(t, after, "percdb_connections"); got < 1 {
		t.Errorf("percdb_connections = %v with a connection open", got)
	}
	if metricValue(t, after, "percdb_pebble_disk_usage_bytes") <= 0 {
		t.Error("percdb_pebble_disk_usage_bytes is 0 for a store with data")
	}
	if size, avail := metricValue(t, after, "percdb_disk_size_bytes"), metricValue(t, after, "percdb_disk_available_bytes"); size <= 0 || avail <= 0 || avail > size {
		t.Errorf("percdb_disk_size_bytes %v, percdb_disk_available_bytes %v", size, avail)
	}
	if req, ts := metricValue(t, after, "percdb_tso_requests_total"), metricValue(t, after, "percdb_tso_timestamps_total"); req < 1 || ts < req {
		t.Errorf("percdb_tso_requests_total %v, percdb_tso_timestamps_total %v: want requests, each serving at least one timestamp", req, ts)
	}
	if full := metricValue(t, after, "percdb_disk_full"); full != 0 {
		t.Errorf("percdb_disk_full = %v with a disk that is not full", full)
	}
	// The disk protection's counters: present, and nothing refused or
	// held back on a disk with room.
	for _, m := range []struct{ name, label string }{
		{"percdb_disk_writes_refused_total", "reason=full"}, {"percdb_disk_writes_refused_total", "reason=stalled"},
		{"percdb_disk_compactions_waited_total", ""}, {"percdb_disk_compactions_gave_up_total", ""}, {"percdb_disk_compactions_never_fit_total", ""},
		{"percdb_store_writes_in_doubt_total", ""}, {"percdb_store_writes_in_doubt", ""},
	} {
		var labels []string
		if m.label != "" {
			labels = append(labels, m.label)
		}
		if v := metricValue(t, after, m.name, labels...); v != 0 {
			t.Errorf("%s{%s} = %v on a disk with room, want 0", m.name, m.label, v)
		}
	}
	if stalled, secs := metricValue(t, after, "percdb_pebble_write_stalled"), metricValue(t, after, "percdb_pebble_write_stall_seconds_total"); stalled != 0 && secs <= 0 {
		t.Errorf("percdb_pebble_write_stalled %v with percdb_pebble_write_stall_seconds_total %v", stalled, secs)
	}
	_ = metricValue(t, after, "percdb_pebble_write_stalls_total")

	// Both views of a counter read one source: with no traffic between,
	// SHOW STATUS and /metrics agree.
	committed := serverStatus(t, db, "Percdb_transactions_committed")
	if got := metricValue(t, scrape(t, srv), "percdb_transactions_total", "result=committed"); got != float64(committed) {
		t.Errorf("percdb_transactions_total{result=committed} = %v, SHOW STATUS says %d", got, committed)
	}

	if code, body := httpGet(t, srv, "/debug/pprof/"); code != http.StatusOK || !strings.Contains(string(body), "goroutine") {
		t.Errorf("GET /debug/pprof/: %d", code)
	}
	if code, _ := httpGet(t, srv, "/nosuch"); code != http.StatusNotFound {
		t.Errorf("GET /nosuch: %d, want 404", code)
	}
}

// slowEntry is one entry of a slow log as its format's rules read it.
type slowEntry struct {
	time, user, host, db string
	setTimestamp         int64
	attrs                map[string]string
	query                string
}

var (
	slowTimeLine = regexp.MustCompile(`^# Time: (\d{6} \d{2}:\d{2}:\d{2})$`)
	slowUserLine = regexp.MustCompile(`^# User@Host: (\S+)\[\S*\] @ (\S*) \[(\S*)\]\s+Id:\s+(\d+)$`)
	slowAttr     = regexp.MustCompile(`(\w+): (\S+)`)
	slowSetTS    = regexp.MustCompile(`^SET timestamp=(\d+);$`)
	slowUse      = regexp.MustCompile("^use (\\w+|`[^`]+`);$")
)

// parseSlowLog reads a slow log by the rules pt-query-digest and
// mysqldumpslow apply: the server's header lines come before the first
// entry; an entry starts with "# Time:", then "# User@Host:", then "#"
// lines of "Name: value" attributes (Query_time, Lock_time, Rows_sent and
// Rows_examined first), then optionally "use db;", then "SET
// timestamp=N;", then the statement up to the line that ends with ";".
func parseSlowLog(t *testing.T, path string) []slowEntry {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatalf("open slow log: %v", err)
	}
	defer f.Close()
	var lines []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		lines = append(lines, sc.Text())
	}
	i := 0
	for i < len(lines) && !strings.HasPrefix(lines[i], "# Time: ") {
		i++
	}
	if i != 3 || !strings.Contains(lines[0], "Version: ") || !strings.HasPrefix(lines[2], "Time ") {
		t.Fatalf("slow log header: %q", lines[:i])
	}
	var out []slowEntry
	for i < len(lines) {
		fail := func(why string) { t.Fatalf("slow log line %d %q: %s", i+1, lines[i], why) }
		var e slowEntry
		m := slowTimeLine.FindStringSubmatch(lines[i])
		if m == nil {
			fail("want # Time: YYMMDD HH:MM:SS")
		}
		e.time = m[1]
		i++
		if m = slowUserLine.FindStringSubmatch(lines[i]); m == nil {
			fail("want # User@Host: user[user] @ host [ip]  Id: N")
		}
		e.user, e.host = m[1], m[2]
		i++
		if !strings.HasPrefix(lines[i], "# Query_time: ") {
			fail("want # Query_time: after # User@Host:")
		}
		e.attrs = map[string]string{}
		for ; i < len(lines) && strings.HasPrefix(lines[i], "# "); i++ {
			for _, kv := range slowAttr.FindAllStringSubmatch(lines[i], -1) {
				e.attrs[kv[1]] = kv[2]
			}
		}
		for _, a := range []string{"Query_time", "Lock_time", "Rows_sent", "Rows_examined"} {
			if _, ok := e.attrs[a]; !ok {
				t.Fatalf("slow log entry at %s has no %s", e.time, a)
			}
		}
		if m = slowUse.FindStringSubmatch(lines[i]); m != nil {
			e.db = strings.Trim(m[1], "`")
			i++
		}
		if m = slowSetTS.FindStringSubmatch(lines[i]); m == nil {
			fail("want SET timestamp=N;")
		}
		e.setTimestamp, _ = strconv.ParseInt(m[1], 10, 64)
		i++
		var q []string
		for ; i < len(lines); i++ {
			q = append(q, lines[i])
			if strings.HasSuffix(lines[i], ";") {
				i++
				break
			}
		}
		e.query = strings.TrimSuffix(strings.Join(q, "\n"), ";")
		out = append(out, e)
	}
	return out
}

// attrUint returns attribute name of e as a number.
func attrUint(t *testing.T, e slowEntry, name string) uint64 {
	t.Helper()
	v, err := strconv.ParseUint(e.attrs[name], 10, 64)
	if err != nil {
		t.Fatalf("%s of %q: %v", name, e.query, err)
	}
	return v
}

// TestSlowQueryLog checks the slow query log: a statement at least
// long_query_time long is written in MySQL's format with percdb's
// timestamps, one shorter is not, and mysqldumpslow reads the file when
// it is installed.
func TestSlowQueryLog(t *testing.T) {
	srv, admin, logPath := slowLogServer(t)
	var on string
	if err := admin.QueryRow("SELECT @@GLOBAL.slow_query_log").Scan(&on); err != nil || on != "1" {
		t.Fatalf("@@GLOBAL.slow_query_log = %q (%v) with a slow log configured", on, err)
	}
	mustExec(t, admin, "CREATE DATABASE slowdb", "CREATE TABLE slowdb.t (id INT PRIMARY KEY, v INT)")
	// Under the default long_query_time of 10 s: not logged.
	mustExec(t, admin, "SELECT 1 /* fast */")

	// Sessions started after SET GLOBAL take the new value, as in MySQL.
	mustExec(t, admin, "SET GLOBAL long_query_time = 0")
	db := openDB(t, srv, "slowdb")
	db.SetMaxOpenConns(1)
	mustExec(t, db, "INSERT INTO t VALUES (1, 10), (2, 20)")
	tx, err := db.Begin()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec("UPDATE t SET v = v + 1 WHERE id = 2"); err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	rows, err := db.Query("SELECT id, v FROM t ORDER BY id")
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
	}
	rows.Close()
	if _, err := db.Exec("SELECT * FROM nosuch"); err == nil {
		t.Fatal("a select of a missing table succeeded")
	}
	var v int
	for i := 0; i < 2; i++ { // the fast path learns the plan, then runs it
		if err := db.QueryRow("SELECT v FROM t WHERE id = 1").Scan(&v); err != nil {
			t.Fatal(err)
		}
	}
	mustExec(t, db, "SELECT v FROM t WHERE v > 100")
	// A SLEEP longer than the session's long_query_time is logged.
	mustExec(t, admin, "SET SESSION long_query_time = 0.2", "SELECT SLEEP(0.3)")

	entries := parseSlowLog(t, logPath)
	byQuery := map[string]slowEntry{}
	for _, e := range entries {
		byQuery[e.query] = e
	}
	if _, ok := byQuery["SELECT 1 /* fast */"]; ok {
		t.Error("a statement under long_query_time was logged")
	}
	ins, ok := byQuery["INSERT INTO t VALUES (1, 10), (2, 20)"]
	if !ok {
		t.Fatalf("the INSERT is not in the slow log; entries: %+v", entries)
	}
	if ins.user != "root" || ins.host != "localhost" || ins.db != "slowdb" || ins.setTimestamp == 0 {
		t.Errorf("INSERT entry: user %q host %q db %q timestamp %d", ins.user, ins.host, ins.db, ins.setTimestamp)
	}
	if start, commit := attrUint(t, ins, "Percdb_start_ts"), attrUint(t, ins, "Percdb_commit_ts"); start == 0 || commit <= start {
		t.Errorf("autocommit INSERT: start_ts %d commit_ts %d, want both, commit after start", start, commit)
	}
	if got := attrUint(t, ins, "Rows_affected"); got != 2 {
		t.Errorf("INSERT Rows_affected %d, want 2", got)
	}
	upd, commit := byQuery["UPDATE t SET v = v + 1 WHERE id = 2"], byQuery["COMMIT"]
	if upd.attrs == nil || commit.attrs == nil {
		t.Fatalf("the UPDATE or the COMMIT is not in the slow log; entries: %+v", entries)
	}
	if s := attrUint(t, upd, "Percdb_start_ts"); s == 0 || s != attrUint(t, commit, "Percdb_start_ts") || attrUint(t, commit, "Percdb_commit_ts") <= s {
		t.Errorf("explicit transaction: UPDATE %v, COMMIT %v: want one start_ts and a commit_ts above it at COMMIT", upd.attrs, commit.attrs)
	}
	sel := byQuery["SELECT id, v FROM t ORDER BY id"]
	if sel.attrs == nil || attrUint(t, sel, "Rows_sent") != 2 || attrUint(t, sel, "Rows_affected") != 0 {
		t.Errorf("SELECT entry %v, want Rows_sent 2, Rows_affected 0", sel.attrs)
	}
	// Rows_examined: the rows read, whether sent or not, by GMS's path or
	// the fast path.
	for q, want := range map[string]uint64{
		"SELECT id, v FROM t ORDER BY id": 2,
		"SELECT v FROM t WHERE v > 100":   2,
		"SELECT v FROM t WHERE id = 1":    1,
		"SELECT * FROM nosuch":            0,
	} {
		if e := byQuery[q]; e.attrs == nil || attrUint(t, e, "Rows_examined") != want {
			t.Errorf("%s: entry %v, want Rows_examined %d", q, e.attrs, want)
		}
	}
	if e := byQuery["SELECT * FROM nosuch"]; e.attrs == nil || e.attrs["Percdb_errno"] != "1146" {
		t.Errorf("failed SELECT entry %v, want Percdb_errno 1146", e.attrs)
	}
	sleep, ok := byQuery["SELECT SLEEP(0.3)"]
	if !ok {
		t.Fatal("the SLEEP longer than long_query_time is not in the slow log")
	}
	if qt, err := strconv.ParseFloat(sleep.attrs["Query_time"], 64); err != nil || qt < 0.3 {
		t.Errorf("SLEEP(0.3) Query_time %q", sleep.attrs["Query_time"])
	}

	// pt-query-digest reads every entry (scripts/install-test-deps.sh
	// installs it).
	if path, err := exec.LookPath("pt-query-digest"); err == nil {
		out, err := exec.Command(path, "--limit", "100%", logPath).CombinedOutput()
		if err != nil {
			t.Fatalf("pt-query-digest: %v\n%s", err, out)
		}
		s := string(out)
		if want := fmt.Sprintf("# Overall: %d total", len(entries)); !strings.Contains(s, want) ||
			!strings.Contains(s, "Percdb start") || !strings.Contains(s, "INSERT INTO t VALUES") {
			t.Errorf("pt-query-digest did not read the %d entries with percdb's attributes:\n%s", len(entries), s)
		}
	}

	// mysqldumpslow (MariaDB's or MySQL's) reads the file unchanged.
	for _, tool := range []string{"mariadb-dumpslow", "mysqldumpslow"} {
		path, err := exec.LookPath(tool)
		if err != nil {
			continue
		}
		out, err := exec.Command(path, "-s", "c", logPath).CombinedOutput()
		if err != nil {
			t.Fatalf("%s: %v\n%s", tool, err, out)
		}
		s := string(out)
		if !strings.Contains(s, "root[root]@localhost") || !strings.Contains(s, "INSERT INTO t VALUES (N, N), (N, N)") ||
			strings.Contains(s, "# Time") || strings.Contains(s, "Percdb_start_ts") {
			t.Errorf("%s did not read the log as MySQL's:\n%s", tool, s)
		}
		break
	}
}
