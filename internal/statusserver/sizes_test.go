package statusserver

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/percdb/percdb/kv"
)

// TestSizesHandler: a KV node's answer to the sizes of key ranges counts
// what its store holds of each range (flushed to table files), nothing
// for a range it holds nothing of; a request of too many ranges, or not
// JSON, is refused with 400.
func TestSizesHandler(t *testing.T) {
	store, err := kv.Open("", kv.Options{InMemory: true})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	writeKeys(t, store, bytes.Repeat([]byte("v"), 100))
	if err := store.Flush(); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(SizesHandler(store))
	defer srv.Close()
	post := func(body string) (*http.Response, SizesAnswer) {
		t.Helper()
		resp, err := http.Post(srv.URL, "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var ans SizesAnswer
		if resp.StatusCode == http.StatusOK {
			if err := json.NewDecoder(resp.Body).Decode(&ans); err != nil {
				t.Fatal(err)
			}
		}
		return resp, ans
	}
	req, err := json.Marshal(SizesRequest{Ranges: [][2][]byte{{[]byte("a"), []byte("b")}, {[]byte("b"), []byte("c")}}})
	if err != nil {
		t.Fatal(err)
	}
	r, ans := post(string(req))
	if r.StatusCode != http.StatusOK || len(ans.Bytes) != 2 || ans.Bytes[0] == 0 || ans.Bytes[1] != 0 {
		t.Fatalf("sizes of [a, b) (200 keys) and [b, c) (none): %s %+v", r.Status, ans)
	}
	many, err := json.Marshal(SizesRequest{Ranges: make([][2][]byte, MaxSizeRanges+1)})
	if err != nil {
		t.Fatal(err)
	}
	for _, body := range []string{string(many), "{", `{"ranges": 3}`} {
		if r, _ := post(body); r.StatusCode != http.StatusBadRequest {
			t.Errorf("request %.40q: %s, want 400", body, r.Status)
		}
	}
}

// TestLatestSpaceCollectors: a store's collectors say whether its latest
// space is on (a store that always keeps it: 1, with the switch on
// counted; one that never does: 0) and count what its range reads
// visited, read and merged.
func TestLatestSpaceCollectors(t *testing.T) {
	for _, tc := range []struct {
		mode kv.LatestMode
		on   float64
	}{{kv.LatestAlways, 1}, {kv.LatestOff, 0}} {
		store, err := kv.Open("", kv.Options{InMemory: true, Latest: tc.mode})
		if err != nil {
			t.Fatal(err)
		}
		rc := writeKeys(t, store, []byte("v"))
		pairs, err := store.Scan(context.Background(), &kv.ScanRequest{Region: rc, Start: []byte("a"), End: []byte("b"), Version: 1 << 40})
		if err != nil || len(pairs) != 200 {
			t.Fatalf("scan: %d pairs, %v", len(pairs), err)
		}
		r := prometheus.NewRegistry()
		r.MustRegister(StoreCollectors(store)...)
		fams, err := r.Gather()
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]float64{}
		for _, f := range fams {
			for _, m := range f.GetMetric() {
				name := f.GetName()
				for _, l := range m.GetLabel() {
					name += "{" + l.GetName() + "=" + l.GetValue() + "}"
				}
				got[name] = m.GetGauge().GetValue() + m.GetCounter().GetValue()
			}
		}
		want := map[string]float64{"percdb_kv_latest_space_on": tc.on, "percdb_kv_latest_space_switches_total{to=off}": 0, "percdb_kv_latest_space_compactions_total": 0, "percdb_kv_scan_keys_total": 200}
		for name, v := range want {
			if g, ok := got[name]; !ok || g != v {
				t.Errorf("mode %d: %s = %v (present %v), want %v", tc.mode, name, g, ok, v)
			}
		}
		if got["percdb_kv_scan_records_total"] < 200 || got["percdb_kv_scan_points_total"] < got["percdb_kv_scan_records_total"] {
			t.Errorf("mode %d: records %v, points %v: want at least 200 records and as many points", tc.mode, got["percdb_kv_scan_records_total"], got["percdb_kv_scan_points_total"])
		}
		store.Close()
	}
}

// writeKeys commits value under the 200 keys a0000 to a0199 of store in
// one transaction (one phase, start_ts 10) and returns their region.
func writeKeys(t *testing.T, store *kv.Store, value []byte) kv.RegionCtx {
	t.Helper()
	var muts []kv.Mutation
	for i := 0; i < 200; i++ {
		muts = append(muts, kv.Mutation{Op: kv.OpPut, Key: []byte(fmt.Sprintf("a%04d", i)), Value: value})
	}
	reg, err := store.LocateKey(muts[0].Key)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := store.Prewrite(context.Background(), &kv.PrewriteRequest{Region: reg.Ctx(), Mutations: muts, Primary: muts[0].Key, StartTS: 10,
		LockTTL: 60_000, TryOnePC: true, MaxCommitTS: 1 << 40})
	if err != nil || resp.OnePCCommitTS == 0 {
		t.Fatalf("write: %+v %v", resp, err)
	}
	return reg.Ctx()
}
