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
	ctx := context.Background()
	var muts []kv.Mutation
	for i := 0; i < 200; i++ {
		muts = append(muts, kv.Mutation{Op: kv.OpPut, Key: []byte(fmt.Sprintf("a%04d", i)), Value: bytes.Repeat([]byte("v"), 100)})
	}
	reg, err := store.LocateKey(muts[0].Key)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := store.Prewrite(ctx, &kv.PrewriteRequest{Region: reg.Ctx(), Mutations: muts, Primary: muts[0].Key, StartTS: 10,
		LockTTL: 60_000, TryOnePC: true, MaxCommitTS: 1 << 40})
	if err != nil || resp.OnePCCommitTS == 0 {
		t.Fatalf("write: %+v %v", resp, err)
	}
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
