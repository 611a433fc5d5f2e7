package bench

import (
	"strings"
	"testing"
)

func TestThousands(t *testing.T) {
	for x, want := range map[float64]string{
		0: "0", 999: "999", 1000: "1,000", 29338.4: "29,338", 1234567.5: "1,234,568", -4321: "-4,321",
	} {
		if got := Thousands(x); got != want {
			t.Errorf("Thousands(%v) = %q, want %q", x, got, want)
		}
	}
}

func testRows() ([]Row, Columns) {
	cols := Columns{
		Servers:  []string{"mariadb", "percdb"},
		Labels:   map[string]string{"mariadb": "MariaDB"},
		Subject:  "percdb",
		Baseline: "mariadb",
	}
	rows := []Row{
		{Workload: "oltp_point_select", Threads: 1, Ratio: 0.5312, HasRatio: true, Cells: map[string]Cell{
			"mariadb": {Runs: 3, Valid: 3, QPS: 5980, P95: 0.21},
			"percdb":  {Runs: 3, Valid: 3, QPS: 3177.4, P95: 0.456, IgnoredErrors: 4},
		}},
		{Workload: "oltp_insert", Threads: 4, Cells: map[string]Cell{
			"mariadb": {Runs: 3, Valid: 3, QPS: 6008, P95: 0.99},
			"percdb":  {Runs: 3, Valid: 0, Flags: []string{"round 1: boom", "round 2: boom", "round 3: boom"}},
		}},
		{Workload: "oltp_delete", Threads: 4, Cells: map[string]Cell{
			"mariadb": {Runs: 3, Valid: 2, QPS: 100, P95: 1, Flags: []string{"round 2: 1 reconnects"}},
		}},
	}
	return rows, cols
}

func TestGrid(t *testing.T) {
	rows, cols := testRows()
	want := [][]string{
		{"workload, threads", "MariaDB QPS (p95 ms)", "percdb QPS (p95 ms)", "percdb/MariaDB"},
		{"oltp_point_select, 1", "5,980 (0.21)", "3,177 (0.46)", "0.53"},
		{"oltp_insert, 4", "6,008 (0.99)", "failed [0/3] !", "-"},
		{"oltp_delete, 4", "100 (1.00) [2/3] !", "-", "-"},
	}
	got := Grid(rows, cols)
	if len(got) != len(want) {
		t.Fatalf("Grid has %d lines, want %d: %q", len(got), len(want), got)
	}
	for i := range want {
		if strings.Join(got[i], "|") != strings.Join(want[i], "|") {
			t.Errorf("line %d = %q, want %q", i, got[i], want[i])
		}
	}

	cols.Servers = []string{"mariadb"}
	if g := Grid(rows, cols); len(g[0]) != 2 {
		t.Errorf("one server: header %q, want no ratio column", g[0])
	}
}

func TestWriteTextAligns(t *testing.T) {
	rows, cols := testRows()
	var b strings.Builder
	if err := WriteText(&b, Grid(rows, cols)); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimRight(b.String(), "\n"), "\n")
	if len(lines) != 5 || strings.Trim(lines[1], "-") != "" {
		t.Fatalf("want header, rule and 3 lines:\n%s", b.String())
	}
	for _, l := range lines {
		if len(l) != len(lines[0]) {
			t.Errorf("ragged table:\n%s", b.String())
			break
		}
	}
	// Figures are right-aligned: every line ends with its ratio column.
	if !strings.HasSuffix(lines[2], " 0.53") {
		t.Errorf("line %q: want the ratio right-aligned at the end", lines[2])
	}
}

func TestMarkdownTable(t *testing.T) {
	got := Markdown([][]string{{"a", "b"}, {"x|y", "1"}})
	want := "| a | b |\n| --- | ---: |\n| x\\|y | 1 |\n"
	if got != want {
		t.Errorf("Markdown = %q, want %q", got, want)
	}
	if Markdown(nil) != "" {
		t.Error("Markdown(nil) not empty")
	}
}

func TestNotes(t *testing.T) {
	rows, cols := testRows()
	notes := strings.Join(Notes(rows, cols), "\n")
	for _, want := range []string{
		"percdb oltp_point_select, 1: 4 errors retried",
		"percdb oltp_insert, 4: flagged, round 3: boom",
		"MariaDB oltp_delete, 4: flagged, round 2: 1 reconnects",
	} {
		if !strings.Contains(notes, want) {
			t.Errorf("notes lack %q:\n%s", want, notes)
		}
	}
}

func TestMemoryGrid(t *testing.T) {
	_, cols := testRows()
	g := MemoryGrid(map[string]Memory{"percdb": {Idle: 50 << 20, Loaded: 60 << 20, Peak: 1536 << 20, Final: 0}}, cols)
	if len(g) != 2 {
		t.Fatalf("MemoryGrid = %q, want a header and percdb only", g)
	}
	if want := []string{"percdb", "50 MiB", "60 MiB", "1,536 MiB", "-"}; strings.Join(g[1], "|") != strings.Join(want, "|") {
		t.Errorf("percdb line = %q, want %q", g[1], want)
	}
}
