package journal

import (
	"context"
	"errors"
	"io"
)

// parsed is a chunk with its record decoded.
type parsed struct {
	c Chunk
	d Decoded
}

// decode reads a record chunk of file as its kind's record.
func decode(c Chunk, file string, kind Kind) parsed {
	p := parsed{c: c}
	if c.Kind != Record {
		return p
	}
	p.d = kind.Decode(c.Text)
	// The reader leaves a line that ends in '}' to the decoder: a write cut
	// short just after a nested object is a torn fragment, not a bad record.
	if p.d.Reject != nil && cutShort(c.Text) {
		p.c.Kind, p.c.Err = Bad, tornFragment(file, c.Line)
		p.d = Decoded{}
	}
	return p
}

// produceBatch is how many decoded chunks travel together between the
// goroutines.
const produceBatch = 256

// produce reads up to limit chunks from r and decodes them on its own
// goroutine, while fn consumes them in order on the caller's: on two cores,
// JSON decoding overlaps the SQLite inserts. A Pending chunk is passed last.
// It returns fn's first error, or the reader's.
func produce(ctx context.Context, r *Reader, kind Kind, limit int, fn func(*parsed) error) error {
	ctx, cancel := context.WithCancel(ctx)
	// Room for the decoder to run a whole import flush ahead of the inserts.
	ch := make(chan []parsed, ImportFlushRecords/produceBatch+1)
	errc := make(chan error, 1)
	go func() {
		defer close(ch)
		errc <- func() error {
			batch := make([]parsed, 0, produceBatch)
			send := func() bool {
				select {
				case ch <- batch:
					batch = make([]parsed, 0, produceBatch)
					return true
				case <-ctx.Done():
					return false
				}
			}
			for n := 0; n < limit; n++ {
				c, err := r.Next()
				if errors.Is(err, io.EOF) {
					break
				}
				if err != nil {
					send()
					return err
				}
				batch = append(batch, decode(c, r.file, kind))
				if c.Kind == Pending {
					break
				}
				if len(batch) == produceBatch && !send() {
					return ctx.Err()
				}
			}
			if len(batch) > 0 {
				send()
			}
			return nil
		}()
	}()
	var ferr error
	for batch := range ch {
		if ferr != nil {
			continue
		}
		for i := range batch {
			if ferr = fn(&batch[i]); ferr != nil {
				cancel()
				break
			}
		}
	}
	cancel()
	perr := <-errc
	if ferr != nil {
		return ferr
	}
	if errors.Is(perr, context.Canceled) {
		return nil
	}
	return perr
}
