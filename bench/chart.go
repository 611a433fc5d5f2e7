package bench

import (
	"fmt"
	"image/color"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"
)

// serverColor is the bar colour of the server in column i: a
// colour-blind-safe blue and orange, then greys for anything further.
func serverColor(i int) color.Color {
	switch i {
	case 0:
		return color.RGBA{R: 0x31, G: 0x6b, B: 0xa8, A: 0xff}
	case 1:
		return color.RGBA{R: 0xe0, G: 0x7b, B: 0x1f, A: 0xff}
	default:
		g := uint8(0x40 + 0x30*(i-2)%0xa0)
		return color.RGBA{R: g, G: g, B: g, A: 0xff}
	}
}

const (
	chartDPI   = 110
	barWidth   = vg.Length(9)
	panelWidth = 5.2 * vg.Inch
)

// Chart draws the median QPS of every (workload, threads) pair as
// horizontal bars, one panel per thread count, one bar per server, with the
// value (and the subject/baseline ratio) written at the end of the bar and
// a thin line over each bar spanning the lowest to the highest round.
type Chart struct {
	// Title is drawn above the panels.
	Title string
	// Cols names the servers, their labels and the ratio shown.
	Cols Columns
	// XLabel is the label of the value axis. Default: "queries per
	// second, median of rounds" (a Cell's QPS).
	XLabel string
}

// panels builds one plot per thread count.
func (ch Chart) panels(rows []Row) ([]*plot.Plot, error) {
	var threads []int
	var workloads []string
	for _, r := range rows {
		if !slices.Contains(threads, r.Threads) {
			threads = append(threads, r.Threads)
		}
		if !slices.Contains(workloads, r.Workload) {
			workloads = append(workloads, r.Workload)
		}
	}
	// The first workload is drawn at the top: category y = n-1-i.
	n := len(workloads)
	names := make([]string, n)
	for i, w := range workloads {
		names[n-1-i] = strings.TrimPrefix(w, "oltp_")
	}
	nServers := len(ch.Cols.Servers)
	var plots []*plot.Plot
	for _, t := range threads {
		p := plot.New()
		p.Title.Text = fmt.Sprintf("%d thread%s", t, plural(t))
		p.X.Label.Text = ch.XLabel
		if p.X.Label.Text == "" {
			p.X.Label.Text = "queries per second, median of rounds"
		}
		p.X.Min = 0
		p.NominalY(names...)
		p.X.Tick.Marker = thousandsTicks{}
		maxX := 0.0
		for k, server := range ch.Cols.Servers {
			vals := make(plotter.Values, n)
			var spread []spreadMark
			var labelXY plotter.XYs
			var labels []string
			// Server 0 is the top bar of each group.
			offset := (vg.Length(nServers-1)/2 - vg.Length(k)) * barWidth
			for _, r := range rows {
				if r.Threads != t {
					continue
				}
				y := float64(n - 1 - slices.Index(workloads, r.Workload))
				c := r.Cells[server]
				vals[int(y)] = c.QPS
				maxX = max(maxX, c.MaxQPS, c.QPS)
				if c.Valid > 1 && c.MaxQPS > c.MinQPS {
					spread = append(spread, spreadMark{y: y, min: c.MinQPS, max: c.MaxQPS})
				}
				label := "failed"
				if c.Valid > 0 {
					label = Thousands(c.QPS)
				}
				if c.Runs == 0 {
					label = ""
				}
				if len(c.Flags) > 0 {
					label += " !"
				}
				if server == ch.Cols.Subject && ch.Cols.hasRatio() && r.HasRatio {
					label += fmt.Sprintf("  (%.2fx)", r.Ratio)
				}
				// Right of the spread line, which may pass the bar's end.
				labelXY = append(labelXY, plotter.XY{X: max(c.QPS, c.MaxQPS), Y: y})
				labels = append(labels, label)
			}
			bars, err := plotter.NewBarChart(vals, barWidth)
			if err != nil {
				return nil, fmt.Errorf("chart %s, %d threads: %w", server, t, err)
			}
			bars.Horizontal = true
			bars.Offset = offset
			bars.Color = serverColor(k)
			bars.LineStyle.Width = 0
			p.Add(bars)
			p.Add(&spreadMarks{marks: spread, offset: offset})
			if len(labelXY) > 0 {
				lbl, err := plotter.NewLabels(plotter.XYLabels{XYs: labelXY, Labels: labels})
				if err != nil {
					return nil, fmt.Errorf("chart %s, %d threads: %w", server, t, err)
				}
				for i := range lbl.TextStyle {
					lbl.TextStyle[i].Font.Size = vg.Points(7.5)
					lbl.TextStyle[i].XAlign = draw.XLeft
					lbl.TextStyle[i].YAlign = draw.YCenter
				}
				lbl.Offset = vg.Point{X: vg.Points(3), Y: offset}
				p.Add(lbl)
			}
		}
		// Room for the labels right of the longest bar.
		p.X.Max = max(maxX*1.35, 1)
		plots = append(plots, p)
	}
	return plots, nil
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// spreadMark is the range of QPS over the rounds of one bar.
type spreadMark struct {
	y, min, max float64
}

// spreadMarks draws the range of each bar as a thin line with end caps, so a
// reader sees how much the rounds disagreed.
type spreadMarks struct {
	marks  []spreadMark
	offset vg.Length
}

// Plot implements plot.Plotter.
func (s *spreadMarks) Plot(c draw.Canvas, p *plot.Plot) {
	trX, trY := p.Transforms(&c)
	style := draw.LineStyle{Color: color.Black, Width: vg.Points(0.8)}
	capH := barWidth / 4
	for _, m := range s.marks {
		y := trY(m.y) + s.offset
		x0, x1 := trX(m.min), trX(m.max)
		c.StrokeLine2(style, x0, y, x1, y)
		c.StrokeLine2(style, x0, y-capH, x0, y+capH)
		c.StrokeLine2(style, x1, y-capH, x1, y+capH)
	}
}

// drawLegend draws a colour swatch and label per server, in one line
// centred on top (the top edge of the line).
func (ch Chart) drawLegend(dc draw.Canvas, top vg.Point, style text.Style) {
	style.Font.Size = vg.Points(10)
	style.XAlign, style.YAlign = draw.XLeft, draw.YCenter
	swatch, gap := vg.Points(10), vg.Points(4)
	width := vg.Length(0)
	for _, s := range ch.Cols.Servers {
		width += swatch + gap + style.Width(ch.Cols.label(s)) + 3*gap
	}
	x, y := top.X-width/2, top.Y-swatch/2
	for k, s := range ch.Cols.Servers {
		dc.SetColor(serverColor(k))
		dc.Fill(vg.Rectangle{Min: vg.Point{X: x, Y: y - swatch/2}, Max: vg.Point{X: x + swatch, Y: y + swatch/2}}.Path())
		x += swatch + gap
		dc.FillText(style, vg.Point{X: x, Y: y}, ch.Cols.label(s))
		x += style.Width(ch.Cols.label(s)) + 3*gap
	}
}

// thousandsTicks are plot's default ticks labelled 12,500 rather than
// 12500.00.
type thousandsTicks struct{}

// Ticks implements plot.Ticker.
func (thousandsTicks) Ticks(min, max float64) []plot.Tick {
	ticks := plot.DefaultTicks{}.Ticks(min, max)
	for i := range ticks {
		if ticks[i].Label != "" {
			ticks[i].Label = Thousands(ticks[i].Value)
		}
	}
	return ticks
}

// Write renders the chart for rows to w in format "png" or "svg".
func (ch Chart) Write(w io.Writer, rows []Row, format string) error {
	plots, err := ch.panels(rows)
	if err != nil {
		return err
	}
	if len(plots) == 0 {
		return fmt.Errorf("chart: no results to draw")
	}
	nWorkloads := 0
	for _, r := range rows {
		if r.Threads == rows[0].Threads {
			nWorkloads++
		}
	}
	width := vg.Length(len(plots)) * panelWidth
	height := vg.Length(nWorkloads)*(vg.Length(len(ch.Cols.Servers))*barWidth+vg.Points(12)) + 1.9*vg.Inch

	var canvas vg.CanvasWriterTo
	switch format {
	case "png":
		canvas = vgimg.PngCanvas{Canvas: vgimg.NewWith(vgimg.UseWH(width, height), vgimg.UseDPI(chartDPI))}
	case "svg":
		canvas = vgsvg.New(width, height)
	default:
		return fmt.Errorf("chart: unknown format %q, want png or svg", format)
	}
	dc := draw.New(canvas)
	dc.SetColor(color.White)
	dc.Fill(dc.Rectangle.Path())

	titleStyle := text.Style{
		Color:   color.Black,
		Font:    plot.New().Title.TextStyle.Font,
		XAlign:  draw.XCenter,
		YAlign:  draw.YTop,
		Handler: plot.DefaultTextHandler,
	}
	titleStyle.Font.Size = vg.Points(12)
	dc.FillText(titleStyle, vg.Point{X: dc.Center().X, Y: dc.Max.Y - vg.Points(6)}, ch.Title)

	ch.drawLegend(dc, vg.Point{X: dc.Center().X, Y: dc.Max.Y - vg.Points(26)}, titleStyle)

	tiles := draw.Tiles{
		Rows: 1, Cols: len(plots),
		PadTop: vg.Points(42), PadBottom: vg.Points(6), PadLeft: vg.Points(6), PadRight: vg.Points(10),
		PadX: vg.Points(18),
	}
	cells := plot.Align([][]*plot.Plot{plots}, tiles, dc)
	for i, p := range plots {
		p.Draw(cells[0][i])
	}
	if _, err := canvas.WriteTo(w); err != nil {
		return fmt.Errorf("chart: %w", err)
	}
	return nil
}

// WriteFile writes the chart to path, as PNG or SVG by its extension.
func (ch Chart) WriteFile(path string, rows []Row) error {
	format := strings.TrimPrefix(filepath.Ext(path), ".")
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("chart: %w", err)
	}
	if err := ch.Write(f, rows, format); err != nil {
		f.Close()
		os.Remove(path)
		return fmt.Errorf("%s: %w", path, err)
	}
	return f.Close()
}
