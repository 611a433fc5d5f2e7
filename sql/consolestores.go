package sql

import (
	"context"
	"fmt"
	"sync"

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
