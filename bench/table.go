package bench

import (
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Columns names the servers of a results table, in column order, with the
// label each is shown under, and says which ratio to show.
type Columns struct {
	// Servers are server names as in Run.Server, in column order.
	Servers []string
	// Labels maps a server name to its heading, e.g. "MariaDB 10.11".
	// Default: the name itself.
	Labels map[string]string
	// Subject and Baseline name the servers of the ratio column
	// Subject/Baseline; the column is left out unless both are in Servers.
	Subject, Baseline string
}

func (c Columns) label(server string) string {
	if l := c.Labels[server]; l != "" {
		return l
	}
	return server
}

func (c Columns) hasRatio() bool {
	var s, b bool
	for _, name := range c.Servers {
		s = s || name == c.Subject
		b = b || name == c.Baseline
	}
	return s && b && c.Subject != c.Baseline
}

// Grid lays rows out as a header line and one line per row: the pair, then
// per server "QPS (p95 ms)" as medians, then the ratio. A cell whose runs
// were flagged ends in " !", one with fewer valid runs than runs shows
// "[valid/runs]", and one with no valid run shows "failed".
func Grid(rows []Row, cols Columns) [][]string {
	header := []string{"workload, threads"}
	for _, s := range cols.Servers {
		header = append(header, cols.label(s)+" QPS (p95 ms)")
	}
	if cols.hasRatio() {
		header = append(header, cols.label(cols.Subject)+"/"+cols.label(cols.Baseline))
	}
	grid := [][]string{header}
	for _, r := range rows {
		line := []string{fmt.Sprintf("%s, %d", r.Workload, r.Threads)}
		for _, s := range cols.Servers {
			line = append(line, cellText(r.Cells[s]))
		}
		if cols.hasRatio() {
			ratio := "-"
			if r.HasRatio {
				ratio = fmt.Sprintf("%.2f", r.Ratio)
			}
			line = append(line, ratio)
		}
		grid = append(grid, line)
	}
	return grid
}

func cellText(c Cell) string {
	if c.Runs == 0 {
		return "-"
	}
	var b strings.Builder
	if c.Valid == 0 {
		b.WriteString("failed")
	} else {
		fmt.Fprintf(&b, "%s (%.2f)", Thousands(c.QPS), c.P95)
	}
	if c.Valid < c.Runs {
		fmt.Fprintf(&b, " [%d/%d]", c.Valid, c.Runs)
	}
	if len(c.Flags) > 0 {
		b.WriteString(" !")
	}
	return b.String()
}

// Thousands formats x rounded to an integer with comma thousands separators.
func Thousands(x float64) string {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return strconv.FormatFloat(x, 'f', -1, 64)
	}
	s := strconv.FormatInt(int64(math.Round(x)), 10)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	if neg {
		b.WriteByte('-')
	}
	for i, d := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(d)
	}
	return b.String()
}

// WriteText writes grid as space-aligned columns, the first left-aligned
// and the others right-aligned, with a rule under the header.
func WriteText(w io.Writer, grid [][]string) error {
	if len(grid) == 0 {
		return nil
	}
	widths := make([]int, len(grid[0]))
	for _, line := range grid {
		for i, cell := range line {
			widths[i] = max(widths[i], utf8.RuneCountInString(cell))
		}
	}
	var b strings.Builder
	for n, line := range grid {
		for i, cell := range line {
			pad := strings.Repeat(" ", widths[i]-utf8.RuneCountInString(cell))
			switch {
			case i == 0:
				b.WriteString(cell + pad)
			default:
				b.WriteString("  " + pad + cell)
			}
		}
		b.WriteByte('\n')
		if n == 0 {
			total := 0
			for _, wd := range widths {
				total += wd
			}
			b.WriteString(strings.Repeat("-", total+2*(len(widths)-1)) + "\n")
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// Markdown renders grid as a GitHub markdown table, figures right-aligned.
func Markdown(grid [][]string) string {
	if len(grid) == 0 {
		return ""
	}
	var b strings.Builder
	row := func(cells []string) {
		b.WriteString("|")
		for _, c := range cells {
			b.WriteString(" " + strings.ReplaceAll(c, "|", `\|`) + " |")
		}
		b.WriteByte('\n')
	}
	row(grid[0])
	align := make([]string, len(grid[0]))
	for i := range align {
		align[i] = "---:"
	}
	align[0] = "---"
	row(align)
	for _, line := range grid[1:] {
		row(line)
	}
	return b.String()
}

// Notes lists, one line each, the flagged runs and the retried errors of
// every cell, for printing under a table.
func Notes(rows []Row, cols Columns) []string {
	var notes []string
	for _, r := range rows {
		for _, s := range cols.Servers {
			c, ok := r.Cells[s]
			if !ok {
				continue
			}
			for _, f := range c.Flags {
				notes = append(notes, fmt.Sprintf("%s %s, %d: flagged, %s", cols.label(s), r.Workload, r.Threads, f))
			}
			if c.IgnoredErrors > 0 {
				notes = append(notes, fmt.Sprintf("%s %s, %d: %d error%s retried by sysbench (deadlock/lock wait) over %d run%s",
					cols.label(s), r.Workload, r.Threads, c.IgnoredErrors, plural(int(c.IgnoredErrors)), c.Runs, plural(c.Runs)))
			}
		}
	}
	return notes
}

// MiB formats a byte count in mebibytes.
func MiB(bytes int64) string {
	if bytes <= 0 {
		return "-"
	}
	return fmt.Sprintf("%s MiB", Thousands(float64(bytes)/(1<<20)))
}

// MemoryGrid lays out the resident memory of each server: idle after start,
// after the tables were first loaded, peak (VmHWM) and at the end.
func MemoryGrid(mem map[string]Memory, cols Columns) [][]string {
	grid := [][]string{{"server", "idle RSS", "RSS after load", "peak RSS (VmHWM)", "RSS after runs"}}
	for _, s := range cols.Servers {
		m, ok := mem[s]
		if !ok {
			continue
		}
		grid = append(grid, []string{cols.label(s), MiB(m.Idle), MiB(m.Loaded), MiB(m.Peak), MiB(m.Final)})
	}
	return grid
}
