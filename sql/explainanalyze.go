package sql

import (
	"context"
	"fmt"
	"io"
	"reflect"
	"strings"
	"sync"
	"time"

	gsql "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/vitess/go/mysql"
)

// EXPLAIN ANALYZE runs the statement and answers its plan as a tree, one
// line per operator with what it did, in MySQL 8's words:
//
//	-> Filter  (actual time=0.012..0.350 rows=42 loops=1)
//	    -> Table scan on t  (actual time=0.010..0.300 rows=1000 loops=1)
//
// time is milliseconds from the operator's start to its first row and to
// its last (end of rows), averaged over its loops; rows the rows it
// returned a loop, averaged; loops how many times it was started (an
// inner side of a nested loop once per outer row). An operator that
// never started says "(never executed)", as MySQL's; one its parent read
// through its own iterator (a lookup join's batched index reads) says
// "(within its parent)".
//
// Every iterator of the statement built while it runs passes through
// compatBuilder.Build; under EXPLAIN ANALYZE the context carries an
// operatorStats, and Build builds each node's iterator (letting GMS build
// it when percdb does not) and wraps it in a timedIter counting into the
// node's entry. The statement's rows are read and dropped. GMS answered
// EXPLAIN ANALYZE with its plan text and row counts of its joins only.
// Statements that change data are refused with 1235, as GMS refused them
// (MySQL 8 runs multi-table UPDATE and DELETE under EXPLAIN ANALYZE).

// operatorStatsKey is the context key of a statement's operatorStats.
type operatorStatsKey struct{}

// operatorStats is what each operator of one EXPLAIN ANALYZE did, by
// plan node. The statement's iterators may run on several goroutines
// (GMS's exchange, parallel region reads), hence the lock.
type operatorStats struct {
	mu sync.Mutex
	// byNode holds the counts of each node built (comparable nodes
	// only: a node of another kind is left uncounted).
	byNode map[gsql.Node]*operatorCounts
	// building marks the nodes whose iterator Build is building now, so
	// that the second Build of one (GMS's, for a node percdb does not
	// build itself) is not wrapped again.
	building map[gsql.Node]bool
}

// operatorCounts is one operator's work.
type operatorCounts struct {
	loops, rows       int64
	firstRow, lastRow time.Duration // summed over loops
	loopsWithRows     int64
}

// statsOf returns ctx's operatorStats, or nil outside EXPLAIN ANALYZE.
func statsOf(ctx *gsql.Context) *operatorStats {
	s, _ := ctx.Context.Value(operatorStatsKey{}).(*operatorStats)
	return s
}

// startBuild reports whether n's iterator is to be timed now, and marks
// it being built; done must be called after.
func (s *operatorStats) startBuild(n gsql.Node) bool {
	if n == nil || !reflect.TypeOf(n).Comparable() {
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.building[n] {
		return false
	}
	s.building[n] = true
	return true
}

// doneBuild ends what startBuild began.
func (s *operatorStats) doneBuild(n gsql.Node) {
	s.mu.Lock()
	delete(s.building, n)
	s.mu.Unlock()
}

// counts returns n's entry, made on first use.
func (s *operatorStats) counts(n gsql.Node) *operatorCounts {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.byNode[n]
	if c == nil {
		c = &operatorCounts{}
		s.byNode[n] = c
	}
	return c
}

// lookup returns n's entry, nil when n never started.
func (s *operatorStats) lookup(n gsql.Node) *operatorCounts {
	if n == nil || !reflect.TypeOf(n).Comparable() {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.byNode[n]
}

// buildTimed builds n's iterator and times it into stats.
func (b *compatBuilder) buildTimed(ctx *gsql.Context, stats *operatorStats, n gsql.Node, row gsql.Row) (gsql.RowIter, error) {
	defer stats.doneBuild(n)
	start := time.Now()
	iter, err := b.gms.Build(ctx, n, row)
	if err != nil {
		return nil, err
	}
	c := stats.counts(n)
	stats.mu.Lock()
	c.loops++
	stats.mu.Unlock()
	return &timedIter{child: iter, stats: stats, counts: c, start: start}, nil
}

// timedIter counts the rows of one loop of an operator and the time to
// its first and last.
type timedIter struct {
	child  gsql.RowIter
	stats  *operatorStats
	counts *operatorCounts
	start  time.Time
	rows   int64
	ended  bool
}

// Next implements sql.RowIter.
func (t *timedIter) Next(ctx *gsql.Context) (gsql.Row, error) {
	r, err := t.child.Next(ctx)
	if err == nil {
		t.rows++
		if t.rows == 1 {
			t.stats.mu.Lock()
			t.counts.firstRow += time.Since(t.start)
			t.counts.loopsWithRows++
			t.stats.mu.Unlock()
		}
		return r, nil
	}
	t.end()
	return r, err
}

// end records the loop's rows and time, once.
func (t *timedIter) end() {
	if t.ended {
		return
	}
	t.ended = true
	t.stats.mu.Lock()
	t.counts.rows += t.rows
	t.counts.lastRow += time.Since(t.start)
	t.stats.mu.Unlock()
}

// Close implements sql.RowIter.
func (t *timedIter) Close(ctx *gsql.Context) error {
	t.end()
	return t.child.Close(ctx)
}

// explainAnalyze runs query (the plan EXPLAIN ANALYZE describes) and
// answers its tree with what each operator did.
func (b *compatBuilder) explainAnalyze(ctx *gsql.Context, query gsql.Node, row gsql.Row) (gsql.RowIter, error) {
	if !plan.IsReadOnly(query) {
		return nil, mysql.NewSQLError(mysql.ERNotSupportedYet, mysql.SSUnknownSQLState,
			"This version of MySQL doesn't yet support 'EXPLAIN ANALYZE of a statement that changes data'")
	}
	stats := &operatorStats{byNode: map[gsql.Node]*operatorCounts{}, building: map[gsql.Node]bool{}}
	actx := ctx.WithContext(context.WithValue(ctx.Context, operatorStatsKey{}, stats))
	iter, err := b.gms.Build(actx, query, row)
	if err != nil {
		return nil, err
	}
	for {
		if _, err = iter.Next(actx); err != nil {
			break
		}
	}
	cerr := iter.Close(actx)
	if err != io.EOF {
		return nil, err
	}
	if cerr != nil {
		return nil, cerr
	}
	var out strings.Builder
	writeAnalyzed(&out, stats, query, 0, true)
	return gsql.RowsToRowIter(gsql.NewRow(strings.TrimRight(out.String(), "\n"))), nil
}

// writeAnalyzed writes n's line at depth and its children's below;
// parentRan says n's parent started.
func writeAnalyzed(out *strings.Builder, stats *operatorStats, n gsql.Node, depth int, parentRan bool) {
	out.WriteString(strings.Repeat("    ", depth))
	out.WriteString("-> ")
	out.WriteString(operatorName(n))
	c := stats.lookup(n)
	ran := c != nil && c.loops > 0
	switch {
	case ran:
		loops := float64(c.loops)
		first, last := 0.0, float64(c.lastRow.Microseconds())/1000/loops
		if c.loopsWithRows > 0 {
			first = float64(c.firstRow.Microseconds()) / 1000 / float64(c.loopsWithRows)
		}
		fmt.Fprintf(out, "  (actual time=%.3f..%.3f rows=%s loops=%d)\n", first, last, rowsPerLoop(c.rows, c.loops), c.loops)
	case parentRan:
		// Read by its parent's own iterator (a lookup join's batched
		// index reads, a pushed-down read), not built as an operator:
		// its work is in the parent's figures.
		out.WriteString("  (within its parent)\n")
	default:
		out.WriteString("  (never executed)\n")
	}
	for _, child := range n.Children() {
		writeAnalyzed(out, stats, child, depth+1, ran || parentRan && c == nil)
	}
}

// rowsPerLoop is rows / loops as MySQL writes it: whole when it is, else
// with two digits.
func rowsPerLoop(rows, loops int64) string {
	if rows%loops == 0 {
		return fmt.Sprint(rows / loops)
	}
	return fmt.Sprintf("%.2f", float64(rows)/float64(loops))
}

// operatorName is the first line of n's plan text, its conditions and
// columns left to EXPLAIN FORMAT=TREE.
func operatorName(n gsql.Node) string {
	s := n.String()
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	return strings.TrimSpace(s)
}
