package sql

import (
	"context"
	"fmt"
	"sync"

	"github.com/percdb/percdb/executor/tablecodec"
	"github.com/percdb/percdb/internal/statusserver"
	"github.com/percdb/percdb/pd/pdapi"
	"github.com/percdb/percdb/sql/console"
)

// The Storage page of a SQL node of a cluster: each KV node's store, read
// from the node's status port (/store), whose address the node registered
// with pd and pd's API lists. The SQL node reads them for the browser, so
// that an operator needs to reach one address, and the KV nodes' ports may
// listen where only the cluster's machines reach them.

// kvStorePath is a KV node's status document of its store (kv/node's
// StoreStatus), of which console.StoreStorage is the part the page shows.
const kvStorePath = "/store"

// clusterStores lists the cluster's stores from pd and reads each one's
// figures from its status port, all at once; a store whose figures
// cannot be read is listed with the reason. Stores removed from the
// cluster (drained) are left out.
func (c consoleSource) clusterStores(ctx context.Context) []console.StoreStorage {
	cl := c.s.cfg.Cluster
	if cl == nil || len(cl.PDStatus) == 0 {
		return nil
	}
	var stores []pdapi.StoreInfo
	if err := getFromPD(ctx, cl.PDStatus, pdapi.PathStores, &stores); err != nil {
		return []console.StoreStorage{{Error: err.Error()}}
	}
	var out []console.StoreStorage
	for _, st := range stores {
		if st.Placement == pdapi.PlacementRemoved {
			continue
		}
		out = append(out, console.StoreStorage{ID: st.ID, Addr: st.Addr, StatusAddr: st.StatusAddr})
	}
	var wg sync.WaitGroup
	for i := range out {
		s := &out[i]
		if s.StatusAddr == "" {
			s.Error = "no status port registered with pd (the node runs with --status-port 0, or predates status addresses)"
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			id, addr, status := s.ID, s.Addr, s.StatusAddr
			if err := getJSON(ctx, "http://"+status+kvStorePath, s); err != nil {
				*s = console.StoreStorage{ID: id, Addr: addr, StatusAddr: status, Error: err.Error()}
				return
			}
			if s.ID != id {
				// A status port now serving another store (a node moved).
				*s = console.StoreStorage{ID: id, Addr: addr, StatusAddr: status,
					Error: fmt.Sprintf("the status port %s serves store %d", status, s.ID)}
			}
			s.StatusAddr = status
		}()
	}
	wg.Wait()
	return out
}

// clusterTables asks each store that answered (those of stores without an
// error) for the sizes of the catalog's tables (statusserver's
// /store/sizes: only the SQL node knows which key ranges are tables),
// fills in each store's largest tables, and returns the cluster's
// largest: each table's bytes on every store summed, every replica
// counted, as the disks hold them.
func (c consoleSource) clusterTables(ctx context.Context, stores []console.StoreStorage) []console.TableSize {
	names := c.tableNames()
	ids := make([]int64, 0, min(len(names), storageTablesMeasured))
	for id := range names {
		if len(ids) == storageTablesMeasured {
			break
		}
		ids = append(ids, id)
	}
	if len(ids) == 0 {
		return nil
	}
	req := statusserver.SizesRequest{Ranges: make([][2][]byte, len(ids))}
	for i, id := range ids {
		start, end := tablecodec.TableRange(id)
		req.Ranges[i] = [2][]byte{start, end}
	}
	sized := func(bytes []uint64) []console.TableSize {
		out := make([]console.TableSize, len(ids))
		for i, id := range ids {
			out[i] = console.TableSize{Table: names[id], Bytes: bytes[i]}
		}
		return largestFirst(out)
	}
	total := make([]uint64, len(ids))
	answered := 0
	var mu sync.Mutex
	var wg sync.WaitGroup
	for i := range stores {
		s := &stores[i]
		if s.Error != "" {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			var ans statusserver.SizesAnswer
			if err := postJSON(ctx, "http://"+s.StatusAddr+statusserver.StoreSizesPath, req, &ans); err != nil {
				s.TablesError = err.Error()
				return
			}
			if len(ans.Bytes) != len(ids) {
				s.TablesError = fmt.Sprintf("%d sizes for %d tables", len(ans.Bytes), len(ids))
				return
			}
			s.Tables = sized(ans.Bytes)
			mu.Lock()
			for i, n := range ans.Bytes {
				total[i] += n
			}
			answered++
			mu.Unlock()
		}()
	}
	wg.Wait()
	if answered == 0 {
		return nil
	}
	return sized(total)
}
