package main

import (
	"fmt"
	"os"
	"strings"

	"github.com/percdb/percdb/bench"
)

// Markers of the generated scan section of docs/benchmarks.md.
const (
	sectionBegin = "<!-- BEGIN scan: written by `go run ./bench/cmd/scanbench`; edits up to END are overwritten -->"
	sectionEnd   = "<!-- END scan -->"
)

var labels = map[string]string{bench.MariaDB: "MariaDB", bench.Percdb: "percdb"}

func label(s string) string {
	if l := labels[s]; l != "" {
		return l
	}
	return s
}

// grid is one line per (query, table): the median per server, the ratio
// percdb/MariaDB of the medians, and whether the answers agree.
func grid(res *results) [][]string {
	srv := res.Options.Servers
	head := []string{"query", "table"}
	for _, s := range srv {
		head = append(head, label(s))
	}
	both := len(srv) == 2 && srv[0] != srv[1]
	if both {
		head = append(head, "percdb/MariaDB", "same answer")
	}
	g := [][]string{head}
	for _, m := range res.Measurements {
		table := m.Table
		if m.Rows > 0 {
			table = bench.Thousands(float64(m.Rows)) + " rows"
		} else {
			table = "TPC-C, 1 warehouse"
		}
		line := []string{m.Query, table}
		for _, s := range srv {
			line = append(line, m.Timings[s].Summary())
		}
		if both {
			p, b := m.Timings[bench.Percdb], m.Timings[bench.MariaDB]
			ratio := "-"
			switch {
			case p.OverLimit && len(b.Times) > 0:
				ratio = fmt.Sprintf("> %.0f", float64(p.Limit)/float64(b.Median))
			case len(p.Times) > 0 && len(b.Times) > 0:
				ratio = fmt.Sprintf("%.2f", float64(p.Median)/float64(b.Median))
			}
			same := "-"
			if p.Digest != "" && b.Digest != "" {
				switch {
				case p.Digest == b.Digest:
					same = "yes"
				case !m.Ordered:
					same = fmt.Sprintf("%d / %d rows (order free)", p.Rows, b.Rows)
				default:
					same = "NO"
				}
			}
			line = append(line, ratio, same)
		}
		g = append(g, line)
	}
	return g
}

func loadGrid(res *results) [][]string {
	g := [][]string{{"server", "table", "rows", "load and ANALYZE"}}
	for _, l := range res.Loads {
		took := l.Took.Round(100 * 1e6).String()
		if l.Err != "" {
			took += " (failed: " + l.Err + ")"
		}
		g = append(g, []string{label(l.Server), l.Table, bench.Thousands(float64(l.Rows)), took})
	}
	return g
}

func report(res *results, doc, note string) error {
	for _, g := range [][][]string{loadGrid(res), grid(res)} {
		fmt.Println()
		if err := bench.WriteText(os.Stdout, g); err != nil {
			return err
		}
	}
	var errs []string
	for _, m := range res.Measurements {
		for _, s := range res.Options.Servers {
			if t := m.Timings[s]; t.Err != "" {
				errs = append(errs, fmt.Sprintf("%s, %s on %s: %s", label(s), m.Query, m.Table, t.Err))
			}
		}
	}
	for _, e := range errs {
		fmt.Println("  " + e)
	}
	if doc == "" {
		return nil
	}
	if err := bench.UpdateFileSection(doc, "Benchmarks", sectionBegin, sectionEnd, markdown(res, errs, note)); err != nil {
		return err
	}
	fmt.Println("wrote", doc)
	return nil
}

func markdown(res *results, errs []string, note string) string {
	var b strings.Builder
	p := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	o := res.Options
	p("## Scans and analytics\n\n")
	p("Query times on percdb and MariaDB, measured %s on one machine, in one sitting, by `%s`.\n\n",
		res.Started.UTC().Format("2006-01-02 15:04 MST"), res.Command)
	if note != "" {
		p("**Note:** %s\n\n", note)
	}
	p("- Machine: %s, %s at the end.\n", res.Machine, res.LoadAvgEnd)
	var vers []string
	for _, k := range []string{bench.MariaDB, bench.Percdb, "percdb checkout"} {
		if v := res.Versions[k]; v != "" {
			vers = append(vers, k+" "+v)
		}
	}
	p("- Software: %s.\n", strings.Join(vers, ", "))
	p("- Tables: `(w INT, id INT, k INT, q INT, pad VARCHAR(120), PRIMARY KEY (w, id), KEY (k))`, w in 1..10, id in 1..rows/10, " +
		"k uniform in 1..rows, q uniform in 0..99, a 100-byte pad; the same rows on both servers (seeded). ")
	if o.TPCC {
		p("The TPC-C queries run on a freshly loaded one-warehouse database of `bench/tpcc`. ")
	}
	p("Every table is analyzed after its load.\n")
	p("- Figures: the median of %d runs of each query on one connection, the whole answer read; the servers alternate which goes first "+
		"from query to query. A run past %v is stopped with KILL QUERY (\"> %v\"), and the query is not repeated. "+
		"\"same answer\" compares a hash of the rows of both servers.\n\n", o.Repeat, o.Limit, o.Limit)
	p("%s\n", bench.Markdown(grid(res)))
	if len(errs) > 0 {
		p("Errors:\n\n")
		for _, e := range errs {
			p("- %s\n", bench.MarkdownEscape(e))
		}
		p("\n")
	}
	p("The statements (`{t}` is the table):\n\n")
	p("| query | SQL |\n| --- | --- |\n")
	seen := map[string]bool{}
	for _, m := range res.Measurements {
		if seen[m.Query] {
			continue
		}
		seen[m.Query] = true
		for _, t := range m.Timings {
			sql := strings.ReplaceAll(t.SQL, m.Table, "{t}")
			if m.Rows == 0 {
				sql = t.SQL
			}
			if sql != "" {
				p("| %s | `%s` |\n", m.Query, strings.ReplaceAll(sql, "|", "\\|"))
				break
			}
		}
	}
	p("\nLoads:\n\n%s\n", bench.Markdown(loadGrid(res)))
	p("To reproduce:\n\n    go run ./bench/cmd/scanbench -rows 100000,1000000 -limit 60s\n\n")
	p("`-servers mariadb` measures one server, `-tpcc=false` skips the TPC-C database, `-replot results.json` rewrites this section.\n")
	return b.String()
}
