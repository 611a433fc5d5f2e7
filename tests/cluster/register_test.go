package cluster

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"
)

// regKind is what a register operation does.
type regKind uint8

const (
	regRead  regKind = iota // SELECT v ... WHERE k = ?
	regWrite                // UPDATE ... SET v = ? WHERE k = ?
	regCAS                  // UPDATE ... SET v = ? WHERE k = ? AND v = old
)

// regOp is one single-key operation of a register history as a client saw
// it: call and return on one monotonic clock (nanoseconds since the run
// began), and the outcome.
type regOp struct {
	client int
	key    int
	kind   regKind
	// val is what a write or CAS stored, or what a read returned.
	val int64
	// old is the value a CAS expected.
	old int64
	// swapped is a CAS's outcome: it matched a row.
	swapped bool
	// unknown marks a write or CAS whose outcome the client cannot know (the
	// connection broke, or the statement timed out, mid-commit): it may or
	// may not have taken effect, at any time after its call.
	unknown    bool
	call, ret  int64
	errMessage string
}

func (o regOp) String() string {
	switch {
	case o.kind == regRead:
		return fmt.Sprintf("read(%d) -> %d", o.key, o.val)
	case o.kind == regWrite && o.unknown:
		return fmt.Sprintf("write(%d, %d) -> ?", o.key, o.val)
	case o.kind == regWrite:
		return fmt.Sprintf("write(%d, %d)", o.key, o.val)
	case o.unknown:
		return fmt.Sprintf("cas(%d, %d -> %d) -> ?", o.key, o.old, o.val)
	default:
		return fmt.Sprintf("cas(%d, %d -> %d) -> %v", o.key, o.old, o.val, o.swapped)
	}
}

// registerModel is porcupine's model of a set of registers, one per key,
// each holding an int64 that starts at 0, partitioned by key: the history
// is linearizable if and only if each key's is. The input and the output
// of every porcupine.Operation is the regOp itself.
var registerModel = porcupine.Model{
	Partition: func(h []porcupine.Operation) [][]porcupine.Operation {
		byKey := map[int][]porcupine.Operation{}
		for _, op := range h {
			k := op.Input.(regOp).key
			byKey[k] = append(byKey[k], op)
		}
		keys := make([]int, 0, len(byKey))
		for k := range byKey {
			keys = append(keys, k)
		}
		sort.Ints(keys)
		out := make([][]porcupine.Operation, 0, len(keys))
		for _, k := range keys {
			out = append(out, byKey[k])
		}
		return out
	},
	Init: func() any { return int64(0) },
	Step: func(state, input, _ any) (bool, any) {
		v, o := state.(int64), input.(regOp)
		switch o.kind {
		case regRead:
			return o.val == v, v
		case regWrite:
			return true, o.val
		}
		// A CAS whose outcome is unknown swapped if it took effect at a
		// point where the register held old; one that never took effect
		// is linearized after everything else (its return is infinite),
		// where it changes nothing any client saw.
		if o.unknown {
			if v == o.old {
				return true, o.val
			}
			return true, v
		}
		if o.swapped {
			return v == o.old, o.val
		}
		return v != o.old, v
	},
	DescribeOperation: func(input, _ any) string { return input.(regOp).String() },
	DescribeState:     func(state any) string { return fmt.Sprint(state.(int64)) },
}

// linearizabilityTimeout bounds porcupine's search (NP-hard in general, fast for
// registers with a few clients); running out is reported, not taken as a
// pass.
const linearizabilityTimeout = 5 * time.Minute

// checkRegisters checks the history with porcupine and returns its verdict.
// An operation of unknown outcome gets an infinite return time: porcupine
// may place it anywhere after its call, including after every other
// operation, which is the same as its never having happened. When the
// history is not linearizable, porcupine's HTML visualization is written to
// the directory dir returns and its path returned.
func checkRegisters(h []regOp, dir func() string) (porcupine.CheckResult, string, error) {
	ops := make([]porcupine.Operation, len(h))
	for i, o := range h {
		ret := o.ret
		if o.unknown {
			ret = math.MaxInt64
		}
		ops[i] = porcupine.Operation{ClientId: o.client, Input: o, Output: o, Call: o.call, Return: ret}
	}
	res, info := porcupine.CheckOperationsVerbose(registerModel, ops, linearizabilityTimeout)
	if res != porcupine.Illegal {
		return res, "", nil
	}
	path := filepath.Join(dir(), "linearizability.html")
	if err := porcupine.VisualizePath(registerModel, info, path); err != nil {
		return res, "", fmt.Errorf("write porcupine's visualization: %w", err)
	}
	return res, path, nil
}

// visualizationDir is where a failing run's visualization goes: the
// directory of envLogDir if set, else a fresh temporary directory left in
// place (a test's t.TempDir is removed when the test ends).
func visualizationDir(t *testing.T) string {
	t.Helper()
	if dir := os.Getenv(envLogDir); dir != "" {
		return dir
	}
	dir, err := os.MkdirTemp("", "percdb-linearizability-")
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestRegisterModel feeds the checker doctored histories, so that the
// cluster test's verdict is known to be able to fail: a stale read, a lost
// write, a CAS that swapped from the wrong value are not linearizable; an
// unknown write that nobody saw, or that a later read saw, is.
func TestRegisterModel(t *testing.T) {
	w := func(c, k int, v, call, ret int64) regOp {
		return regOp{client: c, key: k, kind: regWrite, val: v, call: call, ret: ret}
	}
	r := func(c, k int, v, call, ret int64) regOp {
		return regOp{client: c, key: k, kind: regRead, val: v, call: call, ret: ret}
	}
	cas := func(c, k int, old, v int64, swapped bool, call, ret int64) regOp {
		return regOp{client: c, key: k, kind: regCAS, old: old, val: v, swapped: swapped, call: call, ret: ret}
	}
	unknown := func(o regOp) regOp { o.unknown = true; return o }
	for _, tc := range []struct {
		name string
		h    []regOp
		want porcupine.CheckResult
	}{
		{"sequential", []regOp{w(0, 1, 5, 0, 10), r(1, 1, 5, 20, 30), cas(0, 1, 5, 6, true, 40, 50), r(1, 1, 6, 60, 70)}, porcupine.Ok},
		{"concurrent read sees either", []regOp{w(0, 1, 5, 0, 100), r(1, 1, 0, 10, 20), r(2, 1, 5, 30, 40), r(1, 1, 5, 110, 120)}, porcupine.Ok},
		{"keys are independent", []regOp{w(0, 1, 5, 0, 10), r(1, 2, 0, 20, 30), r(1, 1, 5, 40, 50)}, porcupine.Ok},
		{"stale read", []regOp{w(0, 1, 5, 0, 10), r(1, 1, 0, 20, 30)}, porcupine.Illegal},
		{"read goes back", []regOp{w(0, 1, 5, 0, 100), r(1, 1, 5, 10, 20), r(2, 1, 0, 30, 40)}, porcupine.Illegal},
		{"lost write", []regOp{w(0, 1, 5, 0, 10), w(0, 1, 6, 20, 30), r(1, 1, 5, 40, 50)}, porcupine.Illegal},
		{"cas swapped from the wrong value", []regOp{w(0, 1, 5, 0, 10), cas(1, 1, 4, 7, true, 20, 30)}, porcupine.Illegal},
		{"cas failed though it matched", []regOp{w(0, 1, 5, 0, 10), cas(1, 1, 5, 7, false, 20, 30)}, porcupine.Illegal},
		{"unknown write never seen", []regOp{unknown(w(0, 1, 5, 0, 10)), r(1, 1, 0, 20, 30), r(1, 1, 0, 40, 50)}, porcupine.Ok},
		{"unknown write seen later", []regOp{unknown(w(0, 1, 5, 0, 10)), r(1, 1, 0, 20, 30), r(1, 1, 5, 1000, 1010)}, porcupine.Ok},
		{"unknown write seen, then unseen", []regOp{unknown(w(0, 1, 5, 0, 10)), r(1, 1, 5, 20, 30), r(1, 1, 0, 40, 50)}, porcupine.Illegal},
		{"unknown write seen before its call", []regOp{r(1, 1, 5, 0, 10), unknown(w(0, 1, 5, 20, 30))}, porcupine.Illegal},
		{"unknown cas seen", []regOp{w(0, 1, 5, 0, 10), unknown(cas(1, 1, 5, 7, false, 20, 30)), r(2, 1, 7, 40, 50)}, porcupine.Ok},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, path, err := checkRegisters(tc.h, t.TempDir)
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.want {
				t.Fatalf("porcupine says %s, want %s", got, tc.want)
			}
			if got == porcupine.Illegal {
				if st, err := os.Stat(path); err != nil || st.Size() == 0 {
					t.Fatalf("no visualization at %q: %v", path, err)
				}
			}
		})
	}
}
