package knowledge

import (
	"context"
	"os"
	"strings"
)

// FileSummary is one knowledge file of a directory `orbit knowledge
// import` registered: whether it is there, its shape, and how its entries
// stand (errors.json: with a usable regex, full-text only, unusable).
type FileSummary struct {
	Path      string `json:"path"`
	Kind      string `json:"kind"`
	Found     bool   `json:"found"`
	Shape     string `json:"shape"`
	Entries   int    `json:"entries"`
	Regex     int    `json:"regex"`
	NoPattern int    `json:"no_pattern"`
	Unusable  int    `json:"unusable"`
	Error     string `json:"error,omitempty"`
}

// Summarize sums up one indexed knowledge file (path relative to the
// project root, as registered).
func (k *Index) Summarize(ctx context.Context, path string) (FileSummary, error) {
	s := FileSummary{Path: path, Kind: "patterns"}
	if strings.HasSuffix(path, ErrorsFile) {
		s.Kind = "errors"
	}
	if _, err := os.Stat(k.Abs(path)); err != nil {
		return s, nil
	}
	s.Found = true
	st, err := k.Stats(ctx)
	if err != nil {
		return s, err
	}
	for _, fs := range st.Files {
		if fs.Path == path {
			s.Shape, s.Error = fs.Shape, fs.Error
		}
	}
	rs, err := k.List(ctx, Filter{File: path})
	if err != nil {
		return s, err
	}
	for _, r := range rs {
		s.Entries++
		if r.Kind != KindError {
			continue
		}
		switch r.PatternState {
		case StateOK:
			s.Regex++
		case StateNone:
			s.NoPattern++
		default:
			s.Unusable++
		}
	}
	return s, nil
}

// Totals are a decision import's counts over every track.
func (r DecisionReport) Totals() TrackReport {
	var t TrackReport
	for _, tr := range r.Tracks {
		t.Decisions += tr.Decisions
		t.Appended += tr.Appended
		t.Skipped += tr.Skipped
		t.Conflicts += tr.Conflicts
		t.Rejected += tr.Rejected
	}
	return t
}
