package bench

import (
	"bytes"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestChartPNG(t *testing.T) {
	rows, cols := testRows()
	var b bytes.Buffer
	if err := (Chart{Title: "test", Cols: cols}).Write(&b, rows, "png"); err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(&b)
	if err != nil {
		t.Fatalf("not a PNG: %v", err)
	}
	// Two thread counts, two panels side by side: wider than tall.
	if sz := img.Bounds().Size(); sz.X <= sz.Y || sz.Y < 200 {
		t.Errorf("image %v, want a wide chart of readable height", sz)
	}
}

func TestChartSVG(t *testing.T) {
	rows, cols := testRows()
	var b bytes.Buffer
	if err := (Chart{Title: "sysbench test", Cols: cols}).Write(&b, rows, "svg"); err != nil {
		t.Fatal(err)
	}
	svg := b.String()
	for _, want := range []string{"<svg", "sysbench test", "MariaDB", "percdb", "point_select",
		"1 thread", "4 threads", "3,177  (0.53x)", "failed !"} {
		if !strings.Contains(svg, want) {
			t.Errorf("SVG lacks %q", want)
		}
	}
}

func TestChartErrors(t *testing.T) {
	rows, cols := testRows()
	if err := (Chart{Cols: cols}).Write(&bytes.Buffer{}, rows, "gif"); err == nil {
		t.Error("gif accepted")
	}
	if err := (Chart{Cols: cols}).Write(&bytes.Buffer{}, nil, "png"); err == nil {
		t.Error("empty results accepted")
	}
	path := filepath.Join(t.TempDir(), "c.bmp")
	if err := (Chart{Cols: cols}).WriteFile(path, rows); err == nil {
		t.Error("unknown extension accepted")
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Errorf("failed write left %s behind", path)
	}
}

func TestPlanRunTime(t *testing.T) {
	for _, tc := range []struct {
		plan Plan
		want time.Duration
		fits bool
	}{
		// 5 minutes for 24 runs with 1s overhead each: 11.5s, rounded down.
		{Plan{Left: 5 * time.Minute, Runs: 24, PerRunOverhead: time.Second}, 11 * time.Second, true},
		// Fixed costs come off first.
		{Plan{Left: 5 * time.Minute, Runs: 24, PerRunOverhead: time.Second, Fixed: 60 * time.Second}, 9 * time.Second, true},
		{Plan{Left: 10 * time.Second, Runs: 24}, time.Second, false},
		{Plan{Left: -time.Minute, Runs: 2}, time.Second, false},
		{Plan{Left: time.Minute}, time.Second, true},
	} {
		got, fits := tc.plan.RunTime()
		if got != tc.want || fits != tc.fits {
			t.Errorf("%+v: RunTime = %v, %v; want %v, %v", tc.plan, got, fits, tc.want, tc.fits)
		}
		if fits && tc.plan.Runs > 0 && tc.plan.Estimate(got) > tc.plan.Left {
			t.Errorf("%+v: estimate %v exceeds what is left", tc.plan, tc.plan.Estimate(got))
		}
	}
}

func TestParseProcStatus(t *testing.T) {
	st, err := ParseProcStatus(readTestdata(t, "proc-status.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if st.HWM != 37224*1024 || st.RSS != 33404*1024 {
		t.Errorf("ParseProcStatus = %+v, want HWM 37224 kB, RSS 33404 kB", st)
	}
	for _, bad := range []string{"Name:\tx\nVmHWM:\t1 kB\n", "VmRSS:\t1 MB\nVmHWM:\t1 kB\n", "VmRSS:\tx kB\nVmHWM:\t1 kB\n"} {
		if _, err := ParseProcStatus([]byte(bad)); err == nil {
			t.Errorf("ParseProcStatus(%q) accepted", bad)
		}
	}
	// The running test has a status of its own.
	self, err := ReadProcStatus(os.Getpid())
	if err != nil || self.RSS <= 0 || self.HWM < self.RSS {
		t.Errorf("own status %+v, %v: want 0 < RSS <= HWM", self, err)
	}
}

func TestFmtDuration(t *testing.T) {
	for d, want := range map[time.Duration]string{
		0: "0s", 1500 * time.Millisecond: "2s", 62 * time.Second: "1m02s", 3723 * time.Second: "1h02m03s",
	} {
		if got := fmtDuration(d); got != want {
			t.Errorf("fmtDuration(%v) = %q, want %q", d, got, want)
		}
	}
}
