package ceo

import (
	"context"

	"github.com/orbit-loop/orbit/journal"
	"github.com/orbit-loop/orbit/precedent"
)

// Shown is one decision with everything known about it (`orbit show ID`,
// GET /api/v1/decisions/{id}): the decision in its one form, then where its
// line is, every outcome event in order (the last gives its outcome), and
// the past decisions most like it.
type Shown struct {
	journal.DecisionView
	// File is the decision's journal file, relative to the project root.
	File   string              `json:"file"`
	Events []journal.EventView `json:"events"`
	// Voids are the decision's void events in order (the last says
	// whether it is voided): [] for a decision never voided.
	Voids      []journal.VoidView `json:"voids"`
	Precedents []precedent.Hit    `json:"precedents"`
}

// Show gathers one decision; found is false when no decision has the id.
func Show(ctx context.Context, ix *journal.Index, id string, k int) (Shown, bool, error) {
	row, found, err := ix.Store.Decision(ctx, id)
	if err != nil || !found {
		return Shown{}, found, err
	}
	s := Shown{DecisionView: journal.ViewOf(&row), Events: []journal.EventView{}, Voids: []journal.VoidView{}}
	files, err := ix.Store.Files(ctx)
	if err != nil {
		return s, true, err
	}
	for _, f := range files {
		if f.ID == row.FileID {
			s.File = f.Path
		}
	}
	evs, err := ix.Store.DecisionEvents(ctx, id)
	if err != nil {
		return s, true, err
	}
	for i := range evs {
		s.Events = append(s.Events, journal.EventOf(&evs[i]))
	}
	vs, err := ix.Store.DecisionVoids(ctx, id)
	if err != nil {
		return s, true, err
	}
	for i := range vs {
		s.Voids = append(s.Voids, journal.VoidOf(&vs[i]))
	}
	res := Result{DecisionView: s.DecisionView}
	if err := Similar(ctx, ix, &res, k); err != nil {
		return s, true, err
	}
	s.Precedents = res.Precedents
	return s, true, nil
}
