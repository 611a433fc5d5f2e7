package main

import (
	"strings"
	"testing"
	"time"

	"github.com/percdb/percdb/bench"
	"github.com/percdb/percdb/bench/tpcc"
)

// TestReport renders a result with a failed check, an unfinished run and a
// server that did not load, and checks what a reader must see.
func TestReport(t *testing.T) {
	txns := func(committed int64) []tpcc.TxnStats {
		var out []tpcc.TxnStats
		for _, ty := range tpcc.TxnTypes() {
			out = append(out, tpcc.TxnStats{Name: ty.String(), Committed: committed, Errors: map[string]int64{}, FirstError: map[string]string{}})
		}
		return out
	}
	pass := []tpcc.CheckResult{{ID: "3.3.2.1", Status: "pass"}, {ID: "3.3.2.11", Status: "n/a"}}
	res := &results{
		Options: options{Servers: []string{bench.MariaDB, bench.Percdb}, Warehouses: 1, Threads: []int{4}, Time: time.Minute},
		Loads: map[string]loadRecord{
			bench.MariaDB: {Rows: 600, Took: time.Second, Checks: pass},
			bench.Percdb:  {Rows: 600, Took: 2 * time.Second, Checks: pass},
		},
		Runs: []runRecord{
			{Server: bench.MariaDB, Threads: 4, Result: &tpcc.RunResult{Duration: time.Minute, TpmC: 10000, Txns: txns(10000)}, Checks: pass},
			{Server: bench.Percdb, Threads: 4, Result: &tpcc.RunResult{Duration: time.Minute, TpmC: 50, Unfinished: 2, Txns: txns(50)},
				Checks: []tpcc.CheckResult{{ID: "3.3.2.8", Text: "W_YTD = sum(H_AMOUNT)", Status: "FAIL", Detail: "1: 1.00 <> 2.00"}}},
		},
	}
	res.Options.Requests = 10
	res.Profiles = map[string][]tpcc.TxnProfile{bench.Percdb: {{Name: "new-order", Transactions: 10,
		Counters: map[string]float64{"get": 12.5, "acquire_pessimistic_lock": 20, "prewrite": 1}}}}
	res.Runs[1].Requests = bench.KVRequests{"get": 2500, "prewrite": 500}
	res.Runs[1].Result.Txns[tpcc.Payment].Errors["1213"] = 3
	res.Runs[1].Result.Txns[tpcc.Payment].FirstError["1213"] = "Error 1213: write conflict"

	grid := tpmGrid(res)
	if got := strings.Join(grid[1], " | "); got != "4 | 10,000 | 50.0 (2 unfinished) | 0.005 | 2/2 pass | 0/1 pass: 3.3.2.8 FAIL" {
		t.Errorf("tpmC line: %s", got)
	}
	md := markdown(res, failures(res), "", "", "TPC-C")
	for _, want := range []string{
		"## TPC-C",
		"percdb after 4 terminals: 3.3.2.8 W\\_YTD = sum(H\\_AMOUNT): FAIL 1: 1.00 \\<\\> 2.00",
		"percdb, 4 terminals, payment, first 1213: Error 1213: write conflict",
		"| 4 | percdb | payment | 50 | 50.0 | 0 | 0 | 0 | 0 | 1213 x3 |",
		"- Settings: the servers' default transaction isolation level (REPEATABLE READ), percdb in its default (pessimistic) mode.",
		"(10 of each; no lock waits, no retries)",
		"| percdb | new-order alone | 10 | 0 | 33.5 | acquire_pessimistic_lock 20.0, get 12.5, prewrite 1.0 |",
		// 250 transactions ended: 50 of each type.
		"| percdb | the mix, 4 terminals | 250 | 0 | 12.0 | get 10.0, prewrite 2.0 |",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("report lacks %q:\n%s", want, md)
		}
	}
	rows := chartRows(res)
	if len(rows) != 5 || rows[0].Workload != "new-order" || rows[0].Cells[bench.Percdb].QPS != 50 || !rows[0].HasRatio {
		t.Errorf("chart rows: %+v", rows)
	}
}

// TestReportSettings checks that a run's isolation level and percdb's
// transaction mode reach the document: runs at different levels are
// otherwise indistinguishable there.
func TestReportSettings(t *testing.T) {
	res := &results{Options: options{Servers: []string{bench.Percdb}, Warehouses: 1, Threads: []int{4},
		Isolation: "READ-COMMITTED", TxnMode: "optimistic"}}
	md := markdown(res, nil, "", "", "TPC-C")
	if want := "- Settings: transaction isolation READ COMMITTED on every server (SET GLOBAL before the load), percdb in optimistic mode."; !strings.Contains(md, want) {
		t.Errorf("report lacks %q:\n%s", want, md)
	}
}

func TestRatioText(t *testing.T) {
	for q, want := range map[float64]string{0.0829747: "0.083", 0.01381: "0.0138", 8.37e-05: "0.0000837", 1.5: "1.5", 1234.5: "1230"} {
		if got := ratioText(q); got != want {
			t.Errorf("ratioText(%v) = %q, want %q", q, got, want)
		}
	}
}
