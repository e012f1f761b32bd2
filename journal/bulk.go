package journal

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"hash/maphash"
	"slices"

	"github.com/orbit-loop/orbit/db"
)

// bulkText is an import's bulk load of the full-text index (db/bulk.go):
// the decisions the import's syncs commit are tokenized into a scratch
// database on another goroutine (another core) instead of within each
// sync transaction, and the full-text index built there is copied into the
// index at the end of the import.
type bulkText struct {
	// owner is the token of the mark this import wrote.
	owner   string
	builder *db.TextBuilder
	// rows are the text of the decisions of the transaction in progress:
	// sent to the builder once it commits, dropped if it rolls back.
	rows []db.TextRow
	ch   chan []db.TextRow
	done chan error
	// merge, set before ch closes, has the builder merge its full-text
	// index into one segment after the last rows.
	merge bool
	// lost is set when a sync found the mark gone (another sync finished the
	// bulk load by rebuilding the full-text index): from then on the syncs
	// index their text themselves and nothing is copied at the end.
	lost bool
	// ids holds the id of every decision the load's syncs indexed. While
	// the mark is still this import's, no other sync indexed a decision
	// (one that adds any finishes the bulk load first, deleting the mark),
	// so an id ids does not hold is not in the index, and the import need
	// not look it up (a twentieth of its main goroutine's time).
	ids idFilter
}

// idFilter is a Bloom filter of ids: it holds every id added, and a few
// more (about 1 in 400 at 1M ids, 1 in 4 at 5M).
type idFilter struct {
	seed maphash.Seed
	bits []uint64
}

// idFilterBits is the size of an idFilter: 2 MB.
const idFilterBits = 1 << 24

func (f *idFilter) positions(id string, fn func(word int, bit uint64) bool) bool {
	h := maphash.String(f.seed, id)
	h1, h2 := uint32(h), uint32(h>>32)|1
	for i := range uint32(4) {
		p := (h1 + i*h2) % idFilterBits
		if !fn(int(p/64), 1<<(p%64)) {
			return false
		}
	}
	return true
}

func (f *idFilter) add(id string) {
	if f.bits == nil {
		f.seed, f.bits = maphash.MakeSeed(), make([]uint64, idFilterBits/64)
	}
	f.positions(id, func(w int, b uint64) bool { f.bits[w] |= b; return true })
}

// mayHold reports false when id was never added.
func (f *idFilter) mayHold(id string) bool {
	return f.bits != nil && f.positions(id, func(w int, b uint64) bool { return f.bits[w]&b != 0 })
}

// indexed returns the ids of ids that may be in the index: those the
// filter holds while the load's mark is this import's, all of them
// otherwise.
func (b *bulkText) indexed(ctx context.Context, store *db.Store, ids []string) ([]string, error) {
	owner, err := store.BulkOwner(ctx)
	if err != nil || owner != b.owner || b.lost {
		return ids, err
	}
	return slices.DeleteFunc(ids, func(id string) bool { return !b.ids.mayHold(id) }), nil
}

// startBulkText begins a bulk load of the full-text index when the index
// holds no decision yet. It returns nil when it does not: the import then
// indexes the text in each sync, as sync does.
func (ix *Index) startBulkText(ctx context.Context) (*bulkText, error) {
	var token [16]byte
	if _, err := rand.Read(token[:]); err != nil {
		return nil, err
	}
	b := &bulkText{owner: hex.EncodeToString(token[:])}
	began := false
	err := ix.Store.InTx(ctx, func(tx *db.Tx) (err error) {
		began, err = tx.BeginBulk(ctx, b.owner)
		return err
	})
	if err != nil || !began {
		return nil, err
	}
	if b.builder, err = ix.Store.NewTextBuilder(ctx); err != nil {
		// Without a scratch database, finish the (empty) bulk load at
		// once and import as sync does.
		return nil, ix.finishBulk(ctx)
	}
	// One batch in flight and one being built: memory stays flat, and the
	// syncs wait when the builder falls behind.
	b.ch = make(chan []db.TextRow, 1)
	b.done = make(chan error, 1)
	go func() {
		var err error
		for rows := range b.ch {
			if err == nil {
				err = b.builder.Add(ctx, rows)
			}
		}
		if err == nil && b.merge && !b.lost {
			err = b.builder.Merge(ctx)
		}
		b.done <- err
	}()
	return b, nil
}

// add keeps a decision's text until its transaction commits, and its id.
func (b *bulkText) add(row *db.DecisionRow) {
	b.ids.add(row.ID)
	b.rows = append(b.rows, db.TextRow{Seq: row.Seq, Input: row.Input, Reason: row.Reason, NextAction: row.NextAction, Context: row.Context})
}

// ended is called when a sync transaction ends: the text of its decisions
// goes to the builder if it committed.
func (b *bulkText) ended(committed bool) {
	if committed && !b.lost && len(b.rows) > 0 {
		b.ch <- b.rows
	}
	b.rows = nil
}

// stop ends the builder's goroutine and returns its error.
func (b *bulkText) stop() error {
	close(b.ch)
	return <-b.done
}

// endBulkText ends the bulk load: the indexes it dropped are created again
// on the index's connection while the builder indexes the last rows (and
// merges its full-text index into one segment, when merge is set), then
// the builder's full-text index is copied in. It reports whether it was.
// If the copy fails, the full-text index is rebuilt from the decisions
// table instead; if another sync finished the bulk load, the syncs since
// have indexed the text.
func (ix *Index) endBulkText(ctx context.Context, b *bulkText, merge bool) (copied bool, err error) {
	b.merge = merge
	close(b.ch)
	err = ix.Store.InTx(ctx, func(tx *db.Tx) error { return tx.FinishBulkIndexes(ctx) })
	if berr := <-b.done; err == nil {
		err = berr
	}
	if err == nil && !b.lost {
		err = b.builder.CopyInto(ctx, ix.Store.Path, b.owner)
		copied = err == nil
	}
	if cerr := b.builder.Close(); err == nil {
		err = cerr
	}
	if b.lost || errors.Is(err, db.ErrBulkTextTaken) {
		return false, nil
	}
	if err != nil {
		return false, ix.finishBulk(ctx)
	}
	return copied, nil
}

// abortBulkText stops a bulk load that an import left half-way: the mark
// stays, for the next sync to finish.
func (b *bulkText) abort() {
	_ = b.stop()
	_ = b.builder.Close()
}

// finishBulkText finishes a pending bulk load, whichever process started
// it, by rebuilding the full-text index from the decisions table.
func (ix *Index) finishBulk(ctx context.Context) error {
	return ix.Store.InTx(ctx, func(tx *db.Tx) error {
		return tx.FinishBulk(ctx)
	})
}
