package elle

import (
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"
	"time"
)

// Anomaly names a class of isolation violation, as Elle names them.
type Anomaly string

// Cycle classes (see the package documentation) and the other anomalies a
// list-append history can show.
const (
	G0              Anomaly = "G0"
	G1a             Anomaly = "G1a"
	G1b             Anomaly = "G1b"
	G1c             Anomaly = "G1c"
	GSingle         Anomaly = "G-single"
	G2Item          Anomaly = "G2-item"
	G0RealTime      Anomaly = "G0-realtime"
	G1cRealTime     Anomaly = "G1c-realtime"
	GSingleRealTime Anomaly = "G-single-realtime"
	G2ItemRealTime  Anomaly = "G2-item-realtime"

	// Internal: a transaction's read of a key is not what its own earlier
	// read and appends imply.
	Internal Anomaly = "internal"
	// DuplicateElements: a read list holds the same element twice.
	DuplicateElements Anomaly = "duplicate-elements"
	// IncompatibleOrder: two reads of a key, neither a prefix of the other.
	IncompatibleOrder Anomaly = "incompatible-order"
	// GarbageRead: a read holds an element no transaction appended.
	GarbageRead Anomaly = "garbage-read"
)

// Allowed reports whether snapshot isolation permits the anomaly: only
// write skew (G2-item) is.
func (a Anomaly) Allowed() bool { return a == G2Item || a == G2ItemRealTime }

// CheckOptions tunes Check. The zero value checks strong snapshot isolation
// with the defaults given for each field.
type CheckOptions struct {
	// SkipRealTime leaves real-time edges out of the graph, for a system that
	// promises snapshot isolation but not that a transaction sees every
	// transaction that committed before it began. Default false: percdb's
	// timestamp oracle promises it.
	SkipRealTime bool
	// MaxExamples is how many examples of each anomaly the result keeps.
	// Default 8.
	MaxExamples int
	// SearchBudget bounds the edges the G-single search visits in one
	// strongly connected component, so that a huge component cannot stall
	// the check; Result.Truncated counts the components where it ran out.
	// Default 50,000,000.
	SearchBudget int
	// ReadCommitted checks READ COMMITTED (Adya's PL-2, MySQL's and
	// percdb's pessimistic READ COMMITTED) instead: each statement reads
	// committed data, so a read of a key the transaction has not appended
	// to tells what it saw of others even after an earlier read of the
	// key (a non-repeatable read, not an internal anomaly), and G-single
	// (read skew, lost update) and G2-item cycles are allowed. G0, G1a,
	// G1b, G1c, a read not ending with the transaction's own appends,
	// and the rest stay forbidden. Default false: snapshot isolation.
	ReadCommitted bool
}

// Result is what Check found.
type Result struct {
	// Txns is the number of transactions in the history; OK, Failed and
	// Info split it by outcome.
	Txns, OK, Failed, Info int
	// Checked is the number of committed transactions in the dependency
	// graph: every ok transaction, and every info one whose appends were
	// read (so it did commit).
	Checked int
	// Edges counts the dependency edges by kind ("ww", "wr", "rw", "rt"); a
	// pair of transactions linked in several ways counts once per kind.
	Edges map[string]int
	// Counts is the number of occurrences of each anomaly: one per cycle
	// class per strongly connected component, one per offending read or
	// transaction otherwise.
	Counts map[Anomaly]int
	// Examples holds up to MaxExamples descriptions per anomaly.
	Examples map[Anomaly][]string
	// Truncated is the number of components whose G-single search ran out
	// of SearchBudget; a cycle there may have been missed.
	Truncated int
	// ReadCommitted: the history was checked for READ COMMITTED
	// (CheckOptions.ReadCommitted).
	ReadCommitted bool
}

// allowed reports whether the level the history was checked for permits
// anomaly a.
func (r *Result) allowed(a Anomaly) bool {
	if r.ReadCommitted && (a == GSingle || a == GSingleRealTime) {
		return true
	}
	return a.Allowed()
}

// level names the level the history was checked for.
func (r *Result) level() string {
	if r.ReadCommitted {
		return "read committed"
	}
	return "snapshot isolation"
}

// Valid reports whether the history shows no anomaly that snapshot
// isolation forbids.
func (r *Result) Valid() bool {
	for a, n := range r.Counts {
		if n > 0 && !r.allowed(a) {
			return false
		}
	}
	return true
}

// Forbidden returns the number of anomalies snapshot isolation forbids.
func (r *Result) Forbidden() int {
	n := 0
	for a, c := range r.Counts {
		if !r.allowed(a) {
			n += c
		}
	}
	return n
}

// WriteReport prints the counts, then the examples, in a stable order.
func (r *Result) WriteReport(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "transactions: %d (ok %d, fail %d, info %d); checked (committed, in the graph): %d\n",
		r.Txns, r.OK, r.Failed, r.Info, r.Checked)
	fmt.Fprintf(&b, "edges: ww %d, wr %d, rw %d, rt %d\n", r.Edges["ww"], r.Edges["wr"], r.Edges["rw"], r.Edges["rt"])
	names := make([]string, 0, len(r.Counts))
	for a := range r.Counts {
		names = append(names, string(a))
	}
	sort.Strings(names)
	if len(names) == 0 {
		b.WriteString("anomalies: none\n")
	}
	for _, a := range names {
		note := ""
		if r.allowed(Anomaly(a)) {
			note = " (allowed under " + r.level() + ")"
		}
		fmt.Fprintf(&b, "anomaly %s: %d%s\n", a, r.Counts[Anomaly(a)], note)
	}
	if r.Truncated > 0 {
		fmt.Fprintf(&b, "warning: G-single search cut short in %d components\n", r.Truncated)
	}
	for _, a := range names {
		for _, ex := range r.Examples[Anomaly(a)] {
			fmt.Fprintf(&b, "\n%s: %s\n", a, ex)
		}
	}
	if r.Valid() {
		fmt.Fprintf(&b, "\nvalid under %s\n", r.level())
	} else {
		fmt.Fprintf(&b, "\nNOT valid under %s: %d forbidden anomalies\n", r.level(), r.Forbidden())
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// elem is one appended element: a key and a value unique for that key.
type elem struct{ key, val int }

// writeRef says who appended an element.
type writeRef struct {
	txn int32
	// last is true when this was the transaction's final append to the key:
	// a version anyone else may legitimately read.
	last bool
}

// externalRead is a transaction's first read of a key, made before the
// transaction appended to it: the only kind of read that tells what the
// transaction saw of others.
type externalRead struct {
	key  int
	list []int
}

type checker struct {
	h    []Txn
	opts CheckOptions
	res  *Result

	writer   map[elem]writeRef
	external [][]externalRead // per transaction
	order    map[int][]int    // key -> version order, oldest first
	pos      map[elem]int     // element -> index in its key's order
	badKey   map[int]bool     // keys whose reads are incompatible

	node  []int32 // transaction -> graph node, or -1
	txnOf []int32 // graph node -> transaction
	g     *graph
}

// Check analyses a list-append history and reports its anomalies under
// snapshot isolation. It returns an error, and no result, for a history it
// cannot interpret: an unknown status or kind, an element appended twice,
// or a committed read without a result.
func Check(h []Txn, opts CheckOptions) (*Result, error) {
	if opts.MaxExamples == 0 {
		opts.MaxExamples = 8
	}
	if opts.SearchBudget == 0 {
		opts.SearchBudget = 50_000_000
	}
	c := &checker{
		h:    h,
		opts: opts,
		res: &Result{
			Txns:     len(h),
			Edges:    make(map[string]int),
			Counts:   make(map[Anomaly]int),
			Examples: make(map[Anomaly][]string),

			ReadCommitted: opts.ReadCommitted,
		},
		writer:   make(map[elem]writeRef),
		external: make([][]externalRead, len(h)),
		order:    make(map[int][]int),
		pos:      make(map[elem]int),
		badKey:   make(map[int]bool),
	}
	if err := c.index(); err != nil {
		return nil, err
	}
	c.internal()
	c.versionOrders()
	c.dirtyReads()
	c.buildGraph()
	c.cycles()
	return c.res, nil
}

func (c *checker) report(a Anomaly, format string, args ...any) {
	c.res.Counts[a]++
	if len(c.res.Examples[a]) < c.opts.MaxExamples {
		c.res.Examples[a] = append(c.res.Examples[a], fmt.Sprintf(format, args...))
	}
}

func (c *checker) name(t int32) string { return fmt.Sprintf("T%d", t) }

// index validates the history and records who appended each element.
func (c *checker) index() error {
	for i := range c.h {
		t := &c.h[i]
		switch t.Status {
		case OK:
			c.res.OK++
		case Fail:
			c.res.Failed++
		case Info:
			c.res.Info++
		default:
			return fmt.Errorf("check: transaction %d: unknown status %d", i, t.Status)
		}
		lastAppend := make(map[int]int) // key -> index of the last append op
		for j, m := range t.Ops {
			switch m.Kind {
			case Append:
				e := elem{m.Key, m.Value}
				if w, dup := c.writer[e]; dup {
					return fmt.Errorf("check: transaction %d appends %d to key %d, already appended by transaction %d: values must be unique per key",
						i, m.Value, m.Key, w.txn)
				}
				c.writer[e] = writeRef{txn: int32(i)}
				lastAppend[m.Key] = j
			case Read:
				if t.Status == OK && m.List == nil {
					return fmt.Errorf("check: transaction %d committed but its read of key %d has no result", i, m.Key)
				}
			default:
				return fmt.Errorf("check: transaction %d op %d: unknown kind %d", i, j, m.Kind)
			}
		}
		for k, j := range lastAppend {
			c.writer[elem{k, t.Ops[j].Value}] = writeRef{txn: int32(i), last: true}
		}
	}
	return nil
}

// internal checks each committed transaction against itself: every read of
// a key must be its previous read plus its own appends since, or end with
// its own appends when it had not read the key before. It also records the
// external reads and checks reads for duplicates and garbage.
func (c *checker) internal() {
	type keyState struct {
		known   bool  // list holds the whole expected value
		list    []int // expected value when known, else the own appends
		written bool
		own     []int // the own appends (READ COMMITTED)
	}
	for i := range c.h {
		t := &c.h[i]
		if t.Status != OK {
			continue
		}
		state := make(map[int]*keyState)
		for _, m := range t.Ops {
			st := state[m.Key]
			if st == nil {
				st = &keyState{}
				state[m.Key] = st
			}
			if m.Kind == Append {
				st.list = append(st.list, m.Value)
				st.own = append(st.own, m.Value)
				st.written = true
				continue
			}
			c.checkElements(int32(i), m)
			if c.opts.ReadCommitted {
				// Every read sees the latest commit: one before the
				// transaction appended to the key is external; after,
				// the key is locked, and the read ends with every
				// own append.
				switch {
				case !st.written:
					c.external[i] = append(c.external[i], externalRead{key: m.Key, list: m.List})
				case !hasSuffix(m.List, st.own):
					c.report(Internal, "%s read key %d as %s, which does not end with its own appends %s\n  %s = %s",
						c.name(int32(i)), m.Key, formatList(m.List), formatList(st.own), c.name(int32(i)), t)
				}
				continue
			}
			switch {
			case !st.known && !st.written:
				c.external[i] = append(c.external[i], externalRead{key: m.Key, list: m.List})
			case st.known && !slices.Equal(m.List, st.list):
				c.report(Internal, "%s read key %d as %s, but its earlier read and own appends make it %s\n  %s = %s",
					c.name(int32(i)), m.Key, formatList(m.List), formatList(st.list), c.name(int32(i)), t)
			case !st.known && !hasSuffix(m.List, st.list):
				c.report(Internal, "%s read key %d as %s, which does not end with its own appends %s\n  %s = %s",
					c.name(int32(i)), m.Key, formatList(m.List), formatList(st.list), c.name(int32(i)), t)
			}
			st.known = true
			st.list = slices.Clone(m.List)
		}
	}
}

func hasSuffix(l, suffix []int) bool {
	return len(l) >= len(suffix) && slices.Equal(l[len(l)-len(suffix):], suffix)
}

// checkElements reports duplicate and garbage elements in a committed read.
func (c *checker) checkElements(t int32, m MicroOp) {
	seen := make(map[int]bool, len(m.List))
	dup, garbage := false, false
	for _, x := range m.List {
		if seen[x] && !dup {
			dup = true
			c.report(DuplicateElements, "%s read key %d as %s: %d appears twice", c.name(t), m.Key, formatList(m.List), x)
		}
		seen[x] = true
		if _, ok := c.writer[elem{m.Key, x}]; !ok && !garbage {
			garbage = true
			c.report(GarbageRead, "%s read key %d as %s: nobody appended %d", c.name(t), m.Key, formatList(m.List), x)
		}
	}
}

// versionOrders takes, for each key, the longest committed read as its
// version order, and reports reads that are not prefixes of it. When the
// reads of a key disagree, the external reads alone (what transactions saw
// of each other, without their own appends) still give an order if they
// agree among themselves, so that the cycles behind the disagreement are
// found too.
func (c *checker) versionOrders() {
	all := make(map[int][][]int)
	external := make(map[int][][]int)
	for i := range c.h {
		if c.h[i].Status != OK {
			continue
		}
		for _, m := range c.h[i].Ops {
			if m.Kind == Read {
				all[m.Key] = append(all[m.Key], m.List)
			}
		}
		for _, r := range c.external[i] {
			external[r.key] = append(external[r.key], r.list)
		}
	}
	keys := make([]int, 0, len(all))
	for k := range all {
		keys = append(keys, k)
	}
	sort.Ints(keys)
	for _, k := range keys {
		longest, a, b := prefixOrder(all[k])
		if longest == nil {
			c.report(IncompatibleOrder, "key %d read as %s and as %s", k, formatList(a), formatList(b))
			if longest, _, _ = prefixOrder(external[k]); longest == nil {
				c.badKey[k] = true
				continue
			}
		}
		c.order[k] = longest
		for p, x := range longest {
			if _, dup := c.pos[elem{k, x}]; !dup {
				c.pos[elem{k, x}] = p
			}
		}
	}
}

// dirtyReads reports committed reads of failed transactions' appends (G1a)
// and of appends their writer later followed with another (G1b).
func (c *checker) dirtyReads() {
	for i := range c.h {
		t := &c.h[i]
		if t.Status != OK {
			continue
		}
		aborted := make(map[int32]bool)
		for _, m := range t.Ops {
			if m.Kind != Read {
				continue
			}
			for _, x := range m.List {
				w, ok := c.writer[elem{m.Key, x}]
				if ok && c.h[w.txn].Status == Fail && !aborted[w.txn] {
					aborted[w.txn] = true
					c.report(G1a, "%s read key %d as %s, but %d was appended by %s, which failed\n  %s = %s\n  %s = %s",
						c.name(int32(i)), m.Key, formatList(m.List), x, c.name(w.txn),
						c.name(int32(i)), t, c.name(w.txn), c.h[w.txn])
				}
			}
		}
		for _, r := range c.external[i] {
			if len(r.list) == 0 {
				continue
			}
			x := r.list[len(r.list)-1]
			if w, ok := c.writer[elem{r.key, x}]; ok && !w.last && w.txn != int32(i) {
				c.report(G1b, "%s read key %d as %s, but %s appended more to key %d after %d\n  %s = %s\n  %s = %s",
					c.name(int32(i)), r.key, formatList(r.list), c.name(w.txn), r.key, x,
					c.name(int32(i)), t, c.name(w.txn), c.h[w.txn])
			}
		}
	}
}

// buildGraph adds a node per committed transaction and the ww, wr, rw and
// (unless skipped) rt edges between them.
func (c *checker) buildGraph() {
	c.node = make([]int32, len(c.h))
	for i := range c.h {
		c.node[i] = -1
		if c.h[i].Status == OK {
			c.node[i] = int32(len(c.txnOf))
			c.txnOf = append(c.txnOf, int32(i))
		}
	}
	keys := make([]int, 0, len(c.order))
	for k := range c.order {
		keys = append(keys, k)
	}
	sort.Ints(keys)
	for _, k := range keys {
		for _, x := range c.order[k] {
			w, ok := c.writer[elem{k, x}]
			if ok && c.h[w.txn].Status == Info && c.node[w.txn] < 0 {
				c.node[w.txn] = int32(len(c.txnOf))
				c.txnOf = append(c.txnOf, w.txn)
			}
		}
	}
	c.res.Checked = len(c.txnOf)
	b := newGraphBuilder(len(c.txnOf))
	writerNode := func(k, x int) int32 {
		w, ok := c.writer[elem{k, x}]
		if !ok {
			return -1
		}
		return c.node[w.txn]
	}
	for _, k := range keys {
		order := c.order[k]
		for p := 1; p < len(order); p++ {
			from, to := writerNode(k, order[p-1]), writerNode(k, order[p])
			if from >= 0 && to >= 0 {
				b.add(from, to, ww)
			}
		}
	}
	for i := range c.h {
		reader := c.node[i]
		if reader < 0 || c.h[i].Status != OK {
			continue
		}
		for _, r := range c.external[i] {
			order, ok := c.order[r.key]
			if !ok {
				continue // incompatible reads: no order to place it in
			}
			if n := len(r.list); n > 0 {
				if w := writerNode(r.key, r.list[n-1]); w >= 0 {
					b.add(w, reader, wr)
				}
			}
			if len(r.list) < len(order) {
				if w := writerNode(r.key, order[len(r.list)]); w >= 0 {
					b.add(reader, w, rw)
				}
			}
		}
	}
	if !c.opts.SkipRealTime {
		c.realTimeEdges(b)
	}
	c.g = b.build()
	for _, es := range c.g.adj {
		for _, e := range es {
			for _, k := range kindOrder {
				if e.kinds&k != 0 {
					c.res.Edges[k.String()]++
				}
			}
		}
	}
}

// realTimeEdges adds T1 -> T2 when T1 completed before T2 was invoked,
// keeping only the transitive reduction of that order (Elle's sweep): when
// T2 is invoked it follows every transaction on the frontier; when T2
// completes it replaces on the frontier those it followed.
func (c *checker) realTimeEdges(b *graphBuilder) {
	type event struct {
		at       int64
		complete bool
		n        int32
	}
	var events []event
	for n, t := range c.txnOf {
		events = append(events, event{at: c.h[t].Invoke, n: int32(n)})
		if c.h[t].Status == OK {
			events = append(events, event{at: c.h[t].Complete, complete: true, n: int32(n)})
		}
	}
	// At equal times invocations go first: only a strictly earlier
	// completion orders two transactions.
	slices.SortStableFunc(events, func(a, b event) int {
		if a.at != b.at {
			if a.at < b.at {
				return -1
			}
			return 1
		}
		if a.complete == b.complete {
			return 0
		}
		if !a.complete {
			return -1
		}
		return 1
	})
	frontier := make(map[int32]bool)
	preds := make(map[int32][]int32)
	for _, ev := range events {
		if !ev.complete {
			for p := range frontier {
				b.add(p, ev.n, rt)
				preds[ev.n] = append(preds[ev.n], p)
			}
			continue
		}
		for _, p := range preds[ev.n] {
			delete(frontier, p)
		}
		delete(preds, ev.n)
		frontier[ev.n] = true
	}
}

// cycles searches each strongly connected component for the cycle classes,
// the forbidden ones first, and reports write skew only for a component
// that has nothing worse.
func (c *checker) cycles() {
	g := c.g
	all := dataKinds
	if !c.opts.SkipRealTime {
		all |= rt
	}
	nodes := make([]int32, len(c.txnOf))
	for i := range nodes {
		nodes[i] = int32(i)
	}
	comps := g.components(nodes, func(int32) bool { return true }, all)
	top := slices.Clone(g.comp) // later searches reuse g.comp
	for id, comp := range comps {
		if len(comp) < 2 {
			continue
		}
		slices.Sort(comp)
		s := &cycleSearch{
			g:      g,
			nodes:  comp,
			member: func(v int32) bool { return top[v] == int32(id) },
			budget: c.opts.SearchBudget,
		}
		found := false
		report := func(a Anomaly, cycle []step) []step {
			if cycle != nil {
				found = true
				c.reportCycle(a, cycle)
			}
			return cycle
		}
		g0 := report(G0, s.anyCycle(ww))
		g1c := report(G1c, s.cycleThrough(wr, ww|wr))
		gs := report(GSingle, s.singleAntiDependency(ww|wr))
		if !c.opts.SkipRealTime {
			if g0 == nil {
				report(G0RealTime, s.anyCycle(ww|rt))
			}
			if g1c == nil {
				report(G1cRealTime, s.cycleThrough(wr, ww|wr|rt))
			}
			if gs == nil && !s.exhausted {
				report(GSingleRealTime, s.singleAntiDependency(ww|wr|rt))
			}
		}
		if !found {
			if report(G2Item, s.anyCycle(dataKinds)) == nil {
				report(G2ItemRealTime, s.anyCycle(all))
			}
		}
		if s.exhausted {
			c.res.Truncated++
		}
	}
}

// reportCycle describes a cycle: its shape, each transaction, and why each
// edge exists.
func (c *checker) reportCycle(a Anomaly, cycle []step) {
	c.res.Counts[a]++
	if len(c.res.Examples[a]) >= c.opts.MaxExamples {
		return
	}
	var b strings.Builder
	b.WriteString(c.name(c.txnOf[cycle[0].from]))
	for _, s := range cycle {
		fmt.Fprintf(&b, " -%s-> %s", s.kind, c.name(c.txnOf[s.to]))
	}
	for _, s := range cycle {
		t := c.txnOf[s.from]
		fmt.Fprintf(&b, "\n  %s = %s", c.name(t), c.h[t])
	}
	for _, s := range cycle {
		fmt.Fprintf(&b, "\n  %s %s->%s: %s", s.kind, c.name(c.txnOf[s.from]), c.name(c.txnOf[s.to]), c.explain(s))
	}
	c.res.Examples[a] = append(c.res.Examples[a], b.String())
}

// explain says why an edge of a reported cycle exists, recomputing it from
// the history (the graph keeps only the kinds).
func (c *checker) explain(s step) string {
	u, v := c.txnOf[s.from], c.txnOf[s.to]
	writtenBy := func(k, p int, t int32) bool {
		order := c.order[k]
		if p < 0 || p >= len(order) {
			return false
		}
		w, ok := c.writer[elem{k, order[p]}]
		return ok && w.txn == t
	}
	switch s.kind {
	case ww:
		for _, m := range c.h[v].Ops {
			if p, ok := c.pos[elem{m.Key, m.Value}]; m.Kind == Append && ok && writtenBy(m.Key, p-1, u) {
				return fmt.Sprintf("on key %d, %s's %d directly follows %s's %d",
					m.Key, c.name(v), m.Value, c.name(u), c.order[m.Key][p-1])
			}
		}
	case wr:
		for _, r := range c.external[v] {
			if n := len(r.list); n > 0 && writtenBy(r.key, n-1, u) {
				return fmt.Sprintf("%s read key %d as %s, whose last element %s appended",
					c.name(v), r.key, formatList(r.list), c.name(u))
			}
		}
	case rw:
		for _, r := range c.external[u] {
			if writtenBy(r.key, len(r.list), v) {
				return fmt.Sprintf("%s read key %d as %s, and %s appended the next element, %d",
					c.name(u), r.key, formatList(r.list), c.name(v), c.order[r.key][len(r.list)])
			}
		}
	case rt:
		return fmt.Sprintf("%s completed at %v, before %s was invoked at %v",
			c.name(u), time.Duration(c.h[u].Complete), c.name(v), time.Duration(c.h[v].Invoke))
	}
	return "(no explanation found)"
}

// prefixOrder returns the longest of lists if every other is a prefix of
// it, else nil and two lists that disagree.
func prefixOrder(lists [][]int) (longest, a, b []int) {
	longest = []int{}
	for _, l := range lists {
		if len(l) > len(longest) {
			longest = l
		}
	}
	for _, l := range lists {
		if !slices.Equal(l, longest[:len(l)]) {
			return nil, l, longest
		}
	}
	return longest, nil, nil
}
