package elle

import "slices"

// edgeKind is a set of dependency kinds between two transactions.
type edgeKind uint8

const (
	ww edgeKind = 1 << iota // write-write: the target overwrote the source's version
	wr                      // write-read: the target read the source's version
	rw                      // read-write: the target overwrote a version the source read
	rt                      // real time: the source completed before the target began

	dataKinds = ww | wr | rw
)

// kindOrder is the order in which a single kind is picked from an edge that
// carries several: data before real time, and rw last among data kinds, so
// that a cycle is reported with as few anti-dependencies as it really needs.
var kindOrder = [...]edgeKind{ww, wr, rt, rw}

func (k edgeKind) String() string {
	switch k {
	case ww:
		return "ww"
	case wr:
		return "wr"
	case rw:
		return "rw"
	case rt:
		return "rt"
	}
	s := ""
	for _, one := range kindOrder {
		if k&one != 0 {
			if s != "" {
				s += "+"
			}
			s += one.String()
		}
	}
	return s
}

// pick returns one kind of k that is in mask, by kindOrder.
func (k edgeKind) pick(mask edgeKind) edgeKind {
	for _, one := range kindOrder {
		if k&mask&one != 0 {
			return one
		}
	}
	return 0
}

type edge struct {
	to    int32
	kinds edgeKind
}

// graph is a dependency graph over nodes 0..n-1, built once and then read.
type graph struct {
	adj [][]edge

	// Scratch space for searches, sized n and reset through touched lists
	// so that a search inside one component costs only that component.
	index, low, comp, parent []int32
	parentKind               []edgeKind
	onStack                  []bool
}

func newGraph(n int) *graph {
	g := &graph{
		adj:        make([][]edge, n),
		index:      make([]int32, n),
		low:        make([]int32, n),
		comp:       make([]int32, n),
		parent:     make([]int32, n),
		parentKind: make([]edgeKind, n),
		onStack:    make([]bool, n),
	}
	for i := range n {
		g.index[i] = -1
		g.parent[i] = -1
	}
	return g
}

// graphBuilder collects edges, merging the kinds of repeated pairs.
type graphBuilder struct {
	n     int
	pairs map[uint64]edgeKind
}

func newGraphBuilder(n int) *graphBuilder {
	return &graphBuilder{n: n, pairs: make(map[uint64]edgeKind)}
}

func (b *graphBuilder) add(from, to int32, k edgeKind) {
	if from == to {
		return
	}
	b.pairs[uint64(from)<<32|uint64(uint32(to))] |= k
}

func (b *graphBuilder) build() *graph {
	g := newGraph(b.n)
	for p, k := range b.pairs {
		from := int32(p >> 32)
		g.adj[from] = append(g.adj[from], edge{to: int32(uint32(p)), kinds: k})
	}
	// Map iteration is random: sort so that searches, and so reports, are
	// the same on every run.
	for i := range g.adj {
		slices.SortFunc(g.adj[i], func(a, b edge) int { return int(a.to - b.to) })
	}
	return g
}

// components runs Tarjan's algorithm over nodes, following only edges with
// a kind in mask whose target is in the set (member(target) is true). It
// returns the components in the order Tarjan completes them, which is a
// reverse topological order: an edge between two components always goes
// from a later one to an earlier one. g.comp holds each node's component
// number until the next call.
func (g *graph) components(nodes []int32, member func(int32) bool, mask edgeKind) [][]int32 {
	var (
		out   [][]int32
		stack []int32
		next  int32
	)
	type frame struct {
		v int32
		i int // next edge of v to look at
	}
	var call []frame
	for _, root := range nodes {
		if g.index[root] >= 0 {
			continue
		}
		call = append(call[:0], frame{v: root})
		g.index[root], g.low[root] = next, next
		next++
		stack = append(stack, root)
		g.onStack[root] = true
		for len(call) > 0 {
			f := &call[len(call)-1]
			v := f.v
			if f.i < len(g.adj[v]) {
				e := g.adj[v][f.i]
				f.i++
				if e.kinds&mask == 0 || !member(e.to) {
					continue
				}
				w := e.to
				if g.index[w] < 0 {
					g.index[w], g.low[w] = next, next
					next++
					stack = append(stack, w)
					g.onStack[w] = true
					call = append(call, frame{v: w})
				} else if g.onStack[w] {
					g.low[v] = min(g.low[v], g.index[w])
				}
				continue
			}
			call = call[:len(call)-1]
			if len(call) > 0 {
				p := call[len(call)-1].v
				g.low[p] = min(g.low[p], g.low[v])
			}
			if g.low[v] == g.index[v] {
				var c []int32
				for {
					w := stack[len(stack)-1]
					stack = stack[:len(stack)-1]
					g.onStack[w] = false
					g.comp[w] = int32(len(out))
					c = append(c, w)
					if w == v {
						break
					}
				}
				out = append(out, c)
			}
		}
	}
	for _, v := range nodes {
		g.index[v] = -1
	}
	return out
}

// step is one edge of a reported cycle, with the single kind it stands for.
type step struct {
	from, to int32
	kind     edgeKind
}

// path returns the shortest path from src to dst (breadth first) through
// member nodes and edges with a kind in mask, or nil if there is none. A
// path from a node to itself is a cycle and has at least one step.
func (g *graph) path(src, dst int32, member func(int32) bool, mask edgeKind) []step {
	var touched []int32
	defer func() {
		for _, v := range touched {
			g.parent[v] = -1
		}
	}()
	queue := []int32{src}
	for len(queue) > 0 {
		v := queue[0]
		queue = queue[1:]
		for _, e := range g.adj[v] {
			if e.kinds&mask == 0 || !member(e.to) || g.parent[e.to] >= 0 {
				continue
			}
			g.parent[e.to], g.parentKind[e.to] = v, e.kinds.pick(mask)
			touched = append(touched, e.to)
			if e.to == dst {
				var p []step
				for w := dst; ; {
					u := g.parent[w]
					p = append(p, step{from: u, to: w, kind: g.parentKind[w]})
					if u == src {
						break
					}
					w = u
				}
				slices.Reverse(p)
				return p
			}
			queue = append(queue, e.to)
		}
	}
	return nil
}

// cycleSearch looks for cycles of the classes of this package inside one
// strongly connected component of a graph.
type cycleSearch struct {
	g      *graph
	nodes  []int32
	member func(int32) bool
	// budget is how many edges the G-single search may still visit before it
	// gives up; exhausted is set when it did.
	budget    int
	exhausted bool
}

// anyCycle returns a shortest cycle through the first node that has one,
// using edges with a kind in mask.
func (s *cycleSearch) anyCycle(mask edgeKind) []step {
	g := s.g
	for id, c := range g.components(s.nodes, s.member, mask) {
		if len(c) > 1 {
			in := func(v int32) bool { return s.member(v) && g.comp[v] == int32(id) }
			return g.path(slices.Min(c), slices.Min(c), in, mask)
		}
	}
	return nil
}

// cycleThrough returns a shortest cycle that uses at least one edge with a
// kind in through, all its edges having kinds in mask (through is a subset
// of mask).
func (s *cycleSearch) cycleThrough(through, mask edgeKind) []step {
	s.g.components(s.nodes, s.member, mask)
	for _, u := range s.nodes {
		for _, e := range s.g.adj[u] {
			if e.kinds&through == 0 || !s.member(e.to) || s.g.comp[u] != s.g.comp[e.to] {
				continue
			}
			back := s.g.path(e.to, u, s.member, mask)
			if back == nil {
				continue // cannot happen inside one component
			}
			return append([]step{{from: u, to: e.to, kind: e.kinds.pick(through)}}, back...)
		}
	}
	return nil
}

// singleAntiDependency returns a cycle with exactly one rw edge whose other
// edges have kinds in mask (which must not contain rw): an rw edge u->v and
// a path from v back to u. Reachability is decided on the condensation of
// the mask subgraph, one breadth-first search per distinct source, within
// the budget.
func (s *cycleSearch) singleAntiDependency(mask edgeKind) []step {
	g := s.g
	comps := g.components(s.nodes, s.member, mask)
	type pair struct{ u, v int32 }
	var pending []pair
	for _, u := range s.nodes {
		for _, e := range g.adj[u] {
			if e.kinds&rw == 0 || !s.member(e.to) {
				continue
			}
			cu, cv := g.comp[u], g.comp[e.to]
			if cu == cv {
				return append([]step{{from: u, to: e.to, kind: rw}}, g.path(e.to, u, s.member, mask)...)
			}
			// Components are numbered in reverse topological order, so v's
			// component can only reach components numbered below it.
			if cu < cv {
				pending = append(pending, pair{u, e.to})
			}
		}
	}
	if len(pending) == 0 {
		return nil
	}
	// The condensation: one node per component, deduplicated edges.
	cadj := make([][]int32, len(comps))
	seen := make(map[uint64]bool)
	for _, u := range s.nodes {
		for _, e := range g.adj[u] {
			if e.kinds&mask == 0 || !s.member(e.to) {
				continue
			}
			cu, cv := g.comp[u], g.comp[e.to]
			key := uint64(cu)<<32 | uint64(uint32(cv))
			if cu != cv && !seen[key] {
				seen[key] = true
				cadj[cu] = append(cadj[cu], cv)
			}
		}
	}
	slices.SortFunc(pending, func(a, b pair) int { return int(g.comp[a.v] - g.comp[b.v]) })
	reached := make([]int32, len(comps)) // reached[c] == source+1 when seen from source
	for i := 0; i < len(pending); {
		src := g.comp[pending[i].v]
		j := i
		lowest := g.comp[pending[i].u]
		for j < len(pending) && g.comp[pending[j].v] == src {
			lowest = min(lowest, g.comp[pending[j].u])
			j++
		}
		mark := src + 1
		reached[src] = mark
		queue := []int32{src}
		for len(queue) > 0 {
			c := queue[0]
			queue = queue[1:]
			for _, d := range cadj[c] {
				s.budget--
				if d < lowest || reached[d] == mark {
					continue
				}
				reached[d] = mark
				queue = append(queue, d)
			}
			if s.budget < 0 {
				s.exhausted = true
				return nil
			}
		}
		for _, p := range pending[i:j] {
			if reached[g.comp[p.u]] == mark {
				return append([]step{{from: p.u, to: p.v, kind: rw}}, g.path(p.v, p.u, s.member, mask)...)
			}
		}
		i = j
	}
	return nil
}
