package main

import (
	"time"

	"github.com/schollz/progressbar/v3"
)

// progressMinBytes is the smallest file worth a progress bar.
const progressMinBytes = 4 << 20

// progress returns a callback that draws a progress bar on stderr for long
// reads, or nil when stderr is not a terminal (no bar in pipes and logs).
func (f *Factory) progress(verb string) func(file string, done, total int64) {
	if !f.IO.ErrTTY {
		return nil
	}
	var bar *progressbar.ProgressBar
	var current string
	return func(file string, done, total int64) {
		if total < progressMinBytes {
			return
		}
		if bar == nil || file != current {
			if bar != nil {
				bar.Finish()
			}
			current = file
			bar = progressbar.NewOptions64(total,
				progressbar.OptionSetWriter(f.IO.ErrOut),
				progressbar.OptionSetDescription(verb+" "+file),
				progressbar.OptionShowBytes(true),
				progressbar.OptionThrottle(100*time.Millisecond),
				progressbar.OptionClearOnFinish(),
				progressbar.OptionSetWidth(30),
			)
		}
		bar.Set64(done)
		if done >= total {
			bar.Finish()
			bar = nil
		}
	}
}
