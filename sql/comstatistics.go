package sql

import (
	"fmt"
	"time"

	gsql "github.com/dolthub/go-mysql-server/sql"
)

// statisticsLine is the answer to COM_STATISTICS (package wire), in
// MySQL 8's format (sql_parse.cc, COM_STATISTICS): the node's uptime,
// open connections, statements (GMS's global Questions, which both
// percdb's paths count), slow statements (percdb_slow_queries_total),
// tables opened and open (GMS's globals), and statements per second
// since the start. mariadb-admin status and the client's \s print it.
func (s *Server) statisticsLine() string {
	up := time.Since(s.started)
	secs := max(uint64(up/time.Second), 1)
	questions := globalStatusUint("Questions")
	var slow uint64
	if s.metrics != nil {
		slow = s.metrics.SlowQueries()
	}
	qps := questions * 1000 / secs
	return fmt.Sprintf("Uptime: %d  Threads: %d  Questions: %d  Slow queries: %d  Opens: %d  Open tables: %d  Queries per second avg: %d.%03d",
		uint64(up/time.Second), s.openConns.Load(), questions, slow, globalStatusUint("Opened_tables"), globalStatusUint("Open_tables"),
		qps/1000, qps%1000)
}

// globalStatusUint is the global value of GMS's status variable name as
// a count (0 when it is not one).
func globalStatusUint(name string) uint64 {
	_, v, ok := gsql.StatusVariables.GetGlobal(name)
	if !ok {
		return 0
	}
	switch n := v.(type) {
	case uint64:
		return n
	case int64:
		return uint64(max(n, 0))
	case int:
		return uint64(max(n, 0))
	case uint32:
		return uint64(n)
	case int32:
		return uint64(max(n, 0))
	}
	return 0
}
