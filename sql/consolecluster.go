package sql

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"slices"
	"time"

	"github.com/percdb/percdb/pd/pdapi"
	"github.com/percdb/percdb/sql/console"
	"github.com/percdb/percdb/sql/keyviz"
	"github.com/percdb/percdb/sql/split"
)

// The console's Cluster page on a SQL node of a cluster: the stores, the
// regions, the pd members and the oracle, read from pd's read-only JSON
// API on its status port (its contract is package pd/pdapi, types only:
// this package does not link pd), each range decoded to the table or
// index it starts in, and the regions' reads and writes as their leaders
// reported them to pd: the whole cluster's traffic, whichever SQL node
// sent it.

// pdAPITimeout bounds the reads of one Cluster page.
const pdAPITimeout = 10 * time.Second

// pdAPI is what the page reads of pd's API.
type pdAPI struct {
	Stores  []pdapi.StoreInfo
	Members []pdapi.Member
	Oracle  pdapi.TSOInfo
	Regions []pdapi.RegionRecord
}

// Cluster implements console.Source.
func (c consoleSource) Cluster() console.Cluster {
	cl := c.s.cfg.Cluster
	if cl == nil {
		return console.Cluster{}
	}
	out := console.Cluster{InCluster: true}
	if len(cl.PDStatus) == 0 {
		out.Error = "pd's status ports are not known to this SQL node (--pd-status)"
		return out
	}
	ctx, cancel := context.WithTimeout(context.Background(), pdAPITimeout)
	defer cancel()
	var api pdAPI
	if err := readPDAPI(ctx, cl.PDStatus, &api); err != nil {
		out.Error = err.Error()
		return out
	}
	out.PD, out.Stores = api.Members, api.Stores
	out.Oracle = console.ClusterOracle{Timestamp: api.Oracle.Timestamp, Physical: api.Oracle.Physical, WindowBound: api.Oracle.WindowBound}
	tables, dbNames := c.catalogTables()
	for _, r := range api.Regions {
		l := r.Load
		out.Regions = append(out.Regions, console.ClusterRegion{ID: r.ID, Start: split.KeyString(r.Start), End: split.KeyString(r.End),
			Table: spanLabel(keyviz.SpanOf(r.Start), tables, dbNames), Version: r.Version, ConfVer: r.ConfVer, Peers: r.Peers, Learners: r.Learners, Leader: r.Leader,
			ApproximateSize: r.ApproximateSize, ReadKeysPS: l.PerSecond(l.ReadKeys), ReadBytesPS: l.PerSecond(l.ReadBytes),
			WriteKeysPS: l.PerSecond(l.WrittenKeys), WriteBytesPS: l.PerSecond(l.WrittenBytes)})
	}
	return out
}

// orderByRegion puts the heatmap's rows of a SQL node of a cluster
// (spans by region: keyviz.Options.ByRegion) in the key order of their
// regions, as pd lists them now, and gives each its range; a region pd
// no longer lists (split or gone since) keeps its place after the
// listed ones, and the overflow row stays last. Without pd's list the
// rows keep keyviz's order (table, part, region id).
func (c consoleSource) orderByRegion(rows []console.HeatmapRow, spans []keyviz.Span) {
	cl := c.s.cfg.Cluster
	if cl == nil || len(cl.PDStatus) == 0 || len(rows) == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), pdAPITimeout)
	defer cancel()
	var regions []pdapi.RegionRecord
	if err := getFromPD(ctx, cl.PDStatus, pdapi.PathRegions, &regions); err != nil {
		slog.Debug("console: heatmap regions", "err", err)
		return
	}
	byID := make(map[uint64]pdapi.RegionRecord, len(regions))
	for _, r := range regions {
		byID[r.ID] = r
	}
	// rank: 0 listed (by start key), 1 not listed, 2 overflow.
	type sortKey struct {
		rank  int
		start string
		at    int
	}
	keys := make([]sortKey, len(rows))
	for i, sp := range spans {
		k := sortKey{rank: 1, at: i}
		if r, ok := byID[sp.Region]; ok {
			k.rank, k.start = 0, string(r.Start)
			rows[i].Range = split.KeyString(r.Start) + " .. " + split.KeyString(r.End)
		}
		if sp.Part == keyviz.PartOverflow {
			k.rank = 2
		}
		keys[i] = k
	}
	idx := make([]int, len(rows))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int {
		ka, kb := keys[a], keys[b]
		return cmp.Or(cmp.Compare(ka.rank, kb.rank), cmp.Compare(ka.start, kb.start), cmp.Compare(ka.at, kb.at))
	})
	sorted := make([]console.HeatmapRow, len(rows))
	for i, j := range idx {
		sorted[i] = rows[j]
	}
	copy(rows, sorted)
}

// readPDAPI reads the stores, regions, members and oracle from the first
// pd member in addrs that answers them all (the leader: the others
// answer 503).
func readPDAPI(ctx context.Context, addrs []string, api *pdAPI) error {
	var errs []error
	for _, a := range addrs {
		err := errors.Join(
			getJSON(ctx, "http://"+a+pdapi.PathStores, &api.Stores),
			getJSON(ctx, "http://"+a+pdapi.PathRegions, &api.Regions),
			getJSON(ctx, "http://"+a+pdapi.PathMembers, &api.Members),
			getJSON(ctx, "http://"+a+pdapi.PathTSO, &api.Oracle))
		if err == nil {
			return nil
		}
		errs = append(errs, fmt.Errorf("pd status port %s: %w", a, err))
	}
	return errors.Join(errs...)
}

// getFromPD decodes pd's API document at path from the first pd member
// in addrs that answers it (the leader: the others answer 503).
func getFromPD(ctx context.Context, addrs []string, path string, v any) error {
	var errs []error
	for _, a := range addrs {
		err := getJSON(ctx, "http://"+a+path, v)
		if err == nil {
			return nil
		}
		errs = append(errs, fmt.Errorf("pd status port %s: %w", a, err))
	}
	return errors.Join(errs...)
}

// getJSON decodes the JSON answer of a GET of url into v.
func getJSON(ctx context.Context, url string, v any) error {
	return doJSON(ctx, http.MethodGet, url, nil, v)
}

// postJSON posts body in JSON to url and decodes the JSON answer into v.
func postJSON(ctx context.Context, url string, body, v any) error {
	b, err := json.Marshal(body)
	if err != nil {
		return fmt.Errorf("POST %s: %w", url, err)
	}
	return doJSON(ctx, http.MethodPost, url, bytes.NewReader(b), v)
}

// doJSON sends a request of method to url with body (nil: none) and
// decodes the JSON answer into v.
func doJSON(ctx context.Context, method, url string, body io.Reader, v any) error {
	req, err := http.NewRequestWithContext(ctx, method, url, body)
	if err != nil {
		return err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s %s: %s", method, url, resp.Status)
	}
	if err := json.NewDecoder(resp.Body).Decode(v); err != nil {
		return fmt.Errorf("%s %s: %w", method, url, err)
	}
	return nil
}
