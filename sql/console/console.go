package console

import (
	"embed"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"net/http"
	"net/url"
	"strings"
	"time"
)

//go:embed static
var static embed.FS

// Timestamps (start_ts, commit_ts) are JSON strings: they pass 2^53,
// beyond which a JavaScript number loses digits.

// Statement is a row of the statement statistics by digest.
type Statement struct {
	Schema       string    `json:"schema"`
	Digest       string    `json:"digest"`
	DigestText   string    `json:"digest_text"`
	Count        uint64    `json:"count"`
	SumMs        float64   `json:"sum_ms"`
	AvgMs        float64   `json:"avg_ms"`
	MinMs        float64   `json:"min_ms"`
	MaxMs        float64   `json:"max_ms"`
	P95Ms        float64   `json:"p95_ms"`
	P99Ms        float64   `json:"p99_ms"`
	Errors       uint64    `json:"errors"`
	RowsSent     uint64    `json:"rows_sent"`
	RowsExamined uint64    `json:"rows_examined"`
	RowsAffected uint64    `json:"rows_affected"`
	FirstSeen    time.Time `json:"first_seen"`
	LastSeen     time.Time `json:"last_seen"`
	Sample       string    `json:"sample"`
}

// SlowQuery is a statement that took at least its session's
// long_query_time.
type SlowQuery struct {
	Time         time.Time `json:"time"`
	QueryMs      float64   `json:"query_ms"`
	User         string    `json:"user"`
	Host         string    `json:"host"`
	ConnID       uint32    `json:"conn_id"`
	DB           string    `json:"db"`
	RowsSent     uint64    `json:"rows_sent"`
	RowsExamined uint64    `json:"rows_examined"`
	RowsAffected uint64    `json:"rows_affected"`
	StartTS      uint64    `json:"start_ts,string"`
	CommitTS     uint64    `json:"commit_ts,string"`
	Errno        int       `json:"errno"`
	Query        string    `json:"query"`
}

// Process is a client connection.
type Process struct {
	ID      uint32 `json:"id"`
	User    string `json:"user"`
	Host    string `json:"host"`
	DB      string `json:"db"`
	Command string `json:"command"`
	TimeS   int64  `json:"time_s"`
	State   string `json:"state"`
	Info    string `json:"info"`
	// TxnStartTS is the start_ts of the connection's open transaction,
	// 0 for none.
	TxnStartTS uint64 `json:"txn_start_ts,string"`
}

// Transaction is an open transaction.
type Transaction struct {
	StartTS   uint64    `json:"start_ts,string"`
	StartTime time.Time `json:"start_time"`
	AgeS      float64   `json:"age_s"`
	State     string    `json:"state"`
	ConnID    uint32    `json:"conn_id"`
	User      string    `json:"user"`
	DB        string    `json:"db"`
	Keys      int       `json:"keys"`
	Bytes     int       `json:"bytes"`
	Statement string    `json:"statement"`
}

// LockWait is a request waiting for another transaction's lock.
type LockWait struct {
	ConnID        uint32 `json:"conn_id"`
	StartTS       uint64 `json:"start_ts,string"`
	Key           string `json:"key"`
	HoldingConnID uint32 `json:"holding_conn_id"`
	HoldingTS     uint64 `json:"holding_start_ts,string"`
}

// Heatmap is the key-space heatmap: the node's KV reads and writes by
// part of the key space (a table's rows, each index) in time columns.
type Heatmap struct {
	// InCluster says the node is a SQL node of a cluster, which has the
	// whole cluster's heatmap too (?scope=cluster).
	InCluster bool    `json:"in_cluster,omitempty"`
	IntervalS float64 `json:"interval_s"`
	// Times are the columns' starts in Unix milliseconds, oldest first.
	Times []int64      `json:"times"`
	Rows  []HeatmapRow `json:"rows"`
}

// HeatmapRow is one part of the key space, a value per column of each
// measure.
type HeatmapRow struct {
	// Table is "db.table" (or what is known of it), Part "rows",
	// "index <name>", "other", "meta" or "overflow".
	Table string `json:"table"`
	Part  string `json:"part"`
	// Region is the region the requests went to, on a SQL node of a
	// cluster (0: not by region), Range its keys as TiDB writes them
	// ("" when pd did not list it).
	Region     uint64   `json:"region,omitempty"`
	Range      string   `json:"range,omitempty"`
	ReadKeys   []uint64 `json:"read_keys"`
	ReadBytes  []uint64 `json:"read_bytes"`
	WriteKeys  []uint64 `json:"write_keys"`
	WriteBytes []uint64 `json:"write_bytes"`
	Requests   []uint64 `json:"requests"`
}

// Source is what the console shows, read when a page asks.
type Source interface {
	Statements() []Statement
	SlowQueries() []SlowQuery
	Processes() []Process
	Transactions() []Transaction
	LockWaits() []LockWait
	Heatmap() Heatmap
	// ClusterHeatmap is the whole cluster's heatmap by region, as the
	// regions' leaders reported their reads and writes (empty off a
	// cluster).
	ClusterHeatmap() Heatmap
	// Storage reads the store, the LSM and the garbage collector now.
	Storage() Storage
	// Cluster reads the cluster's stores and regions from pd now.
	Cluster() Cluster
	// Kill stops connection id's running statement (query) or closes
	// the connection; an error when there is no such connection.
	Kill(id uint32, query bool) error
}

// ErrNoConnection is Kill's error for an unknown connection.
var ErrNoConnection = errors.New("no such connection")

// Handler returns the console: its pages at / and /static/, its JSON at
// /api/. hist may be nil (no charts).
func Handler(src Source, hist *History) http.Handler {
	files, err := fs.Sub(static, "static")
	if err != nil {
		panic(err) // the embedded tree is fixed at build time
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) {
		serveFile(w, files, "index.html", "text/html; charset=utf-8")
	})
	mux.Handle("GET /static/", http.StripPrefix("/static/", http.FileServerFS(files)))
	api := func(path string, get func() any) {
		mux.HandleFunc("GET /api/"+path, func(w http.ResponseWriter, r *http.Request) { writeJSON(w, http.StatusOK, get()) })
	}
	api("overview", func() any { return hist.Overview(time.Now()) })
	api("statements", func() any { return nonNil(src.Statements()) })
	api("slow", func() any { return nonNil(src.SlowQueries()) })
	api("processes", func() any { return nonNil(src.Processes()) })
	api("transactions", func() any {
		return struct {
			Transactions []Transaction `json:"transactions"`
			LockWaits    []LockWait    `json:"lock_waits"`
		}{nonNil(src.Transactions()), nonNil(src.LockWaits())}
	})
	mux.HandleFunc("GET /api/heatmap", func(w http.ResponseWriter, r *http.Request) {
		// ?scope=cluster: the whole cluster's, by region.
		h := src.Heatmap
		if r.URL.Query().Get("scope") == "cluster" {
			h = src.ClusterHeatmap
		}
		out := h()
		out.Times, out.Rows = nonNil(out.Times), nonNil(out.Rows)
		writeJSON(w, http.StatusOK, out)
	})
	api("storage", func() any {
		st := src.Storage()
		st.Levels, st.Tables = nonNil(st.Levels), nonNil(st.Tables)
		st.GC.PendingRanges, st.GC.ServiceSafePoints = nonNil(st.GC.PendingRanges), nonNil(st.GC.ServiceSafePoints)
		return st
	})
	api("cluster", func() any {
		c := src.Cluster()
		c.PD, c.Stores, c.Regions = nonNil(c.PD), nonNil(c.Stores), nonNil(c.Regions)
		return c
	})
	mux.HandleFunc("POST /api/kill", func(w http.ResponseWriter, r *http.Request) { serveKill(w, r, src) })
	return mux
}

// nonNil makes a nil slice an empty one, so that JSON has [] not null.
func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

func serveFile(w http.ResponseWriter, files fs.FS, name, contentType string) {
	b, err := fs.ReadFile(files, name)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", contentType)
	_, _ = w.Write(b)
}

// apiError is the JSON of a refused request.
type apiError struct {
	Error string `json:"error"`
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(code)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false) // statements read better with their < and >
	_ = enc.Encode(v)
}

// KillRequest is the body of POST /api/kill.
type KillRequest struct {
	ID uint32 `json:"id"`
	// Query stops the running statement only (KILL QUERY); false closes
	// the connection (KILL CONNECTION).
	Query bool `json:"query"`
}

// maxKillBody bounds the body of POST /api/kill.
const maxKillBody = 1 << 10

func serveKill(w http.ResponseWriter, r *http.Request, src Source) {
	if !sameOrigin(r) {
		writeJSON(w, http.StatusForbidden, apiError{"cross-origin request refused"})
		return
	}
	if ct := r.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		writeJSON(w, http.StatusUnsupportedMediaType, apiError{"Content-Type must be application/json"})
		return
	}
	var req KillRequest
	dec := json.NewDecoder(io.LimitReader(r.Body, maxKillBody))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&req); err != nil || req.ID == 0 {
		writeJSON(w, http.StatusBadRequest, apiError{"want {\"id\": <connection id>, \"query\": true|false}"})
		return
	}
	if err := src.Kill(req.ID, req.Query); err != nil {
		code := http.StatusInternalServerError
		if errors.Is(err, ErrNoConnection) {
			code = http.StatusNotFound
		}
		writeJSON(w, code, apiError{err.Error()})
		return
	}
	writeJSON(w, http.StatusOK, req)
}

// sameOrigin reports whether r comes from a page of this server, or
// from no page at all (curl sends no Origin).
func sameOrigin(r *http.Request) bool {
	o := r.Header.Get("Origin")
	if o == "" {
		return true
	}
	u, err := url.Parse(o)
	return err == nil && u.Host == r.Host
}
