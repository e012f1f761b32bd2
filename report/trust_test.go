package report_test

import (
	"bytes"
	"context"
	"encoding/xml"
	"fmt"
	"image/png"
	"io"
	"slices"
	"strings"
	"testing"

	"github.com/orbit-loop/orbit/report"
	"github.com/orbit-loop/orbit/trust"
)

func trustReport(t *testing.T) trust.Report {
	t.Helper()
	ix := newProject(t, "trust")
	r, err := trust.Load(context.Background(), ix.Store, trust.Options{Bins: 5})
	if err != nil {
		t.Fatal(err)
	}
	if r.WithOutcome < 10 {
		t.Fatalf("fixture has %d scored decisions; want at least 10", r.WithOutcome)
	}
	return r
}

func TestTrustTextGolden(t *testing.T) {
	r := trustReport(t)
	for _, tt := range []struct {
		name     string
		terminal bool
	}{{"trust.terminal.golden", true}, {"trust.piped.golden", false}} {
		t.Run(tt.name, func(t *testing.T) {
			var buf bytes.Buffer
			if err := report.TrustText(&buf, r, tt.terminal); err != nil {
				t.Fatal(err)
			}
			goldenFile(t, tt.name, buf.Bytes())
		})
	}
}

func TestTrustMarkdownGolden(t *testing.T) {
	var buf bytes.Buffer
	if err := report.TrustMarkdown(&buf, trustReport(t)); err != nil {
		t.Fatal(err)
	}
	goldenFile(t, "trust.md.golden", buf.Bytes())
}

func TestTrustAlertShown(t *testing.T) {
	r := trustReport(t)
	r.Alert, r.AlertText = true, "⚠️ TRUST CALIBRATION ALERT: test"
	var text, md bytes.Buffer
	report.TrustText(&text, r, false)
	report.TrustMarkdown(&md, r)
	for name, out := range map[string]string{"text": text.String(), "markdown": md.String()} {
		if !strings.Contains(out, "TRUST CALIBRATION ALERT") {
			t.Errorf("%s report lacks the alert:\n%s", name, out)
		}
	}
}

func TestTrustChart(t *testing.T) {
	r := trustReport(t)
	for _, tt := range []struct{ file, magic string }{{"trust.svg", "<?xml"}, {"trust.png", "\x89PNG"}} {
		var buf bytes.Buffer
		if err := report.TrustChart(&buf, tt.file, r); err != nil {
			t.Fatalf("TrustChart(%s): %v", tt.file, err)
		}
		if !bytes.HasPrefix(buf.Bytes(), []byte(tt.magic)) || buf.Len() < 2000 {
			t.Errorf("TrustChart(%s) wrote %d bytes starting %q; want a %s image", tt.file, buf.Len(), buf.Bytes()[:min(8, buf.Len())], tt.magic)
		}
	}
	var buf bytes.Buffer
	if err := report.TrustChart(&buf, "trust.gif", r); err == nil {
		t.Errorf("TrustChart(trust.gif) succeeded; want an error naming the formats")
	}
	for _, file := range []string{"empty.svg", "empty.png"} {
		if err := report.TrustChart(&buf, file, trust.Report{}); err != nil {
			t.Errorf("TrustChart(%s) of an empty report: %v; want a chart that says so", file, err)
		}
	}
}

// TestTrustChartSVG: the SVG is well-formed XML holding both titles, every
// legend entry, one marker per iteration and per calibration bin (two in
// the legend), and is the golden file (testdata/trust-chart.svg.golden).
func TestTrustChartSVG(t *testing.T) {
	r := trustReport(t)
	var buf bytes.Buffer
	if err := report.TrustChart(&buf, "trust.svg", r); err != nil {
		t.Fatal(err)
	}
	var texts []string
	circles := 0
	d := xml.NewDecoder(bytes.NewReader(buf.Bytes()))
	for {
		tok, err := d.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("the SVG is not well-formed XML: %v", err)
		}
		if se, ok := tok.(xml.StartElement); ok {
			switch se.Name.Local {
			case "circle":
				circles++
			case "text":
				var s string
				if err := d.DecodeElement(&s, &se); err != nil {
					t.Fatal(err)
				}
				texts = append(texts, s)
			}
		}
	}
	bins := 0
	for _, b := range r.Calibration.Bins {
		if b.N > 0 {
			bins++
		}
	}
	for _, want := range []string{"Accuracy per iteration", "Reliability of stated confidence", "90%: elevated above", "80%: demoted below",
		"per iteration", "last 5 iterations", "perfect calibration", fmt.Sprintf("bins (ECE %.3f, Brier %.3f, n=%d)", r.Calibration.ECE, r.Calibration.Brier, r.Calibration.N)} {
		if !slices.Contains(texts, want) {
			t.Errorf("the SVG lacks the text %q (has %q)", want, texts)
		}
	}
	if want := len(r.Iterations) + bins + 2; circles != want {
		t.Errorf("%d circles; want %d (%d iterations, %d bins, 2 legend glyphs)", circles, want, len(r.Iterations), bins)
	}
	goldenFile(t, "trust-chart.svg.golden", buf.Bytes())
}

// TestTrustChartPNG: the PNG is 1920x800 (960x400 points at 144 DPI), the
// bands, the trend line and the text are drawn in their colours.
func TestTrustChartPNG(t *testing.T) {
	var buf bytes.Buffer
	if err := report.TrustChart(&buf, "trust.png", trustReport(t)); err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if b := img.Bounds(); b.Dx() != 1920 || b.Dy() != 800 {
		t.Fatalf("PNG is %v; want 1920x800", b)
	}
	count := map[string]int{}
	for y := range 800 {
		for x := range 1920 {
			r, g, b, _ := img.At(x, y).RGBA()
			r, g, b = r>>8, g>>8, b>>8
			switch {
			case r > 200 && g > 90 && g < 150 && b < 60:
				count["orange trend line"]++
			case r < 60 && g > 100 && g < 140 && b > 160:
				count["blue points and bins"]++
			case r < 235 && g > 235 && b < 235 && g-r > 10:
				count["green band"]++
			case r > 245 && g < 235 && b < 235 && r-g > 10:
				count["red band"]++
			case r < 40 && g < 40 && b < 40:
				count["black text and axes"]++
			}
		}
	}
	for _, what := range []string{"orange trend line", "blue points and bins", "green band", "red band", "black text and axes"} {
		if count[what] < 500 {
			t.Errorf("%s: %d pixels; want it drawn", what, count[what])
		}
	}
}
