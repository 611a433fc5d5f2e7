package bench

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestReplaceSection(t *testing.T) {
	const b, e = "<!-- b -->", "<!-- e -->"
	for _, tc := range []struct {
		name, doc, want, wantErr string
	}{
		{name: "empty doc", doc: "", want: b + "\nnew\n" + e + "\n"},
		{name: "append", doc: "# T\n\nprose\n\n\n", want: "# T\n\nprose\n\n" + b + "\nnew\n" + e + "\n"},
		{name: "replace in place",
			doc:  "# T\n\n" + b + "\nold\nold\n" + e + "\n\n## later\nkept\n",
			want: "# T\n\n" + b + "\nnew\n" + e + "\n\n## later\nkept\n"},
		{name: "end at end of file", doc: "x\n" + b + "\nold\n" + e, want: "x\n" + b + "\nnew\n" + e},
		{name: "begin only", doc: b + "\nold\n", wantErr: "have 1 and 0"},
		{name: "twice", doc: b + e + b + e, wantErr: "have 2 and 2"},
		{name: "reversed", doc: e + "\n" + b, wantErr: "end marker before begin"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ReplaceSection(tc.doc, b, e, "\nnew\n\n")
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.want {
				t.Errorf("got\n%q\nwant\n%q", got, tc.want)
			}
			// Replacing again with the same body changes nothing.
			again, err := ReplaceSection(got, b, e, "new")
			if err != nil || again != got {
				t.Errorf("second replace: %v\n%q", err, again)
			}
		})
	}
	if _, err := ReplaceSection("x", "", e, "y"); err == nil {
		t.Error("empty marker accepted")
	}
}

func TestUpdateFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "benchmarks.md")
	if err := UpdateFile(path, "Benchmarks", "## sysbench\none"); err != nil {
		t.Fatal(err)
	}
	// Someone adds their own section after ours.
	b, _ := os.ReadFile(path)
	if err := os.WriteFile(path, append(b, "\n## layers\nmine\n"...), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := UpdateFile(path, "Benchmarks", "## sysbench\ntwo"); err != nil {
		t.Fatal(err)
	}
	b, _ = os.ReadFile(path)
	got := string(b)
	for _, want := range []string{"# Benchmarks\n", "## sysbench\ntwo\n", "## layers\nmine\n"} {
		if !strings.Contains(got, want) {
			t.Errorf("file lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "one") {
		t.Errorf("old section survived:\n%s", got)
	}
}

func TestSectionMarkdown(t *testing.T) {
	rows, cols := testRows()
	start := time.Date(2026, 1, 2, 3, 4, 0, 0, time.UTC)
	res := &Result{
		Command:  "go run ./bench/cmd/percdb-bench -budget 5m",
		Options:  Options{}.withDefaults(),
		Started:  start,
		Finished: start.Add(5 * time.Minute),
		Machine:  Machine{CPUs: 2, CPUModel: "Test CPU", MemTotal: 24 << 30, Kernel: "6.1", LoadAvg: "1.00 0.50 0.25"},
		Versions: map[string]string{"sysbench": "1.0.20", "mariadb": "10.11.19-MariaDB"},
		Argv:     map[string][]string{"mariadb": {"/usr/sbin/mariadbd", "--no-defaults"}},
		RunTime:  4 * time.Second,
		Memory:   map[string]Memory{"mariadb": {Idle: 100 << 20}},
	}
	md := Section{Result: res, Rows: rows, Cols: cols, Chart: "benchmarks-sysbench.png", Note: "machine busy"}.Markdown()
	for _, want := range []string{
		"## sysbench\n",
		"2026-01-02 03:04 UTC",
		"`go run ./bench/cmd/percdb-bench -budget 5m`",
		"**Note:** machine busy",
		"2 CPUs (Test CPU), 24.0 GiB",
		"| oltp_point_select, 1 | 5,980 (0.21) | 3,177 (0.46) | 0.53 |",
		"![sysbench QPS per workload](benchmarks-sysbench.png)",
		"| MariaDB | 100 MiB |",
		"`/usr/sbin/mariadbd --no-defaults`",
		"--time=4",
		FullRunCommand,
	} {
		if !strings.Contains(md, want) {
			t.Errorf("section lacks %q:\n%s", want, md)
		}
	}
	if strings.Contains(md, "%!") {
		t.Errorf("formatting error in section:\n%s", md)
	}
}

func TestMarkdownEscape(t *testing.T) {
	got := MarkdownEscape(`key "t\x80_i" <a> *b* |c|`)
	want := `key "t\\x80\_i" \<a\> \*b\* \|c\|`
	if got != want {
		t.Errorf("MarkdownEscape = %s, want %s", got, want)
	}
}
