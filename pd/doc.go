// Package pd is percdb's placement driver, as PD is TiKV's: the member of
// a cluster that knows where everything is and hands out what must be
// unique. It embeds an etcd member (go.etcd.io/etcd/server/v3/embed) and
// keeps everything durable there, so that pd is stateless besides etcd
// and several pd members (--initial-cluster) form one etcd cluster:
//
//   - the timestamp oracle (package tso), its window bound saved in etcd,
//     served on the TSO protocol (tso/tsopb, batched on one stream per
//     client) next to pd's own service;
//   - the store registry: KV nodes register (PutStore) and get an id, then
//     heartbeat (StoreHeartbeat), say which regions they lead (with each
//     one's size and its reads and writes of the last interval, kept in
//     memory, each interval counted once in the region's totals, and
//     forgotten once the region no longer exists: status.go's addLoad
//     and pruneRegionStats) and where their status port is (kept in the store's
//     record), and learn the regions they hold a replica of;
//   - the region directory: each region's [start, end), id, epoch, its
//     peers (the stores holding its replicas, the members of its raft
//     group) and its leader as last reported (where clients are sent),
//     keyed by start key so that locating a key is one etcd range read;
//     once Config.Replicas stores (3 by default) have registered, the
//     cluster is bootstrapped with one region over the whole key space, a
//     replica on each of the first Config.Replicas stores;
//   - id allocation (AllocID), for stores, regions and splits;
//   - the GC safe point, decided from the SQL nodes' proposals and their
//     reported oldest running start_ts, and sent to the KV nodes with
//     their heartbeats (gc.go).
//
// directory.go documents the etcd keys. While a member leads, it reads
// the stores, the regions and the GC safe point from memory (dircache.go:
// loaded when its term begins, written through by its own changes), with
// each store's replica and leadership counts kept as records change, so
// that a heartbeat costs no etcd read and no walk over every region: its
// cost follows the regions its store reports.
//
// # Heartbeats
//
// heartbeat.go: a store's heartbeat is full (every region it holds) or
// partial (the regions whose report changed since pd acknowledged it: a
// node's own choice between full reports, TiKV's region heartbeats); pd
// keeps what it has of the others, answers the store's region list only
// when one of them changed since the revision the node holds, looks at
// the regions the store leads only when a decision may have something to
// do, and asks for a full report when it has had none from the store in
// its term. A partial heartbeat in which nothing changed costs the same
// with 1,000 regions as with 10,000.
//
// # Leadership
//
// Members campaign for leadership with etcd's election (a lease of
// Config.SessionTTL). Only the leader serves: it opens the oracle from the
// saved window (so its timestamps start above every one a previous leader
// may have issued) and writes the directory; every write, and every save of
// the window, is an etcd transaction conditioned on its election key, so a
// deposed leader cannot write. Other members answer Unavailable, and the
// Client tries the next address.
//
// # Clients
//
// Client calls pd members with failover and retries: a member that is
// down or does not lead is skipped, and a call retries with backoff up to
// ClientOptions.Timeout (and its context) before failing with
// *kv.RouterUnavailableError, which the SQL layer reports as MySQL error
// 9001 ("PD server timeout"). Client is also the oracle's tso.Source over
// the leader's TSO stream. RegionCache is the router of a kvrpc.Client:
// regions located through pd, cached until a region error drops them, and
// refreshed (kvrpc.Refresher) when a region's store cannot be dialled, so
// that a call follows a raft leader elected elsewhere.
//
// # Replica repair
//
// A store silent for longer than Config.MaxStoreDownTime is down; the
// leader of each region with a replica there is asked, in the answer to
// its heartbeat, to replace it with one on a live store (repair.go). The
// directory takes each region's configuration from its leader's reports.
//
// # Splits and leader balance
//
// A region's leader splits it with an id from AllocID (a split names no
// new peers: raft ids are store ids); every store reports its regions'
// ranges and versions with each heartbeat, and the directory takes the
// newer (directory.go's updateRange; a partial heartbeat reports the
// changed ones). With each heartbeat pd may ask the
// store to hand one leadership to a peer store that leads fewer regions
// by a tolerance band, counting the transfers it asked that have not
// landed yet (balance.go).
//
// # Status port
//
// status.go: the leader's read-only JSON API (stores with their state,
// regions, members, the oracle; package pdapi is its contract) and the
// Prometheus families of the cluster, which cmd/percdb serves on pd's
// status port with /status and /debug/pprof/.
//
// # Replica placement
//
// With each heartbeat of a region's leader pd may ask it to move one of
// the region's replicas to another store (placement.go): off a store an
// operator is draining (SetStoreStatus OFFLINE; pd marks it TOMBSTONE
// once it holds nothing), off a store low on space (its heartbeat's
// StoreSpace), or from a store to a lighter one, by the sizes of the
// regions whose replicas they hold (balance by size, counts for regions
// too small to tell apart). Moves are rate limited (Config.MaxMoves at once,
// one new per heartbeat, one per region) and kept in memory; a store that
// was low on space receives no balance replica until it has a margin
// above the line again, a store that registered again (its node
// restarted) none until it heartbeats, a region's replica goes back onto
// a store a move took it off lately only when no other store can take
// it, and pd logs when replicas must move and no store can take them.
// With Config.LocationLabels a region's replicas go to stores whose
// labels differ at the outermost level they can (labels.go).
//
// # What comes next
//
// Merges, placement rules beyond location labels (docs/cluster.md).
package pd
