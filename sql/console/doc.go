// Package console is percdb's web console, served on the status port
// (package internal/statusserver) from files embedded in the binary
// (embed.FS): no build step, no CDN, nothing fetched from the network, so
// that it works on a machine without internet.
//
// Pages (one HTML page, switched by the URL's fragment):
//
//   - overview: queries per second, latency percentiles, connections and
//     transaction outcomes over the last minutes, as charts (SVG drawn by
//     the page's own script) from History, which samples the node's
//     Prometheus registry;
//   - statements: the statement statistics by digest, sortable, with the
//     sample statement of each;
//   - slow queries: the latest statements over long_query_time;
//   - processes: the connections, each with KILL QUERY and KILL buttons;
//   - transactions: the open transactions and the lock waits;
//   - key heatmap: where reads and writes went in the key space over time;
//   - storage: the disk (free space, the reserve, the full state), the
//     LSM's levels and compaction debt, the largest tables, and the
//     garbage collector (safe point, last run, ranges of dropped tables
//     waiting, service safe points that hold it back).
//
// The pages read JSON endpoints under /api/ (Handler), which are part of
// the status port's interface and are tested as such. POST /api/kill is
// the only one that changes anything; it takes JSON only and refuses a
// request whose Origin is another site's, so that a web page in the
// operator's browser cannot post to it (a cross-site form cannot send
// application/json without the browser asking first). The status port
// has no authentication: it listens on 127.0.0.1 unless told otherwise
// (docs/operations.md).
//
// The package knows nothing of SQL: the node hands it a Source.
package console
