package bench

import (
	"fmt"
	"io"
	"os"
	"time"
)

// Progress keeps one status line up to date on a terminal, or prints one
// line per step elsewhere (a log file, CI), and lets log messages through
// without garbling it. It is used from one goroutine.
type Progress struct {
	w        io.Writer
	terminal bool
	start    time.Time
	line     string
}

// NewProgress writes to w; it redraws in place when w is a terminal. A nil
// w discards everything.
func NewProgress(w io.Writer) *Progress {
	if w == nil {
		w = io.Discard
	}
	p := &Progress{w: w, start: time.Now()}
	if f, ok := w.(*os.File); ok {
		if st, err := f.Stat(); err == nil && st.Mode()&os.ModeCharDevice != 0 {
			p.terminal = true
		}
	}
	return p
}

// Elapsed is the time since the Progress was made.
func (p *Progress) Elapsed() time.Duration { return time.Since(p.start) }

// Status replaces the status line.
func (p *Progress) Status(format string, args ...any) {
	p.line = fmt.Sprintf("[%s] ", fmtDuration(p.Elapsed())) + fmt.Sprintf(format, args...)
	if p.terminal {
		fmt.Fprintf(p.w, "\r\033[K%s", p.line)
		return
	}
	fmt.Fprintln(p.w, p.line)
}

// Logf prints a message on its own line, keeping the status line below it.
func (p *Progress) Logf(format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	if p.terminal {
		fmt.Fprintf(p.w, "\r\033[K%s\n%s", msg, p.line)
		return
	}
	fmt.Fprintln(p.w, msg)
}

// Done ends the status line.
func (p *Progress) Done() {
	if p.terminal && p.line != "" {
		fmt.Fprintln(p.w)
	}
	p.line = ""
}

// fmtDuration prints d as 1h02m03s / 2m03s / 3s.
func fmtDuration(d time.Duration) string {
	d = d.Round(time.Second)
	h, m, s := int(d/time.Hour), int(d/time.Minute)%60, int(d/time.Second)%60
	switch {
	case h > 0:
		return fmt.Sprintf("%dh%02dm%02ds", h, m, s)
	case m > 0:
		return fmt.Sprintf("%dm%02ds", m, s)
	default:
		return fmt.Sprintf("%ds", s)
	}
}
