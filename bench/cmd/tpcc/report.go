package main

import (
	"cmp"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/percdb/percdb/bench"
	"github.com/percdb/percdb/bench/tpcc"
)

// markers returns the begin and end markers of the generated section
// named name ("tpcc", or "tpcc-" and a variant) of docs/benchmarks.md.
func markers(name string) (begin, end string) {
	return "<!-- BEGIN " + name + ": written by `go run ./bench/cmd/tpcc`; edits up to END are overwritten -->",
		"<!-- END " + name + " -->"
}

var labels = map[string]string{bench.MariaDB: "MariaDB", bench.Percdb: "percdb"}

func label(s string) string {
	if l := labels[s]; l != "" {
		return l
	}
	return s
}

// output says where the report goes besides stdout.
type output struct {
	doc, chart, note string
	// section names the document's section (see markers), title its
	// heading.
	section, title string
}

// find returns the run of server at threads.
func (r *results) find(server string, threads int) *runRecord {
	for i := range r.Runs {
		if r.Runs[i].Server == server && r.Runs[i].Threads == threads {
			return &r.Runs[i]
		}
	}
	return nil
}

// checkSummary is "12/12" or "10/12: 3.3.2.8 FAIL, ...".
func checkSummary(checks []tpcc.CheckResult) string {
	if len(checks) == 0 {
		return "-"
	}
	pass := 0
	var bad []string
	for _, c := range checks {
		if c.Passed() {
			pass++
		} else {
			bad = append(bad, c.ID+" "+c.Status)
		}
	}
	s := fmt.Sprintf("%d/%d pass", pass, len(checks))
	if len(bad) > 0 {
		s += ": " + strings.Join(bad, ", ")
	}
	return s
}

// tpmGrid is one line per thread count: tpmC per server, the ratio, the
// checks after the run.
func tpmGrid(res *results) [][]string {
	srv := res.Options.Servers
	head := []string{"terminals"}
	for _, s := range srv {
		head = append(head, label(s)+" tpmC")
	}
	ratio := len(srv) == 2 && srv[0] != srv[1]
	if ratio {
		head = append(head, label(bench.Percdb)+"/"+label(bench.MariaDB))
	}
	for _, s := range srv {
		head = append(head, label(s)+" checks after the run")
	}
	grid := [][]string{head}
	for _, t := range res.Options.Threads {
		line := []string{fmt.Sprint(t)}
		tpm := map[string]float64{}
		for _, s := range srv {
			r := res.find(s, t)
			switch {
			case r == nil:
				line = append(line, "-")
			case r.Result == nil:
				line = append(line, "failed")
			default:
				tpm[s] = r.Result.TpmC
				cell := fmt.Sprintf("%.1f", r.Result.TpmC)
				if r.Result.TpmC >= 100 {
					cell = bench.Thousands(r.Result.TpmC)
				}
				if r.Result.Unfinished > 0 {
					cell += fmt.Sprintf(" (%d unfinished)", r.Result.Unfinished)
				}
				line = append(line, cell)
			}
		}
		if ratio {
			if q, ok := bench.Ratio(tpm[bench.Percdb], tpm[bench.MariaDB]); ok && tpm[bench.Percdb] > 0 {
				line = append(line, ratioText(q))
			} else {
				line = append(line, "-")
			}
		}
		for _, s := range srv {
			if r := res.find(s, t); r != nil {
				line = append(line, checkSummary(r.Checks))
			} else {
				line = append(line, "-")
			}
		}
		grid = append(grid, line)
	}
	return grid
}

// txnGrid is one line per (terminals, server, transaction type).
func txnGrid(res *results) [][]string {
	grid := [][]string{{"terminals", "server", "transaction", "committed", "per minute", "rolled back", "retries", "failed", "late", "errors by code", "p50 ms", "p95 ms", "p99 ms", "max ms"}}
	for _, t := range res.Options.Threads {
		for _, s := range res.Options.Servers {
			r := res.find(s, t)
			if r == nil || r.Result == nil {
				continue
			}
			for _, st := range r.Result.Txns {
				var errs []string
				for _, c := range tpcc.ErrorCodes(st.Errors) {
					errs = append(errs, fmt.Sprintf("%s x%d", c, st.Errors[c]))
				}
				lat := func(v float64) string {
					if st.Committed+st.RolledBack == 0 {
						return "-"
					}
					return fmt.Sprintf("%.1f", v)
				}
				grid = append(grid, []string{fmt.Sprint(t), label(s), st.Name, fmt.Sprint(st.Committed),
					fmt.Sprintf("%.1f", float64(st.Committed)/r.Result.Duration.Minutes()),
					fmt.Sprint(st.RolledBack), fmt.Sprint(st.Retries), fmt.Sprint(st.Failed), fmt.Sprint(st.Late),
					cmp.Or(strings.Join(errs, ", "), "-"), lat(st.P50), lat(st.P95), lat(st.P99), lat(st.Max)})
			}
		}
	}
	return grid
}

// requestsGrid is percdb's store requests per transaction: one line per
// transaction type run alone after the load, then one per run of the mix
// (per transaction that ended, retries' requests included). Nil when
// nothing was counted.
func requestsGrid(res *results) [][]string {
	grid := [][]string{{"server", "transactions", "measured", "failed", "store requests per transaction", "by command"}}
	for _, s := range res.Options.Servers {
		for _, p := range res.Profiles[s] {
			r := bench.KVRequests(p.Counters)
			grid = append(grid, []string{label(s), p.Name + " alone", fmt.Sprint(p.Transactions), fmt.Sprint(p.Failed),
				fmt.Sprintf("%.1f", r.Total()), cmp.Or(r.String(), "-")})
		}
	}
	for _, t := range res.Options.Threads {
		for _, s := range res.Options.Servers {
			r := res.find(s, t)
			if r == nil || r.Result == nil || r.Requests == nil {
				continue
			}
			var ended, failed int64
			for _, st := range r.Result.Txns {
				ended += st.Committed + st.RolledBack + st.Failed + st.Late
				failed += st.Failed
			}
			per := r.Requests.Per(float64(ended))
			grid = append(grid, []string{label(s), fmt.Sprintf("the mix, %d terminals", t), fmt.Sprint(ended), fmt.Sprint(failed),
				fmt.Sprintf("%.1f", per.Total()), cmp.Or(per.String(), "-")})
		}
	}
	if len(grid) == 1 {
		return nil
	}
	return grid
}

// loadGrid is one line per server: rows, time, checks after the load.
func loadGrid(res *results) [][]string {
	grid := [][]string{{"server", "rows loaded", "time", "rows/s", "checks after the load"}}
	for _, s := range res.Options.Servers {
		l, ok := res.Loads[s]
		if !ok {
			continue
		}
		took := l.Took.Round(100 * 1e6).String()
		if l.Err != "" {
			took += " (failed: " + l.Err + ")"
		}
		grid = append(grid, []string{label(s), bench.Thousands(float64(l.Rows)), took,
			bench.Thousands(float64(l.Rows) / l.Took.Seconds()), checkSummary(l.Checks)})
	}
	return grid
}

// failures lists every check that did not pass, and the first error text
// of every error code, for the notes under the tables.
func failures(res *results) []string {
	var out []string
	for _, s := range res.Options.Servers {
		for _, c := range res.Loads[s].Checks {
			if !c.Passed() {
				out = append(out, fmt.Sprintf("%s after the load: %s %s: %s %s", label(s), c.ID, c.Text, c.Status, c.Detail))
			}
		}
	}
	for _, r := range res.Runs {
		if r.Err != "" {
			out = append(out, fmt.Sprintf("%s, %d terminals: %s", label(r.Server), r.Threads, r.Err))
		}
		for _, c := range r.Checks {
			if !c.Passed() {
				out = append(out, fmt.Sprintf("%s after %d terminals: %s %s: %s %s", label(r.Server), r.Threads, c.ID, c.Text, c.Status, c.Detail))
			}
		}
		if r.Result == nil {
			continue
		}
		for _, st := range r.Result.Txns {
			for _, c := range tpcc.ErrorCodes(st.FirstError) {
				msg := st.FirstError[c]
				if len(msg) > 240 {
					msg = msg[:240] + "..."
				}
				out = append(out, fmt.Sprintf("%s, %d terminals, %s, first %s: %s", label(r.Server), r.Threads, st.Name, c, msg))
			}
		}
	}
	return out
}

// chartRows are the transactions per minute of every type, one Row per
// (type, terminals), for bench.Chart.
func chartRows(res *results) []bench.Row {
	var rows []bench.Row
	for _, t := range res.Options.Threads {
		for k := range tpcc.TxnTypes() {
			row := bench.Row{Workload: tpcc.TxnType(k).String(), Threads: t, Cells: map[string]bench.Cell{}}
			for _, s := range res.Options.Servers {
				r := res.find(s, t)
				c := bench.Cell{Runs: 1}
				if r != nil && r.Result != nil {
					c.Valid = 1
					c.QPS = float64(r.Result.Txns[k].Committed) / r.Result.Duration.Minutes()
				}
				row.Cells[s] = c
			}
			if q, ok := bench.Ratio(row.Cells[bench.Percdb].QPS, row.Cells[bench.MariaDB].QPS); ok {
				row.Ratio, row.HasRatio = q, true
			}
			rows = append(rows, row)
		}
	}
	return rows
}

func (o output) report(res *results) error {
	for _, g := range [][][]string{loadGrid(res), tpmGrid(res), txnGrid(res), requestsGrid(res)} {
		if g == nil {
			continue
		}
		fmt.Println()
		if err := bench.WriteText(os.Stdout, g); err != nil {
			return err
		}
	}
	notes := failures(res)
	for _, n := range notes {
		fmt.Println("  " + n)
	}
	cols := bench.Columns{Servers: res.Options.Servers, Labels: labels, Subject: bench.Percdb, Baseline: bench.MariaDB}
	chartRel := ""
	if o.chart != "" && len(res.Runs) > 0 {
		ch := bench.Chart{Title: fmt.Sprintf("TPC-C, %d warehouse(s), %v per run, transactions committed per minute (new-order: tpmC)",
			res.Options.Warehouses, res.Options.Time), Cols: cols, XLabel: "transactions committed per minute"}
		for _, ext := range []string{".png", ".svg"} {
			if err := ch.WriteFile(o.chart+ext, chartRows(res)); err != nil {
				return err
			}
			fmt.Println("wrote", o.chart+ext)
		}
		if o.doc != "" {
			rel, err := filepath.Rel(filepath.Dir(o.doc), o.chart+".png")
			if err != nil {
				return err
			}
			chartRel = filepath.ToSlash(rel)
		}
	}
	if o.doc == "" {
		return nil
	}
	begin, end := markers(o.section)
	if err := bench.UpdateFileSection(o.doc, "Benchmarks", begin, end, markdown(res, notes, chartRel, o.note, o.title)); err != nil {
		return err
	}
	fmt.Println("wrote", o.doc)
	return nil
}

func markdown(res *results, notes []string, chart, note, title string) string {
	var b strings.Builder
	p := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	o := res.Options
	names := make([]string, len(o.Servers))
	for i, s := range o.Servers {
		names[i] = label(s)
	}
	p("## %s\n\n", title)
	p("The TPC-C workload of `bench/tpcc` against %s, measured %s on one machine, in one sitting, by `%s`.\n\n",
		strings.Join(names, " and "), res.Started.UTC().Format("2006-01-02 15:04 MST"), res.Command)
	if note != "" {
		p("**Note:** %s\n\n", note)
	}
	p("- Machine: %s, %s at the end. The terminals ran on the same CPUs as the servers.\n", res.Machine, res.LoadAvgEnd)
	var vers []string
	for _, k := range []string{bench.MariaDB, bench.Percdb, "percdb checkout"} {
		if v := res.Versions[k]; v != "" {
			vers = append(vers, k+" "+v)
		}
	}
	p("- Software: %s.\n", strings.Join(vers, ", "))
	retry := "retried (with the same input) after 1213, 1205 and 8028, the retries counted"
	if !o.Retry {
		retry = "not retried: an error ends the transaction and is counted"
	}
	stock := "one `SELECT ... FOR UPDATE` per stock row"
	if o.StockIN {
		stock = "one `(s_w_id, s_i_id) IN (...) FOR UPDATE` for all stock rows"
	}
	analyzed := ", not analyzed after the load"
	if o.Analyze {
		analyzed = ", then every table analyzed (ANALYZE TABLE, in the load's time)"
	}
	mode := "the servers' default transaction isolation level (REPEATABLE READ)"
	if o.Isolation != "" {
		mode = "transaction isolation " + strings.ReplaceAll(o.Isolation, "-", " ") + " on every server (SET GLOBAL before the load)"
	}
	if o.TxnMode != "" {
		mode += ", percdb in " + o.TxnMode + " mode"
	} else {
		mode += ", percdb in its default (pessimistic) mode"
	}
	p("- Settings: %s.\n", mode)
	p("- Data: %d warehouse(s) at the standard population (item 100,000 rows, stock 100,000 per warehouse, customer 30,000, "+
		"orders 30,000, order_line about 300,000), loaded by %d connections with multi-row INSERTs%s.\n", o.Warehouses, o.Loaders, analyzed)
	p("- Runs: the standard mix (45/43/4/4/4), keying and think times off, %v per run plus up to %v for the transactions still running; "+
		"terminals at %s, the servers back to back and alternating which goes first; the runs do not reload. "+
		"Transactions %s. New-Order uses %s. Every statement is a server-side prepared statement.\n",
		o.Time, o.Grace, bench.JoinInts(o.Threads), retry, stock)
	p("- Figures: tpmC is New-Orders committed per minute of the interval (the 1%% rolled back by design are not in it). " +
		"Latency is the whole transaction as the client saw it, BEGIN to COMMIT, retries included, over the transactions " +
		"that ended within the interval. The checks are the consistency conditions 3.3.2.1-12 (3.3.2.2 as two checks; " +
		"3.3.2.11 applies to the initial population only).\n\n")
	p("Load:\n\n%s\n", bench.Markdown(loadGrid(res)))
	p("Throughput:\n\n%s\n", bench.Markdown(tpmGrid(res)))
	if chart != "" {
		p("![TPC-C transactions per minute](%s)\n\n", chart)
	}
	p("Per transaction:\n\n%s\n", bench.Markdown(txnGrid(res)))
	if g := requestsGrid(res); g != nil {
		p("percdb's requests to its store (the node's `percdb_kv_requests_total`, every command and result) per transaction: "+
			"each type run alone from one terminal after the load (%d of each; no lock waits, no retries), then the runs of the mix "+
			"(retries' requests included). Unlike the times above they do not change with the load on the machine.\n\n%s\n",
			o.Requests, bench.Markdown(g))
	}
	if len(notes) > 0 {
		p("Failed checks, failed runs, and the first error text of every error code:\n\n")
		for _, n := range notes {
			p("- %s\n", bench.MarkdownEscape(n))
		}
		p("\n")
	}
	p("Memory (VmRSS idle / after the load / at the end, VmHWM peak):\n\n")
	cols := bench.Columns{Servers: o.Servers, Labels: labels}
	p("%s\n", bench.Markdown(bench.MemoryGrid(res.Memory, cols)))
	p("To reproduce (about %v per server and thread count, plus the loads: a few seconds on MariaDB, minutes on percdb):\n\n",
		o.Time+o.Grace/2)
	p("    go run ./bench/cmd/tpcc -warehouses 1 -threads 1,4 -time 60s\n")
	p("    go run ./bench/cmd/tpcc -servers mariadb -threads 4,16 -doc '' -chart ''\n\n")
	p("`-retry=false` counts errors instead of retrying them, `-stock-in` switches New-Order to the row-constructor IN, " +
		"`-replot results.json` rewrites this section from an earlier run, `-h` lists the rest. The workload's own tests " +
		"(`go test ./bench/tpcc`) load, run and check a tiny database on an in-process percdb.\n")
	return b.String()
}

// ratioText renders q with three significant digits and no exponent
// (0.0000837, not 8.37e-05: a reader compares the column by eye).
func ratioText(q float64) string {
	s := strconv.FormatFloat(q, 'g', 3, 64)
	if strings.Contains(s, "e") {
		f, _ := strconv.ParseFloat(s, 64)
		s = strconv.FormatFloat(f, 'f', -1, 64)
	}
	return s
}
