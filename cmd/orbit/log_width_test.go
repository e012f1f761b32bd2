package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/olekukonko/tablewriter/pkg/twwidth"
)

// TestLogFitsTheTerminal: on a terminal the table fits its width, the
// input (the widest text) cut with an ellipsis; piped, every row keeps its
// full text, whatever the width.
func TestLogFitsTheTerminal(t *testing.T) {
	p := projectWith(t, "journal.jsonl")
	logAt := func(tty bool, width int) string {
		t.Helper()
		var out, errOut bytes.Buffer
		f := NewFactory(&IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut, OutTTY: tty, Width: width})
		f.Now = func() time.Time { return testNow }
		f.Getenv = func(string) string { return "" }
		f.Getwd = func() (string, error) { return p.root, nil }
		if code := run(context.Background(), f, []string{"--root", p.root, "log"}); code != exitOK {
			t.Fatalf("log: exit %d\n%s", code, errOut.String())
		}
		return out.String()
	}
	wide := logAt(true, 0)
	if !strings.Contains(wide, "Split the integration test suite into fast and slow tiers so CI stays under ten minutes"[:59]) {
		t.Fatalf("log on a terminal of unknown width:\n%s\nwant the input as the table draws it", wide)
	}
	// The other columns take 118 of them here: below that, the input stays
	// at its narrowest, 12.
	for _, width := range []int{160, 145, 131} {
		out := logAt(true, width)
		for _, l := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
			if w := twwidth.Width(l); w > width {
				t.Errorf("log at width %d: a line %d columns wide:\n%s", width, w, out)
				break
			}
		}
		if !strings.Contains(out, "Split the") || !strings.Contains(out, "…") {
			t.Errorf("log at width %d:\n%s\nwant the input cut with …", width, out)
		}
	}
	narrow := logAt(true, 80)
	if !strings.Contains(narrow, "│ Split the i… │") {
		t.Errorf("log at width 80:\n%s\nwant the input at its narrowest, 12 columns", narrow)
	}
	piped := logAt(false, 100)
	if !strings.Contains(piped, "\tSplit the integration test suite into fast and slow tiers so CI stays under ten minutes\n") {
		t.Errorf("log piped:\n%s\nwant each input in full", piped)
	}
}
