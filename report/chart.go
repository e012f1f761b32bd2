package report

import (
	"fmt"
	"image/color"
	"io"
	"path/filepath"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"

	"github.com/orbit-loop/orbit/trust"
)

var (
	colBlue   = color.RGBA{R: 31, G: 119, B: 180, A: 255}
	colOrange = color.RGBA{R: 230, G: 120, B: 20, A: 255}
	colGreen  = color.NRGBA{R: 44, G: 160, B: 44, A: 40}
	colRed    = color.NRGBA{R: 214, G: 39, B: 40, A: 32}
	colGrey   = color.RGBA{R: 120, G: 120, B: 120, A: 255}
)

// ChartFormats are the file extensions TrustChart writes.
var ChartFormats = []string{".svg", ".png"}

// TrustChart draws, side by side, accuracy over iterations against the
// demotion (80%) and elevation (90%) thresholds, and the reliability diagram
// of stated confidence, as SVG or PNG by the file's extension.
func TrustChart(w io.Writer, file string, r trust.Report) error {
	ext := strings.ToLower(filepath.Ext(file))
	width, height := vg.Points(960), vg.Points(400)
	var canvas interface {
		vg.CanvasSizer
	}
	var out io.WriterTo
	switch ext {
	case ".svg":
		c := vgsvg.New(width, height)
		canvas, out = c, c
	case ".png":
		c := vgimg.NewWith(vgimg.UseWH(width, height), vgimg.UseDPI(144))
		canvas, out = c, vgimg.PngCanvas{Canvas: c}
	default:
		return fmt.Errorf("chart %s: want a file ending in %s", file, strings.Join(ChartFormats, " or "))
	}
	acc, err := accuracyPlot(r)
	if err != nil {
		return err
	}
	rel, err := reliabilityPlot(r.Calibration)
	if err != nil {
		return err
	}
	dc := draw.New(canvas)
	tiles := draw.Tiles{Rows: 1, Cols: 2, PadX: vg.Points(24), PadTop: vg.Points(8), PadBottom: vg.Points(8), PadLeft: vg.Points(8), PadRight: vg.Points(12)}
	plots := [][]*plot.Plot{{acc, rel}}
	cs := plot.Align(plots, tiles, dc)
	acc.Draw(cs[0][0])
	rel.Draw(cs[0][1])
	if _, err := out.WriteTo(w); err != nil {
		return fmt.Errorf("chart %s: %w", file, err)
	}
	return nil
}

func style(p *plot.Plot, title, x, y string) {
	p.Title.Text = title
	p.Title.TextStyle.Font.Size = vg.Points(13)
	p.X.Label.Text = x
	p.Y.Label.Text = y
	p.Y.Min, p.Y.Max = 0, 1.02
	p.Add(plotter.NewGrid())
	p.Legend.Top = false
	p.Legend.Left = true
	p.Legend.TextStyle.Font.Size = vg.Points(9)
}

// band shades y in [lo, hi] across x in [x0, x1].
func band(x0, x1, lo, hi float64, c color.Color) (*plotter.Polygon, error) {
	poly, err := plotter.NewPolygon(plotter.XYs{{X: x0, Y: lo}, {X: x1, Y: lo}, {X: x1, Y: hi}, {X: x0, Y: hi}})
	if err != nil {
		return nil, err
	}
	poly.Color = c
	poly.LineStyle.Width = 0
	return poly, nil
}

func hline(x0, x1, y float64, label string, p *plot.Plot) error {
	l, err := plotter.NewLine(plotter.XYs{{X: x0, Y: y}, {X: x1, Y: y}})
	if err != nil {
		return err
	}
	l.Color = colGrey
	l.Dashes = []vg.Length{vg.Points(4), vg.Points(3)}
	p.Add(l)
	p.Legend.Add(label, l)
	return nil
}

func accuracyPlot(r trust.Report) (*plot.Plot, error) {
	p := plot.New()
	style(p, "Accuracy per iteration", "iteration", "accuracy of verified decisions")
	its := r.Iterations
	if len(its) == 0 {
		p.Title.Text += " (no verified decisions yet)"
		p.X.Min, p.X.Max = 0, 1
		return p, nil
	}
	x0, x1 := float64(its[0].Iteration)-0.5, float64(its[len(its)-1].Iteration)+0.5
	green, err := band(x0, x1, trust.ElevatedAbove, 1.02, colGreen)
	if err != nil {
		return nil, err
	}
	red, err := band(x0, x1, 0, trust.DemotedBelow, colRed)
	if err != nil {
		return nil, err
	}
	p.Add(green, red)
	if err := hline(x0, x1, trust.ElevatedAbove, "90%: elevated above", p); err != nil {
		return nil, err
	}
	if err := hline(x0, x1, trust.DemotedBelow, "80%: demoted below", p); err != nil {
		return nil, err
	}
	pts := make(plotter.XYs, len(its))
	// Pooled accuracy over the last 5 iterations: the trend, not the noise.
	roll := make(plotter.XYs, len(its))
	for i, it := range its {
		pts[i] = plotter.XY{X: float64(it.Iteration), Y: it.Accuracy}
		var c, n int
		for j := max(0, i-4); j <= i; j++ {
			c += its[j].Correct
			n += its[j].N
		}
		roll[i] = plotter.XY{X: float64(it.Iteration), Y: float64(c) / float64(n)}
	}
	sc, err := plotter.NewScatter(pts)
	if err != nil {
		return nil, err
	}
	sc.Color = colBlue
	sc.Radius = vg.Points(2)
	line, err := plotter.NewLine(roll)
	if err != nil {
		return nil, err
	}
	line.Color = colOrange
	line.Width = vg.Points(2)
	p.Add(sc, line)
	p.Legend.Add("per iteration", sc)
	p.Legend.Add("last 5 iterations", line)
	p.X.Min, p.X.Max = x0, x1
	p.Y.Min = 0
	return p, nil
}

// yerr is points with asymmetric error bars.
type yerr struct {
	plotter.XYs
	plotter.YErrors
}

func reliabilityPlot(c trust.Calibration) (*plot.Plot, error) {
	p := plot.New()
	style(p, "Reliability of stated confidence", "stated confidence (bin mean)", "observed accuracy (95% Wilson)")
	p.X.Min, p.X.Max = 0, 1
	diag, err := plotter.NewLine(plotter.XYs{{X: 0, Y: 0}, {X: 1, Y: 1}})
	if err != nil {
		return nil, err
	}
	diag.Color = colGrey
	diag.Dashes = []vg.Length{vg.Points(4), vg.Points(3)}
	p.Add(diag)
	p.Legend.Add("perfect calibration", diag)
	var e yerr
	for _, b := range c.Bins {
		if b.N == 0 {
			continue
		}
		e.XYs = append(e.XYs, plotter.XY{X: b.MeanConfidence, Y: b.Accuracy})
		e.YErrors = append(e.YErrors, struct{ Low, High float64 }{b.Accuracy - b.CI95.Low, b.CI95.High - b.Accuracy})
	}
	if len(e.XYs) == 0 {
		p.Title.Text += " (no stated confidence yet)"
		return p, nil
	}
	bars, err := plotter.NewYErrorBars(e)
	if err != nil {
		return nil, err
	}
	bars.Color = colBlue
	line, pts, err := plotter.NewLinePoints(e.XYs)
	if err != nil {
		return nil, err
	}
	line.Color, pts.Color = colBlue, colBlue
	pts.Radius = vg.Points(3)
	p.Add(bars, line, pts)
	p.Legend.Add(fmt.Sprintf("bins (ECE %.3f, Brier %.3f, n=%d)", c.ECE, c.Brier, c.N), line, pts)
	return p, nil
}
