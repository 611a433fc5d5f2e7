package elle

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// simMode is the isolation an in-memory store gives, to produce histories
// the checker must accept or reject without a server.
type simMode int

const (
	// simSerial runs one transaction at a time.
	simSerial simMode = iota
	// simSI is snapshot isolation: reads from the snapshot at begin, the
	// second committer of a key aborts.
	simSI
	// simLostUpdate reads from the snapshot but, like InnoDB's REPEATABLE
	// READ, appends onto the latest version and never aborts.
	simLostUpdate
	// simReadCommitted reads the latest committed version every time.
	simReadCommitted
)

type simVersion struct {
	ts   int
	list []int
}

// simulate runs txns random transactions from clients interleaved clients
// against an in-memory multi-version store and returns the history.
func simulate(seed uint64, mode simMode, clients, txns, keys int) []Txn {
	rng := rand.New(rand.NewPCG(seed, 0))
	versions := make(map[int][]simVersion)
	now := 0
	latest := func(k int) simVersion {
		if vs := versions[k]; len(vs) > 0 {
			return vs[len(vs)-1]
		}
		return simVersion{}
	}
	snapshot := func(k, ts int) []int {
		vs := versions[k]
		for i := len(vs) - 1; i >= 0; i-- {
			if vs[i].ts <= ts {
				return vs[i].list
			}
		}
		return nil
	}
	type client struct {
		active bool
		plan   []MicroOp
		done   []MicroOp
		start  int
		invoke int64
		writes map[int][]int
	}
	cs := make([]client, clients)
	next := make(map[int]int) // key -> last value appended
	var h []Txn
	var clock int64
	for started := 0; len(h) < txns; {
		clock++
		i := rng.IntN(clients)
		if mode == simSerial {
			i = slices.IndexFunc(cs, func(c client) bool { return c.active })
			if i < 0 {
				i = rng.IntN(clients)
			}
		}
		c := &cs[i]
		switch {
		case !c.active:
			if started == txns {
				continue
			}
			started++
			*c = client{active: true, start: now, invoke: clock, writes: make(map[int][]int)}
			for range 1 + rng.IntN(4) {
				k := rng.IntN(keys)
				if rng.IntN(2) == 0 {
					c.plan = append(c.plan, ReadOp(k, nil))
				} else {
					next[k]++
					c.plan = append(c.plan, AppendOp(k, next[k]))
				}
			}
		case len(c.done) < len(c.plan):
			m := c.plan[len(c.done)]
			if m.Kind == Append {
				c.writes[m.Key] = append(c.writes[m.Key], m.Value)
			} else {
				base := snapshot(m.Key, c.start)
				if mode == simReadCommitted {
					base = latest(m.Key).list
				}
				m.List = append(slices.Clone(base), c.writes[m.Key]...)
				if m.List == nil {
					m.List = []int{}
				}
			}
			c.done = append(c.done, m)
		default:
			status := OK
			if mode == simSI {
				for k := range c.writes {
					if latest(k).ts > c.start {
						status = Fail
					}
				}
			}
			if status == OK && len(c.writes) > 0 {
				now++
				for k, vs := range c.writes {
					versions[k] = append(versions[k], simVersion{ts: now, list: append(slices.Clone(latest(k).list), vs...)})
				}
			}
			h = append(h, Txn{Process: i, Invoke: c.invoke, Complete: clock, Status: status, Ops: c.done})
			c.active = false
		}
	}
	return h
}

func TestSimulatedHistories(t *testing.T) {
	txns := 400
	if testing.Short() {
		txns = 150
	}
	for seed := uint64(1); seed <= 5; seed++ {
		serial, err := Check(simulate(seed, simSerial, 4, txns, 5), CheckOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if len(serial.Counts) != 0 {
			t.Errorf("seed %d: serial history has anomalies %v: %v", seed, serial.Counts, serial.Examples)
		}
		si, err := Check(simulate(seed, simSI, 4, txns, 5), CheckOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if !si.Valid() {
			t.Errorf("seed %d: snapshot isolation history rejected: %v: %v", seed, si.Counts, si.Examples)
		}
		if si.Failed == 0 {
			t.Errorf("seed %d: no conflicts in the snapshot isolation run: the simulation is not concurrent", seed)
		}
		t.Logf("seed %d: SI: %d ok, %d failed, checked %d, edges %v, anomalies %v",
			seed, si.OK, si.Failed, si.Checked, si.Edges, si.Counts)
		// Snapshot isolation and serial histories are valid at READ
		// COMMITTED too. (simReadCommitted is not READ COMMITTED as
		// MySQL's and percdb's: it takes no lock at an append and
		// applies it at commit, so a read after an append can miss a
		// commit that lands before its own.)
		for _, mode := range []simMode{simSerial, simSI} {
			res, err := Check(simulate(seed, mode, 4, txns, 5), CheckOptions{ReadCommitted: true})
			if err != nil {
				t.Fatal(err)
			}
			if !res.Valid() {
				t.Errorf("seed %d mode %d: history rejected at READ COMMITTED: %v: %v", seed, mode, res.Counts, res.Examples)
			}
		}
		for _, mode := range []simMode{simLostUpdate, simReadCommitted} {
			res, err := Check(simulate(seed, mode, 4, txns, 5), CheckOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if res.Valid() || res.Counts[GSingle]+res.Counts[GSingleRealTime] == 0 {
				t.Errorf("seed %d mode %d: want G-single anomalies, got %v", seed, mode, res.Counts)
			}
			t.Logf("seed %d mode %d: anomalies %v", seed, mode, res.Counts)
		}
	}
}
