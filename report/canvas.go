package report

import (
	"bufio"
	"fmt"
	"image"
	"image/color"
	"image/draw"
	"image/png"
	"io"
	"math"
	"strconv"
	"strings"

	"golang.org/x/image/font"
	"golang.org/x/image/font/gofont/goregular"
	"golang.org/x/image/font/opentype"
	"golang.org/x/image/math/fixed"
	"golang.org/x/image/vector"
)

// canvas is what a chart draws on, in points from the top left: SVG text
// or a raster image written as PNG.
type canvas interface {
	polyline(pts []pt, st stroke)
	polygon(pts []pt, fill color.Color)
	// circle draws a circle's outline.
	circle(center pt, r float64, st stroke)
	// text writes s with its baseline through at, anchored there by its
	// start, middle or end; vertical text reads upwards, turned about at.
	text(at pt, s string, size float64, a anchor, vertical bool, col color.Color)
	writeTo(w io.Writer) error
}

type anchor int

const (
	anchorStart anchor = iota
	anchorMiddle
	anchorEnd
)

// chartFont names the SVG's fonts; the raster canvas draws with Go's own
// (embedded, parsed only when a PNG is drawn).
const chartFont = "Helvetica, Arial, sans-serif"

// svgCanvas writes SVG elements as they are drawn.
type svgCanvas struct {
	b strings.Builder
}

func newSVG(w, h float64) *svgCanvas {
	c := &svgCanvas{}
	fmt.Fprintf(&c.b, `<?xml version="1.0" encoding="UTF-8"?>
<svg xmlns="http://www.w3.org/2000/svg" width="%spt" height="%spt" viewBox="0 0 %s %s" font-family="%s">
<rect width="%s" height="%s" fill="#ffffff"/>
`, num(w), num(h), num(w), num(h), chartFont, num(w), num(h))
	return c
}

func (c *svgCanvas) polyline(pts []pt, st stroke) {
	fmt.Fprintf(&c.b, `<polyline points="%s" fill="none" %s/>`+"\n", points(pts), strokeAttrs(st))
}

func (c *svgCanvas) polygon(pts []pt, fill color.Color) {
	fmt.Fprintf(&c.b, `<polygon points="%s" %s/>`+"\n", points(pts), paint("fill", fill))
}

func (c *svgCanvas) circle(p pt, r float64, st stroke) {
	fmt.Fprintf(&c.b, `<circle cx="%s" cy="%s" r="%s" fill="none" %s/>`+"\n", num(p.x), num(p.y), num(r), strokeAttrs(st))
}

func (c *svgCanvas) text(at pt, s string, size float64, a anchor, vertical bool, col color.Color) {
	rotate := ""
	if vertical {
		rotate = fmt.Sprintf(` transform="rotate(-90 %s %s)"`, num(at.x), num(at.y))
	}
	fmt.Fprintf(&c.b, `<text x="%s" y="%s" font-size="%s" text-anchor="%s"%s %s>%s</text>`+"\n",
		num(at.x), num(at.y), num(size), [...]string{"start", "middle", "end"}[a], rotate, paint("fill", col), xmlEscaper.Replace(s))
}

func (c *svgCanvas) writeTo(w io.Writer) error {
	_, err := io.WriteString(w, c.b.String()+"</svg>\n")
	return err
}

var xmlEscaper = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&quot;")

// num formats a coordinate: at most two decimals, no trailing zeros.
func num(v float64) string {
	return strconv.FormatFloat(math.Round(v*100)/100, 'f', -1, 64)
}

func points(pts []pt) string {
	s := make([]string, len(pts))
	for i, p := range pts {
		s[i] = num(p.x) + "," + num(p.y)
	}
	return strings.Join(s, " ")
}

// paint is an SVG colour attribute, with its opacity when not opaque.
func paint(attr string, col color.Color) string {
	c := color.NRGBAModel.Convert(col).(color.NRGBA)
	s := fmt.Sprintf(`%s="#%02x%02x%02x"`, attr, c.R, c.G, c.B)
	if c.A != 255 {
		s += fmt.Sprintf(` %s-opacity="%s"`, attr, strconv.FormatFloat(float64(c.A)/255, 'f', 3, 64))
	}
	return s
}

func strokeAttrs(st stroke) string {
	s := paint("stroke", st.col) + ` stroke-width="` + num(st.width) + `"`
	if len(st.dash) > 0 {
		d := make([]string, len(st.dash))
		for i, v := range st.dash {
			d[i] = num(v)
		}
		s += ` stroke-dasharray="` + strings.Join(d, " ") + `"`
	}
	return s
}

// rasterCanvas draws anti-aliased shapes and text on an RGBA image,
// scale pixels to the point.
type rasterCanvas struct {
	img   *image.RGBA
	scale float64
	font  *opentype.Font
	faces map[float64]font.Face
}

func newRaster(w, h, scale float64) *rasterCanvas {
	img := image.NewRGBA(image.Rect(0, 0, int(math.Round(w*scale)), int(math.Round(h*scale))))
	draw.Draw(img, img.Bounds(), image.White, image.Point{}, draw.Src)
	return &rasterCanvas{img: img, scale: scale, faces: map[float64]font.Face{}}
}

// fill fills the closed paths (in points) with col, by the non-zero rule:
// paths of opposite turning cut holes.
func (c *rasterCanvas) fill(paths [][]pt, col color.Color) {
	b := c.img.Bounds()
	x0, y0, x1, y1 := math.Inf(1), math.Inf(1), math.Inf(-1), math.Inf(-1)
	for _, p := range paths {
		for _, q := range p {
			x0, y0 = min(x0, q.x*c.scale), min(y0, q.y*c.scale)
			x1, y1 = max(x1, q.x*c.scale), max(y1, q.y*c.scale)
		}
	}
	r := image.Rect(int(math.Floor(x0)), int(math.Floor(y0)), int(math.Ceil(x1))+1, int(math.Ceil(y1))+1).Intersect(b)
	if r.Empty() {
		return
	}
	z := vector.NewRasterizer(r.Dx(), r.Dy())
	for _, p := range paths {
		for i, q := range p {
			x, y := float32(q.x*c.scale-float64(r.Min.X)), float32(q.y*c.scale-float64(r.Min.Y))
			if i == 0 {
				z.MoveTo(x, y)
			} else {
				z.LineTo(x, y)
			}
		}
		z.ClosePath()
	}
	z.Draw(c.img, r, image.NewUniform(col), image.Point{})
}

func (c *rasterCanvas) polygon(pts []pt, col color.Color) { c.fill([][]pt{pts}, col) }

// polyline strokes the line as one shape: a quadrilateral for each dash of
// each segment and a disc at each joint, all turning the same way so that
// where they overlap the colour is laid once.
func (c *rasterCanvas) polyline(pts []pt, st stroke) {
	hw := max(st.width, 0.5) / 2
	var paths [][]pt
	for _, seg := range dashes(pts, st.dash) {
		for i := 1; i < len(seg); i++ {
			a, b := seg[i-1], seg[i]
			d := math.Hypot(b.x-a.x, b.y-a.y)
			if d == 0 {
				continue
			}
			nx, ny := -(b.y-a.y)/d*hw, (b.x-a.x)/d*hw
			paths = append(paths, []pt{{a.x + nx, a.y + ny}, {a.x - nx, a.y - ny}, {b.x - nx, b.y - ny}, {b.x + nx, b.y + ny}})
		}
		for _, p := range seg {
			paths = append(paths, disc(p, hw, false))
		}
	}
	c.fill(paths, st.col)
}

func (c *rasterCanvas) circle(p pt, r float64, st stroke) {
	hw := max(st.width, 0.5) / 2
	c.fill([][]pt{disc(p, r+hw, false), disc(p, max(r-hw, 0), true)}, st.col)
}

// disc is a polygon close to a circle, turning one way or the other.
func disc(p pt, r float64, reverse bool) []pt {
	const n = 24
	out := make([]pt, n)
	for i := range out {
		a := 2 * math.Pi * float64(i) / n
		if reverse {
			a = -a
		}
		out[i] = pt{p.x + r*math.Cos(a), p.y + r*math.Sin(a)}
	}
	return out
}

// dashes cuts a polyline into its dashes (the whole line without a
// pattern).
func dashes(pts []pt, pattern []float64) [][]pt {
	if len(pattern) == 0 {
		return [][]pt{pts}
	}
	var out [][]pt
	cur := []pt{pts[0]}
	k, left, on := 0, pattern[0], true
	for i := 1; i < len(pts); i++ {
		a, b := pts[i-1], pts[i]
		d := math.Hypot(b.x-a.x, b.y-a.y)
		for pos := 0.0; d-pos > 1e-9; {
			step := min(left, d-pos)
			pos += step
			left -= step
			p := pt{a.x + (b.x-a.x)*pos/d, a.y + (b.y-a.y)*pos/d}
			if on {
				cur = append(cur, p)
			}
			if left <= 1e-9 {
				if on {
					out = append(out, cur)
					cur = nil
				} else {
					cur = []pt{p}
				}
				on = !on
				k = (k + 1) % len(pattern)
				left = pattern[k]
			}
		}
	}
	if on && len(cur) > 1 {
		out = append(out, cur)
	}
	return out
}

func (c *rasterCanvas) face(size float64) font.Face {
	if f, ok := c.faces[size]; ok {
		return f
	}
	if c.font == nil {
		f, err := opentype.Parse(goregular.TTF)
		if err != nil {
			panic(fmt.Sprintf("parse the embedded Go font: %v", err)) // the font is part of the binary
		}
		c.font = f
	}
	f, err := opentype.NewFace(c.font, &opentype.FaceOptions{Size: size, DPI: 72 * c.scale, Hinting: font.HintingNone})
	if err != nil {
		panic(fmt.Sprintf("a face of the embedded Go font: %v", err))
	}
	c.faces[size] = f
	return f
}

func (c *rasterCanvas) text(at pt, s string, size float64, a anchor, vertical bool, col color.Color) {
	face := c.face(size)
	width := font.MeasureString(face, s).Ceil()
	shift := [...]int{0, width / 2, width}[a]
	x, y := int(math.Round(at.x*c.scale)), int(math.Round(at.y*c.scale))
	if !vertical {
		d := font.Drawer{Dst: c.img, Src: image.NewUniform(col), Face: face, Dot: fixed.P(x-shift, y)}
		d.DrawString(s)
		return
	}
	// Draw it level on a scratch image, then turn it a quarter left about
	// the anchor: the scratch's (u, v) lands on (x + v - ascent, y - u +
	// shift), v measured down from the scratch's top.
	m := face.Metrics()
	ascent, height := m.Ascent.Ceil(), (m.Ascent + m.Descent).Ceil()
	tmp := image.NewRGBA(image.Rect(0, 0, width+1, height+1))
	d := font.Drawer{Dst: tmp, Src: image.NewUniform(col), Face: face, Dot: fixed.P(0, ascent)}
	d.DrawString(s)
	b := c.img.Bounds()
	for v := 0; v < tmp.Bounds().Dy(); v++ {
		for u := 0; u < tmp.Bounds().Dx(); u++ {
			src := tmp.RGBAAt(u, v)
			if src.A == 0 {
				continue
			}
			px, py := x+v-ascent, y-u+shift
			if !(image.Point{px, py}.In(b)) {
				continue
			}
			dst := c.img.RGBAAt(px, py)
			inv := 255 - uint32(src.A) // premultiplied: over is src + dst × (1 - src alpha)
			c.img.SetRGBA(px, py, color.RGBA{
				R: uint8(uint32(src.R) + uint32(dst.R)*inv/255),
				G: uint8(uint32(src.G) + uint32(dst.G)*inv/255),
				B: uint8(uint32(src.B) + uint32(dst.B)*inv/255),
				A: uint8(uint32(src.A) + uint32(dst.A)*inv/255),
			})
		}
	}
}

func (c *rasterCanvas) writeTo(w io.Writer) error {
	bw := bufio.NewWriter(w)
	if err := png.Encode(bw, c.img); err != nil {
		return err
	}
	return bw.Flush()
}
