package cluster

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/percdb/percdb/tests/testproc"
)

// get fetches http://addr/path and returns the status code and body; an
// error (the port not yet listening) is returned, not fatal, for polling.
func get(addr, path string) (int, []byte, error) {
	resp, err := http.Get("http://" + addr + path)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	return resp.StatusCode, body, err
}

// getOK fetches path, waiting for the port to listen, and fails unless
// it answers 200.
func getOK(t *testing.T, c *cluster, addr, path string) []byte {
	t.Helper()
	var code int
	var body []byte
	var err error
	waitFor(t, "GET "+addr+path, func() bool {
		code, body, err = get(addr, path)
		return err == nil
	}, func() string { return fmt.Sprintf("%v\n%s", err, c.logs()) })
	if code != http.StatusOK {
		t.Fatalf("GET %s%s: %d %s", addr, path, code, body)
	}
	return body
}

// scrapeMember reads a member's /metrics with Prometheus' text parser.
func scrapeMember(t *testing.T, c *cluster, addr string) map[string]*dto.MetricFamily {
	t.Helper()
	body := getOK(t, c, addr, "/metrics")
	p := expfmt.NewTextParser(model.LegacyValidation)
	fams, err := p.TextToMetricFamilies(strings.NewReader(string(body)))
	if err != nil {
		t.Fatalf("parse %s/metrics: %v\n%s", addr, err, body)
	}
	return fams
}

// sample returns the value of family name's sample with labels ("k=v"),
// and whether there is one.
func sample(fams map[string]*dto.MetricFamily, name string, labels ...string) (float64, bool) {
	f, ok := fams[name]
	if !ok {
		return 0, false
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
		case m.GetCounter() != nil:
			return m.GetCounter().GetValue(), true
		case m.GetGauge() != nil:
			return m.GetGauge().GetValue(), true
		}
	}
	return 0, false
}

// sumOver sums family name's sample with labels over the KV nodes.
func sumOver(t *testing.T, c *cluster, name string, labels ...string) float64 {
	t.Helper()
	total := 0.0
	for _, m := range c.kvs {
		v, ok := sample(scrapeMember(t, c, m.status), name, labels...)
		if !ok {
			t.Fatalf("%s: no %s%v", m.name, name, labels)
		}
		total += v
	}
	return total
}

// TestStatusPortOfEachRole: pd and every KV node serve /status,
// /metrics (which Prometheus' parser reads) and /debug/pprof/ on their
// own status ports; their families describe the cluster (pd: the leader,
// three stores up, the regions; KV nodes: regions, leaders) and move
// with traffic (raft proposals, heartbeats, the regions' written keys);
// pd's read-only API lists the stores with the status ports they
// registered, the regions with their leaders and the load the leaders
// reported, the members and the oracle.
func TestStatusPortOfEachRole(t *testing.T) {
	bin := testproc.BuildPercdb(t)
	c := startCluster(t, bin, 3)
	for _, m := range append([]*member{c.pd}, c.kvs...) {
		var st struct {
			Ready   bool   `json:"ready"`
			Version string `json:"version"`
		}
		if err := json.Unmarshal(getOK(t, c, m.status, "/status"), &st); err != nil || !st.Ready || st.Version == "" {
			t.Fatalf("%s /status: %+v %v", m.name, st, err)
		}
		getOK(t, c, m.status, "/debug/pprof/")
		// The port listens before the member opens; its own families
		// and JSON come once it is open (503 until then).
		path := "/store"
		if m == c.pd {
			path = "/pd/api/v1/members"
		}
		waitFor(t, m.name+" open on its status port", func() bool {
			code, _, err := get(m.status, path)
			return err == nil && code == http.StatusOK
		}, c.logs)
	}

	var stores []struct {
		ID         uint64 `json:"id"`
		Addr       string `json:"addr"`
		StatusAddr string `json:"status_addr"`
		State      string `json:"state"`
		Replicas   int    `json:"replicas"`
		Placement  string `json:"placement"`
		Capacity   uint64 `json:"capacity"`
		Available  uint64 `json:"available"`
	}
	// Each KV node registers its status port with pd.
	statusOf := map[string]string{}
	for _, m := range c.kvs {
		statusOf[m.addr] = m.status
	}
	waitFor(t, "pd lists three stores up, placed, with their disks and status ports", func() bool {
		if err := json.Unmarshal(getOK(t, c, c.pd.status, "/pd/api/v1/stores"), &stores); err != nil {
			t.Fatal(err)
		}
		up := 0
		for _, s := range stores {
			if s.State == "up" && s.Replicas > 0 && s.Placement == "up" && s.Capacity > 0 && s.Available <= s.Capacity &&
				s.StatusAddr != "" && s.StatusAddr == statusOf[s.Addr] {
				up++
			}
		}
		return up == 3
	}, func() string { return fmt.Sprintf("%+v, want the status ports %v", stores, statusOf) })
	pdm := scrapeMember(t, c, c.pd.status)
	if v, _ := sample(pdm, "percdb_pd_is_leader"); v != 1 {
		t.Fatalf("percdb_pd_is_leader = %v", v)
	}
	if v, _ := sample(pdm, "percdb_pd_stores", "state=up"); v != 3 {
		t.Fatalf("percdb_pd_stores{state=up} = %v", v)
	}
	if v, _ := sample(pdm, "percdb_pd_regions"); v < 1 {
		t.Fatalf("percdb_pd_regions = %v", v)
	}
	var members []struct {
		Addr   string `json:"addr"`
		Leader bool   `json:"leader"`
	}
	if err := json.Unmarshal(getOK(t, c, c.pd.status, "/pd/api/v1/members"), &members); err != nil || len(members) != 1 || !members[0].Leader || members[0].Addr != c.pd.addr {
		t.Fatalf("members: %+v %v", members, err)
	}
	var oracle struct {
		Timestamp uint64 `json:"timestamp"`
	}
	if err := json.Unmarshal(getOK(t, c, c.pd.status, "/pd/api/v1/tso"), &oracle); err != nil || oracle.Timestamp == 0 {
		t.Fatalf("tso: %+v %v", oracle, err)
	}

	// Before traffic.
	proposals := sumOver(t, c, "percdb_raft_proposals_total", "result=ok")
	beats := sumOver(t, c, "percdb_store_heartbeats_total", "result=ok")
	pdBeats, _ := sample(pdm, "percdb_pd_store_heartbeats_total")
	if v := sumOver(t, c, "percdb_store_regions"); v < 3 {
		t.Fatalf("percdb_store_regions summed over the KV nodes = %v, want a replica of each region on each", v)
	}
	if v := sumOver(t, c, "percdb_store_leaders"); v < 1 {
		t.Fatalf("percdb_store_leaders summed = %v", v)
	}
	for _, m := range c.kvs {
		fams := scrapeMember(t, c, m.status)
		for _, name := range []string{"percdb_pebble_compactions_total", "percdb_disk_available_bytes", "percdb_raft_apply_lag_entries", "percdb_raft_snapshots_sent_total", "percdb_raft_leader_transfers_total"} {
			if _, ok := fams[name]; !ok {
				t.Fatalf("%s /metrics has no %s", m.name, name)
			}
		}
	}

	db := openDB(t, c.sql.addr, "", true)
	for _, stmt := range []string{"CREATE DATABASE ops", "CREATE TABLE ops.t (id INT PRIMARY KEY, v VARCHAR(64))"} {
		if _, err := db.Exec(stmt); err != nil {
			t.Fatalf("%s: %v\n%s", stmt, err, c.logs())
		}
	}
	for i := range 50 {
		if _, err := db.Exec("INSERT INTO ops.t VALUES (?, REPEAT('x', 60))", i); err != nil {
			t.Fatal(err)
		}
	}
	var n int
	if err := db.QueryRow("SELECT COUNT(*) FROM ops.t").Scan(&n); err != nil || n != 50 {
		t.Fatalf("count: %d %v", n, err)
	}

	if v := sumOver(t, c, "percdb_raft_proposals_total", "result=ok"); v < proposals+50 {
		t.Fatalf("percdb_raft_proposals_total{ok} went from %v to %v over 50 inserts", proposals, v)
	}
	waitFor(t, "heartbeats counted", func() bool {
		pdNow, _ := sample(scrapeMember(t, c, c.pd.status), "percdb_pd_store_heartbeats_total")
		return sumOver(t, c, "percdb_store_heartbeats_total", "result=ok") > beats && pdNow > pdBeats
	}, c.logs)
	// The leaders' /regions count the keys written (prewritten) into
	// their regions: 50 rows at least, each of more than 60 bytes.
	var written, writtenBytes uint64
	for _, m := range c.kvs {
		var regions []struct {
			ID         uint64 `json:"id"`
			Leading    bool   `json:"leading"`
			WriteKeys  uint64 `json:"write_keys"`
			WriteBytes uint64 `json:"write_bytes"`
			Voters     []uint64
		}
		if err := json.Unmarshal(getOK(t, c, m.status, "/regions"), &regions); err != nil || len(regions) == 0 {
			t.Fatalf("%s /regions: %+v %v", m.name, regions, err)
		}
		for _, r := range regions {
			written += r.WriteKeys
			writtenBytes += r.WriteBytes
		}
		getOK(t, c, m.status, "/regions/hot")
		getOK(t, c, m.status, "/store")
	}
	if written < 50 || writtenBytes < 50*60 {
		t.Fatalf("the KV nodes' /regions count %d keys and %d bytes written, want at least 50 and %d", written, writtenBytes, 50*60)
	}
	var regions []struct {
		ID     uint64   `json:"id"`
		Peers  []uint64 `json:"peers"`
		Leader uint64   `json:"leader"`
		Load   struct {
			WrittenKeys  uint64 `json:"written_keys"`
			WrittenBytes uint64 `json:"written_bytes"`
			ReadKeys     uint64 `json:"read_keys"`
			IntervalMS   uint64 `json:"interval_ms"`
		} `json:"load"`
	}
	// The leaders report their regions' load with their heartbeats: with
	// writes and reads going on, pd's regions show them.
	waitFor(t, "pd's regions show the leaders' reported writes and reads", func() bool {
		if _, err := db.Exec("UPDATE ops.t SET v = REPEAT('y', 60) WHERE id < 10"); err != nil {
			t.Fatal(err)
		}
		if err := db.QueryRow("SELECT COUNT(*) FROM ops.t WHERE v <> ''").Scan(&n); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(getOK(t, c, c.pd.status, "/pd/api/v1/regions"), &regions); err != nil || len(regions) == 0 {
			t.Fatalf("regions: %+v %v", regions, err)
		}
		for _, r := range regions {
			if l := r.Load; l.IntervalMS > 0 && l.WrittenKeys > 0 && l.WrittenBytes > l.WrittenKeys && l.ReadKeys > 0 {
				return true
			}
		}
		return false
	}, func() string { return fmt.Sprintf("%+v", regions) })
	for _, r := range regions {
		found := false
		for _, p := range r.Peers {
			found = found || p == r.Leader
		}
		if !found {
			t.Fatalf("region %d: leader %d is not one of its peers %v", r.ID, r.Leader, r.Peers)
		}
	}
}

// envScreenshots names a directory where TestConsoleClusterPage saves
// the Cluster page's screenshot (docs/images for the documentation).
const envScreenshots = "PERCDB_CONSOLE_SCREENSHOTS"

// TestConsoleClusterPage: the console of a SQL node of a 3-node cluster
// shows the cluster from pd's API: the three stores up with their
// regions and leaders, the pd leader, the oracle, and the regions of a
// table split in four, each range decoded to the table it starts in; its
// key heatmap has a row of the table's rows per region, in key order,
// with the region's range; the Cluster page and TIKV_REGION_STATUS show
// the regions' reads and writes as their leaders reported them (traffic
// sent through another SQL node included), and so does the whole
// cluster's heatmap (?scope=cluster); the Storage page shows each
// KV node's store, read from its status port. In headless Chromium the
// pages render them with nothing on the browser's console (that part
// skipped without chromium).
func TestConsoleClusterPage(t *testing.T) {
	bin := testproc.BuildPercdb(t)
	sqlStatus := freeAddr(t)
	c := startCluster(t, bin, 3, "--status-port", port(t, sqlStatus))
	db := openDB(t, c.sql.addr, "", true)
	for _, stmt := range []string{"CREATE DATABASE ops", "CREATE TABLE ops.t (id INT PRIMARY KEY, v INT, KEY kv (v))",
		"INSERT INTO ops.t VALUES (1, 1), (50, 50), (150, 150)"} {
		if _, err := db.Exec(stmt); err != nil {
			t.Fatalf("%s: %v\n%s", stmt, err, c.logs())
		}
	}
	var total int
	var ratio float64
	if err := db.QueryRow("SPLIT TABLE ops.t BY (10), (100), (1000)").Scan(&total, &ratio); err != nil || total == 0 {
		t.Fatalf("SPLIT TABLE: %d %v\n%s", total, err, c.logs())
	}
	var cl struct {
		InCluster bool   `json:"in_cluster"`
		Error     string `json:"error"`
		PD        []struct {
			Addr   string `json:"addr"`
			Leader bool   `json:"leader"`
		} `json:"pd"`
		Oracle struct {
			Timestamp string `json:"timestamp"`
		} `json:"oracle"`
		Stores []struct {
			State    string `json:"state"`
			Replicas int    `json:"replicas"`
			Leaders  int    `json:"leaders"`
		} `json:"stores"`
		Regions []struct {
			Table  string   `json:"table"`
			Start  string   `json:"start"`
			Leader uint64   `json:"leader"`
			Peers  []uint64 `json:"peers"`
		} `json:"regions"`
	}
	rowsRegions := 0
	waitFor(t, "the console lists the split table's regions", func() bool {
		if err := json.Unmarshal(getOK(t, c, sqlStatus, "/api/cluster"), &cl); err != nil {
			t.Fatal(err)
		}
		rowsRegions = 0
		for _, r := range cl.Regions {
			if r.Table == "ops.t rows" && strings.HasPrefix(r.Start, "t_") && r.Leader != 0 {
				rowsRegions++
			}
		}
		return rowsRegions >= 3
	}, func() string { return fmt.Sprintf("%+v\n%s", cl, c.logs()) })
	if !cl.InCluster || cl.Error != "" || len(cl.PD) != 1 || !cl.PD[0].Leader || cl.PD[0].Addr != c.pd.addr || cl.Oracle.Timestamp == "0" {
		t.Fatalf("cluster: %+v", cl)
	}
	leaders := 0
	for _, s := range cl.Stores {
		if s.State != "up" || s.Replicas == 0 {
			t.Fatalf("stores: %+v", cl.Stores)
		}
		leaders += s.Leaders
	}
	if len(cl.Stores) != 3 || leaders != len(cl.Regions) {
		t.Fatalf("stores: %+v, %d regions", cl.Stores, len(cl.Regions))
	}

	// The key heatmap follows the regions: after traffic to each of the
	// table's regions, one row of its rows per region, in key order, each
	// with its range.
	for _, stmt := range []string{"INSERT INTO ops.t VALUES (5000, 5)", "UPDATE ops.t SET v = v + 1 WHERE id IN (1, 50, 150)"} {
		if _, err := db.Exec(stmt); err != nil {
			t.Fatalf("%s: %v", stmt, err)
		}
	}
	for _, id := range []int{1, 50, 150, 5000} {
		var v int
		if err := db.QueryRow("SELECT v FROM ops.t WHERE id = ?", id).Scan(&v); err != nil {
			t.Fatalf("select %d: %v", id, err)
		}
	}
	var heat struct {
		Rows []struct {
			Table     string   `json:"table"`
			Part      string   `json:"part"`
			Region    uint64   `json:"region"`
			Range     string   `json:"range"`
			WriteKeys []uint64 `json:"write_keys"`
		} `json:"rows"`
	}
	if err := json.Unmarshal(getOK(t, c, sqlStatus, "/api/heatmap"), &heat); err != nil {
		t.Fatal(err)
	}
	var ranges []string
	seen := map[uint64]bool{}
	for _, r := range heat.Rows {
		if r.Table != "ops.t" || r.Part != "rows" {
			continue
		}
		if r.Region == 0 || r.Range == "" || seen[r.Region] {
			t.Fatalf("heatmap row %+v: want a region of its own with its range", r)
		}
		seen[r.Region] = true
		ranges = append(ranges, r.Range)
	}
	if len(ranges) < 4 {
		t.Fatalf("the heatmap has %d rows of ops.t's rows (%v), want one per region of the four the rows went to: %+v", len(ranges), ranges, heat.Rows)
	}
	for i := 1; i < len(ranges); i++ {
		if prev, cur := strings.Split(ranges[i-1], " .. ")[1], strings.Split(ranges[i], " .. ")[0]; prev != cur && cur != "" {
			t.Errorf("heatmap rows not in key order: %v", ranges)
		}
	}

	// The Cluster page's regions carry the whole cluster's rates, as the
	// regions' leaders reported them to pd: traffic sent through another
	// SQL node shows on this one's page, and in TIKV_REGION_STATUS.
	sql2 := c.startSQL(t, "sql2")
	db2 := openDB(t, sql2.addr, "", true)
	var withLoad struct {
		Regions []struct {
			Table     string  `json:"table"`
			ReadKeys  float64 `json:"read_keys_per_s"`
			WriteKeys float64 `json:"write_keys_per_s"`
			Size      uint64  `json:"approximate_size"`
		} `json:"regions"`
	}
	var written int
	waitFor(t, "this SQL node's Cluster page and TIKV_REGION_STATUS show the other SQL node's reads and writes in ops.t's regions", func() bool {
		for _, stmt := range []string{"UPDATE ops.t SET v = v + 1 WHERE id IN (1, 50, 150)", "SELECT SUM(v) FROM ops.t WHERE id IN (1, 50, 150)"} {
			if _, err := db2.Exec(stmt); err != nil {
				t.Fatalf("%s: %v", stmt, err)
			}
		}
		if err := json.Unmarshal(getOK(t, c, sqlStatus, "/api/cluster"), &withLoad); err != nil {
			t.Fatal(err)
		}
		loaded := 0
		for _, r := range withLoad.Regions {
			if r.Table == "ops.t rows" && r.ReadKeys > 0 && r.WriteKeys > 0 {
				loaded++
			}
		}
		if err := db.QueryRow(`SELECT COUNT(*) FROM information_schema.TIKV_REGION_STATUS
			WHERE DB_NAME = 'ops' AND TABLE_NAME = 't' AND IS_INDEX = 0 AND WRITTEN_BYTES > 0 AND READ_BYTES > 0`).Scan(&written); err != nil {
			t.Fatal(err)
		}
		// The regions of ids 50 and 150 at least (1 may share the
		// region of the table's start with other keys).
		return loaded >= 2 && written >= 1
	}, func() string {
		return fmt.Sprintf("%+v; %d regions in TIKV_REGION_STATUS with traffic", withLoad.Regions, written)
	})

	// The whole cluster's heatmap counts the other SQL node's traffic in
	// ops.t's regions too, sampled from pd.
	var clusterHeat struct {
		InCluster bool `json:"in_cluster"`
		Rows      []struct {
			Table     string   `json:"table"`
			Part      string   `json:"part"`
			Region    uint64   `json:"region"`
			WriteKeys []uint64 `json:"write_keys"`
		} `json:"rows"`
	}
	heated := 0
	waitFor(t, "the whole cluster's heatmap shows the writes to ops.t's regions", func() bool {
		if _, err := db2.Exec("UPDATE ops.t SET v = v + 1 WHERE id IN (1, 50, 150)"); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(getOK(t, c, sqlStatus, "/api/heatmap?scope=cluster"), &clusterHeat); err != nil {
			t.Fatal(err)
		}
		heated = 0
		for _, r := range clusterHeat.Rows {
			written := uint64(0)
			for _, k := range r.WriteKeys {
				written += k
			}
			if r.Table == "ops.t" && r.Part == "rows" && r.Region != 0 && written > 0 {
				heated++
			}
		}
		return clusterHeat.InCluster && heated >= 2
	}, func() string { return fmt.Sprintf("%+v", clusterHeat) })

	// The Storage page shows each KV node's store, read from the status
	// port the node registered with pd.
	var storage struct {
		Local  bool `json:"local"`
		Stores []struct {
			ID         uint64            `json:"store_id"`
			Addr       string            `json:"addr"`
			StatusAddr string            `json:"status_addr"`
			Error      string            `json:"error"`
			Regions    int               `json:"regions"`
			DiskTotal  uint64            `json:"disk_total"`
			StoreBytes uint64            `json:"store_bytes"`
			Levels     []json.RawMessage `json:"levels"`
			Tables     []tableSize       `json:"tables"`
			TablesErr  string            `json:"tables_error"`
		} `json:"stores"`
		Tables []tableSize `json:"tables"`
	}
	if err := json.Unmarshal(getOK(t, c, sqlStatus, "/api/storage"), &storage); err != nil {
		t.Fatal(err)
	}
	if storage.Local || len(storage.Stores) != 3 {
		t.Fatalf("storage: %+v, want the three KV nodes' stores", storage)
	}
	statusOf := map[string]string{}
	for _, m := range c.kvs {
		statusOf[m.addr] = m.status
	}
	for _, st := range storage.Stores {
		if st.Error != "" || st.StatusAddr == "" || st.StatusAddr != statusOf[st.Addr] || st.Regions == 0 || st.DiskTotal == 0 || st.StoreBytes == 0 || len(st.Levels) == 0 {
			t.Errorf("storage of store %d: %+v, want its figures from its status port (the KV nodes': %v)", st.ID, st, statusOf)
		}
		// Each store measured the SQL node's tables (sizes count only
		// what its memtables flushed: ops.t may have none yet).
		if st.TablesErr != "" || !hasTable(st.Tables, "ops.t") {
			t.Errorf("store %d's largest tables: %+v %q, want ops.t among them", st.ID, st.Tables, st.TablesErr)
		}
	}
	if !hasTable(storage.Tables, "ops.t") {
		t.Errorf("the cluster's largest tables: %+v, want ops.t among them", storage.Tables)
	}

	browser := testproc.Browser(t)
	// Traffic through the other SQL node while the pages render, so that
	// they (and their screenshots) show live rates.
	stop, stopped := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(stopped)
		for {
			select {
			case <-stop:
				return
			case <-time.After(20 * time.Millisecond):
			}
			_, _ = db2.Exec("UPDATE ops.t SET v = v + 1 WHERE id IN (1, 50, 150, 5000)")
			_, _ = db2.Exec("SELECT SUM(v) FROM ops.t")
		}
	}()
	defer func() {
		close(stop)
		<-stopped
	}()
	for _, p := range []struct {
		page, shot string
		want       []string
	}{
		{"cluster", "console-cluster.png", []string{"ops.t rows", c.pd.addr, "stores up", c.kvs[0].addr, "t_"}},
		{"heatmap", "console-heatmap-regions.png", []string{"ops.t rows · region ", "t_"}},
		{"heatmap/cluster", "console-heatmap-cluster.png", []string{"ops.t rows · region ", "t_"}},
		{"storage", "console-storage-cluster.png", []string{"Stores", c.kvs[0].addr, c.kvs[2].status, "Compaction debt"}},
	} {
		url := "http://" + sqlStatus + "/#" + p.page
		dom, logs := testproc.Chromium(t, browser, "--dump-dom", url)
		if page, _, _ := strings.Cut(p.page, "/"); !strings.Contains(dom, `data-rendered="`+page+`"`) {
			t.Fatalf("the %s page did not render; DOM: %.3000s", p.page, dom)
		}
		for _, w := range p.want {
			if !strings.Contains(dom, w) {
				t.Errorf("the rendered %s page lacks %q", p.page, w)
			}
		}
		if logs != "" {
			t.Errorf("the browser's console on %s: %s", p.page, logs)
		}
		if dir := os.Getenv(envScreenshots); dir != "" {
			testproc.Chromium(t, browser, "--screenshot="+filepath.Join(dir, p.shot), url)
		}
	}
}

// tableSize is a row of the Storage page's largest tables.
type tableSize struct {
	Table string `json:"table"`
	Bytes uint64 `json:"bytes"`
}

// hasTable reports whether sizes list table.
func hasTable(sizes []tableSize, table string) bool {
	for _, s := range sizes {
		if s.Table == table {
			return true
		}
	}
	return false
}
