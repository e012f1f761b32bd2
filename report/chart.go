package report

import (
	"fmt"
	"image/color"
	"io"
	"math"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/orbit-loop/orbit/trust"
)

// The trust chart is drawn here, on an SVG or a raster canvas (canvas.go),
// rather than with gonum/plot: that library's package initialisation
// (parsing its embedded fonts) ran in every orbit process, hooks included,
// and it brought LaTeX, PDF and twelve fonts into the binary (7.3 MB of 39),
// for two small charts.

var (
	colBlue   = color.NRGBA{R: 31, G: 119, B: 180, A: 255}
	colOrange = color.NRGBA{R: 230, G: 120, B: 20, A: 255}
	colGreen  = color.NRGBA{R: 44, G: 160, B: 44, A: 40}
	colRed    = color.NRGBA{R: 214, G: 39, B: 40, A: 32}
	colGrey   = color.NRGBA{R: 120, G: 120, B: 120, A: 255}
	colGrid   = color.NRGBA{R: 200, G: 200, B: 200, A: 255}
	colBlack  = color.NRGBA{A: 255}
)

// ChartFormats are the file extensions TrustChart writes.
var ChartFormats = []string{".svg", ".png"}

// Chart geometry, in points (1/72 inch).
const (
	chartWidth, chartHeight = 960, 400
	pngDPI                  = 144
)

// TrustChart draws, side by side, accuracy over iterations against the
// demotion (80%) and elevation (90%) thresholds, and the reliability diagram
// of stated confidence, as SVG or PNG by the file's extension.
func TrustChart(w io.Writer, file string, r trust.Report) error {
	var c canvas
	switch strings.ToLower(filepath.Ext(file)) {
	case ".svg":
		c = newSVG(chartWidth, chartHeight)
	case ".png":
		c = newRaster(chartWidth, chartHeight, pngDPI/72.0)
	default:
		return fmt.Errorf("chart %s: want a file ending in %s", file, strings.Join(ChartFormats, " or "))
	}
	const gap = 24
	half := (chartWidth - gap) / 2.0
	accuracyPlot(r).draw(c, rect{8, 8, half, chartHeight - 8})
	reliabilityPlot(r.Calibration).draw(c, rect{half + gap, 8, chartWidth - 12, chartHeight - 8})
	if err := c.writeTo(w); err != nil {
		return fmt.Errorf("chart %s: %w", file, err)
	}
	return nil
}

func accuracyPlot(r trust.Report) *plot {
	p := &plot{title: "Accuracy per iteration", xLabel: "iteration", yLabel: "accuracy of verified decisions",
		xMin: 0, xMax: 1, yMin: 0, yMax: 1.02, integerX: true}
	its := r.Iterations
	if len(its) == 0 {
		p.title += " (no verified decisions yet)"
		return p
	}
	p.xMin, p.xMax = float64(its[0].Iteration)-0.5, float64(its[len(its)-1].Iteration)+0.5
	p.add(band{p.xMin, p.xMax, trust.ElevatedAbove, 1.02, colGreen}, "")
	p.add(band{p.xMin, p.xMax, 0, trust.DemotedBelow, colRed}, "")
	dashed := stroke{col: colGrey, width: 1, dash: []float64{4, 3}}
	p.add(polyline{pts: []pt{{p.xMin, trust.ElevatedAbove}, {p.xMax, trust.ElevatedAbove}}, st: dashed}, "90%: elevated above")
	p.add(polyline{pts: []pt{{p.xMin, trust.DemotedBelow}, {p.xMax, trust.DemotedBelow}}, st: dashed}, "80%: demoted below")
	pts := make([]pt, len(its))
	// Pooled accuracy over the last 5 iterations: the trend, not the noise.
	roll := make([]pt, len(its))
	for i, it := range its {
		pts[i] = pt{float64(it.Iteration), it.Accuracy}
		var c, n int
		for j := max(0, i-4); j <= i; j++ {
			c += its[j].Correct
			n += its[j].N
		}
		roll[i] = pt{float64(it.Iteration), float64(c) / float64(n)}
	}
	p.add(markers{pts: pts, radius: 2, st: stroke{col: colBlue, width: 0.5}}, "per iteration")
	p.add(polyline{pts: roll, st: stroke{col: colOrange, width: 2}}, "last 5 iterations")
	return p
}

func reliabilityPlot(c trust.Calibration) *plot {
	p := &plot{title: "Reliability of stated confidence", xLabel: "stated confidence (bin mean)",
		yLabel: "observed accuracy (95% Wilson)", xMin: 0, xMax: 1, yMin: 0, yMax: 1.02}
	p.add(polyline{pts: []pt{{0, 0}, {1, 1}}, st: stroke{col: colGrey, width: 1, dash: []float64{4, 3}}}, "perfect calibration")
	var pts []pt
	var bars errorBars
	for _, b := range c.Bins {
		if b.N == 0 {
			continue
		}
		pts = append(pts, pt{b.MeanConfidence, b.Accuracy})
		bars.x = append(bars.x, b.MeanConfidence)
		bars.lo = append(bars.lo, b.CI95.Low)
		bars.hi = append(bars.hi, b.CI95.High)
	}
	if len(pts) == 0 {
		p.title += " (no stated confidence yet)"
		return p
	}
	blue := stroke{col: colBlue, width: 1}
	bars.st = blue
	p.add(bars, "")
	p.add(linePoints{polyline{pts: pts, st: blue}, markers{pts: pts, radius: 3, st: blue}},
		fmt.Sprintf("bins (ECE %.3f, Brier %.3f, n=%d)", c.ECE, c.Brier, c.N))
	return p
}

// pt is a point, in data units or in points on the canvas.
type pt struct{ x, y float64 }

// rect is a region of the canvas: left, top, right, bottom.
type rect struct{ x0, y0, x1, y1 float64 }

// stroke is how a line is drawn: colour, width in points, dash pattern.
type stroke struct {
	col   color.Color
	width float64
	dash  []float64
}

// plot is one panel: axes with ticks, a grid, items and a legend.
type plot struct {
	title, xLabel, yLabel  string
	xMin, xMax, yMin, yMax float64
	integerX               bool // x ticks at whole numbers only
	items                  []item
	legend                 []legendEntry
}

// item is something drawn in a plot's data area.
type item interface {
	draw(c canvas, to func(pt) pt)
	// glyph draws the item's sample in the legend, centred on at.
	glyph(c canvas, at pt)
}

type legendEntry struct {
	label string
	it    item
}

func (p *plot) add(it item, legend string) {
	p.items = append(p.items, it)
	if legend != "" {
		p.legend = append(p.legend, legendEntry{legend, it})
	}
}

// Font sizes, in points.
const (
	titleSize  = 13
	labelSize  = 12
	tickSize   = 10
	legendSize = 9
)

func (p *plot) draw(c canvas, r rect) {
	// The data area: room for the title, the tick labels and axis labels.
	area := rect{r.x0 + 56, r.y0 + 24, r.x1, r.y1 - 40}
	to := func(d pt) pt {
		return pt{
			area.x0 + (d.x-p.xMin)/(p.xMax-p.xMin)*(area.x1-area.x0),
			area.y1 - (d.y-p.yMin)/(p.yMax-p.yMin)*(area.y1-area.y0),
		}
	}
	xt, yt := ticks(p.xMin, p.xMax, p.integerX), ticks(p.yMin, p.yMax, false)
	grid := stroke{col: colGrid, width: 0.5}
	for _, t := range xt {
		a := to(pt{t.v, p.yMin})
		c.polyline([]pt{{a.x, area.y0}, {a.x, area.y1}}, grid)
	}
	for _, t := range yt {
		a := to(pt{p.xMin, t.v})
		c.polyline([]pt{{area.x0, a.y}, {area.x1, a.y}}, grid)
	}
	for _, it := range p.items {
		it.draw(c, to)
	}
	axis := stroke{col: colBlack, width: 0.75}
	c.polyline([]pt{{area.x0, area.y0}, {area.x0, area.y1}, {area.x1, area.y1}}, axis)
	for _, t := range xt {
		a := to(pt{t.v, p.yMin})
		c.polyline([]pt{{a.x, area.y1}, {a.x, area.y1 + 4}}, axis)
		c.text(pt{a.x, area.y1 + 6 + tickSize}, t.label, tickSize, anchorMiddle, false, colBlack)
	}
	for _, t := range yt {
		a := to(pt{p.xMin, t.v})
		c.polyline([]pt{{area.x0 - 4, a.y}, {area.x0, a.y}}, axis)
		c.text(pt{area.x0 - 6, a.y + tickSize*0.35}, t.label, tickSize, anchorEnd, false, colBlack)
	}
	c.text(pt{(area.x0 + area.x1) / 2, r.y0 + titleSize}, p.title, titleSize, anchorMiddle, false, colBlack)
	c.text(pt{(area.x0 + area.x1) / 2, r.y1 - 4}, p.xLabel, labelSize, anchorMiddle, false, colBlack)
	c.text(pt{r.x0 + labelSize, (area.y0 + area.y1) / 2}, p.yLabel, labelSize, anchorMiddle, true, colBlack)
	// The legend, bottom left of the data area, one entry a line.
	for i, e := range p.legend {
		y := area.y1 - 6 - float64(len(p.legend)-1-i)*(legendSize+3)
		e.it.glyph(c, pt{area.x0 + 14, y - legendSize*0.35})
		c.text(pt{area.x0 + 28, y}, e.label, legendSize, anchorStart, false, colBlack)
	}
}

// tick is an axis tick at v, with its label.
type tick struct {
	v     float64
	label string
}

// ticks returns 3 to 7 round ticks over [lo, hi] (steps of 1, 2 or 5 times
// a power of ten; whole numbers only when integer).
func ticks(lo, hi float64, integer bool) []tick {
	step := math.Pow(10, math.Floor(math.Log10((hi-lo)/2)))
	for _, m := range []float64{5, 2, 1} {
		if (hi-lo)/(step*m) >= 2.5 {
			step *= m
			break
		}
	}
	if integer {
		step = max(step, 1)
	}
	prec := max(0, int(-math.Floor(math.Log10(step))))
	if !integer && prec == 0 && lo < 1 && hi <= 2 {
		prec = 1 // 0.0, 0.5, 1.0
	}
	var out []tick
	for i := math.Ceil(lo/step - 1e-9); i*step <= hi+1e-9; i++ {
		v := i * step
		if v == 0 {
			v = 0 // not -0
		}
		out = append(out, tick{v, strconv.FormatFloat(v, 'f', prec, 64)})
	}
	return out
}

// band shades [x0, x1] × [lo, hi].
type band struct {
	x0, x1, lo, hi float64
	fill           color.Color
}

func (b band) draw(c canvas, to func(pt) pt) {
	c.polygon([]pt{to(pt{b.x0, b.lo}), to(pt{b.x1, b.lo}), to(pt{b.x1, b.hi}), to(pt{b.x0, b.hi})}, b.fill)
}

func (b band) glyph(c canvas, at pt) {
	c.polygon([]pt{{at.x - 8, at.y - 3}, {at.x + 8, at.y - 3}, {at.x + 8, at.y + 3}, {at.x - 8, at.y + 3}}, b.fill)
}

// polyline joins points.
type polyline struct {
	pts []pt
	st  stroke
}

func (l polyline) draw(c canvas, to func(pt) pt) {
	out := make([]pt, len(l.pts))
	for i, p := range l.pts {
		out[i] = to(p)
	}
	c.polyline(out, l.st)
}

func (l polyline) glyph(c canvas, at pt) {
	c.polyline([]pt{{at.x - 10, at.y}, {at.x + 10, at.y}}, l.st)
}

// markers are hollow circles at points.
type markers struct {
	pts    []pt
	radius float64
	st     stroke
}

func (m markers) draw(c canvas, to func(pt) pt) {
	for _, p := range m.pts {
		c.circle(to(p), m.radius, m.st)
	}
}

func (m markers) glyph(c canvas, at pt) { c.circle(at, m.radius, m.st) }

// linePoints is a line with a marker at each point.
type linePoints struct {
	line polyline
	pts  markers
}

func (l linePoints) draw(c canvas, to func(pt) pt) {
	l.line.draw(c, to)
	l.pts.draw(c, to)
}

func (l linePoints) glyph(c canvas, at pt) {
	l.line.glyph(c, at)
	l.pts.glyph(c, at)
}

// errorBars are vertical bars from lo to hi at each x, with caps.
type errorBars struct {
	x, lo, hi []float64
	st        stroke
}

func (e errorBars) draw(c canvas, to func(pt) pt) {
	for i, x := range e.x {
		a, b := to(pt{x, e.lo[i]}), to(pt{x, e.hi[i]})
		c.polyline([]pt{a, b}, e.st)
		c.polyline([]pt{{a.x - 3, a.y}, {a.x + 3, a.y}}, e.st)
		c.polyline([]pt{{b.x - 3, b.y}, {b.x + 3, b.y}}, e.st)
	}
}

func (e errorBars) glyph(c canvas, at pt) {
	c.polyline([]pt{{at.x, at.y - 4}, {at.x, at.y + 4}}, e.st)
}
