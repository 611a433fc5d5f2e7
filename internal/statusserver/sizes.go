package statusserver

import (
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/percdb/percdb/kv"
)

// A KV node's sizes of key ranges (POST StoreSizesPath): a SQL node of a
// cluster sends its tables' ranges, which only it can name, and each KV
// node answers what its store holds of them, estimated from the table
// files' metadata (kv.Store.ApproximateSize: no key is read). The SQL
// node's console lists the largest tables of each store and of the
// cluster from the answers.
//
// The request is JSON {"ranges": [[start, end], ...]}, the keys in base64
// (encoding/json's []byte); the answer {"bytes": [n, ...]}, one size per
// range in the order asked.

// StoreSizesPath is where a KV node's status port answers range sizes.
const StoreSizesPath = "/store/sizes"

// MaxSizeRanges bounds the ranges of one request: an estimate is a walk
// of the table files' metadata, and the port must stay responsive.
const MaxSizeRanges = 10_000

// maxSizesBody bounds a request's body: MaxSizeRanges ranges of table
// keys (tens of bytes each in base64) fit well within it.
const maxSizesBody = 4 << 20

// SizesRequest is a request for the sizes of key ranges ([Start, End);
// an empty End is the key space's end).
type SizesRequest struct {
	Ranges [][2][]byte `json:"ranges"`
}

// SizesAnswer is the sizes of a SizesRequest's ranges, in its order.
type SizesAnswer struct {
	Bytes []uint64 `json:"bytes"`
}

// SizesHandler answers SizesRequests with store's estimates.
func SizesHandler(store *kv.Store) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		var req SizesRequest
		if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, maxSizesBody)).Decode(&req); err != nil {
			http.Error(w, fmt.Sprintf("sizes request: %v", err), http.StatusBadRequest)
			return
		}
		if len(req.Ranges) > MaxSizeRanges {
			http.Error(w, fmt.Sprintf("sizes request: %d ranges, at most %d", len(req.Ranges), MaxSizeRanges), http.StatusBadRequest)
			return
		}
		out := SizesAnswer{Bytes: make([]uint64, len(req.Ranges))}
		for i, rg := range req.Ranges {
			n, err := store.ApproximateSize(rg[0], rg[1])
			if err != nil {
				// The store is closing.
				http.Error(w, err.Error(), http.StatusServiceUnavailable)
				return
			}
			out.Bytes[i] = n
		}
		w.Header().Set("Content-Type", "application/json")
		if err := json.NewEncoder(w).Encode(out); err != nil {
			return // the client went away
		}
	}
}
