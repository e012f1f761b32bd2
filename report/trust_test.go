package report_test

import (
	"bytes"
	"context"
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
	if err := report.TrustChart(&buf, "empty.svg", trust.Report{}); err != nil {
		t.Errorf("TrustChart of an empty report: %v; want a chart that says so", err)
	}
}
