package hook

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/orbit-loop/orbit/loop"
	"github.com/orbit-loop/orbit/project"
)

// tailBytes is how much of the transcript's end is searched for the
// completion sentinel.
const tailBytes = 64 << 10

// Bounds on what one Stop reads of a transcript, which may be anything the
// hook's input names: a line longer than maxTranscriptLine is skipped
// unread (no message is that long), and at most maxTranscriptRead new
// bytes are counted per Stop (the rest at the next).
const (
	maxTranscriptLine = 16 << 20
	maxTranscriptRead = 256 << 20
)

// transcriptTailHas reports whether an assistant message near the end of
// a Claude Code transcript (JSONL) holds text.
func transcriptTailHas(path, text string) bool {
	f, err := project.OpenRegular(path)
	if err != nil {
		return false
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return false
	}
	start := max(fi.Size()-tailBytes, 0)
	buf := make([]byte, fi.Size()-start)
	if _, err := f.ReadAt(buf, start); err != nil && !errors.Is(err, io.EOF) {
		return false
	}
	lines := strings.Split(string(buf), "\n")
	if start > 0 {
		lines = lines[1:] // cut mid-line
	}
	// Only the current turn: the assistant lines after the last user line
	// (the prompt that started the turn, which may quote the sentinel).
	for i := len(lines) - 1; i >= 0; i-- {
		var m struct {
			Type    string          `json:"type"`
			Message json.RawMessage `json:"message"`
		}
		if json.Unmarshal([]byte(lines[i]), &m) != nil {
			continue
		}
		if m.Type == "user" && isPrompt(m.Message) {
			return false
		}
		if m.Type == "assistant" && containsText(m.Message, text) {
			return true
		}
	}
	return false
}

// isPrompt reports whether a user line starts a turn (a prompt, text) rather
// than carrying tool results back within one.
func isPrompt(raw json.RawMessage) bool {
	var m struct {
		Content json.RawMessage `json:"content"`
	}
	if json.Unmarshal(raw, &m) != nil {
		return true
	}
	var items []struct {
		Type string `json:"type"`
	}
	if json.Unmarshal(m.Content, &items) != nil {
		return true // a plain string: a prompt
	}
	for _, it := range items {
		if it.Type != "tool_result" {
			return true
		}
	}
	return len(items) == 0
}

// containsText walks a JSON value's strings for text.
func containsText(raw json.RawMessage, text string) bool {
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return false
	}
	var walk func(any) bool
	walk = func(v any) bool {
		switch x := v.(type) {
		case string:
			return strings.Contains(x, text)
		case []any:
			for _, e := range x {
				if walk(e) {
					return true
				}
			}
		case map[string]any:
			for _, e := range x {
				if walk(e) {
					return true
				}
			}
		}
		return false
	}
	return walk(v)
}

// countTokens adds the tokens of the assistant messages appended to the
// transcript since the last count (input, cache creation and output tokens
// of each message's usage, once per message: Claude Code writes a line per
// content block, each repeating the message's usage), keeps the offset and
// the last message id in the state, and returns the loop's total.
func countTokens(st *loop.State, path string) (int64, error) {
	used, _, err := st.Int("tokens_used")
	if err != nil {
		return 0, err
	}
	off, _, _ := st.Int("transcript_offset")
	lastID, _, _ := st.String("last_message_id")
	if prev, _, _ := st.String("transcript_path"); prev != path {
		off, lastID = 0, "" // a new session's transcript: count it from its start
	}
	f, err := project.OpenRegular(path)
	if err != nil {
		return used, fmt.Errorf("transcript: %w", err)
	}
	defer f.Close()
	if fi, err := f.Stat(); err == nil && fi.Size() < off {
		off = 0
	}
	if _, err := f.Seek(off, io.SeekStart); err != nil {
		return used, fmt.Errorf("transcript %s: %w", path, err)
	}
	lines := boundedLines{r: bufio.NewReaderSize(io.LimitReader(f, maxTranscriptRead), 256<<10), max: maxTranscriptLine}
	for {
		line, n, err := lines.next()
		off += n
		if len(line) > 0 {
			var m struct {
				Type    string `json:"type"`
				Message struct {
					ID    string `json:"id"`
					Usage struct {
						Input         int64 `json:"input_tokens"`
						CacheCreation int64 `json:"cache_creation_input_tokens"`
						Output        int64 `json:"output_tokens"`
					} `json:"usage"`
				} `json:"message"`
			}
			if json.Unmarshal(line, &m) == nil && m.Type == "assistant" && (m.Message.ID == "" || m.Message.ID != lastID) {
				u := m.Message.Usage
				used += u.Input + u.CacheCreation + u.Output
				lastID = m.Message.ID
			}
		}
		if err != nil {
			break
		}
	}
	for _, kv := range []struct {
		k string
		v any
	}{{"tokens_used", used}, {"transcript_path", path}, {"transcript_offset", off}, {"last_message_id", lastID}} {
		if err := st.Set(kv.k, kv.v); err != nil {
			return used, err
		}
	}
	return used, nil
}

// boundedLines reads whole lines of at most max bytes; a longer line is
// read past and skipped, never held.
type boundedLines struct {
	r   *bufio.Reader
	max int
}

// next returns the next whole line that fits (nil for one skipped as too
// long) and how many bytes were consumed. A last line without its newline
// is not consumed: it is read again, whole, next time. err is io.EOF at
// the end.
func (b *boundedLines) next() (line []byte, consumed int64, err error) {
	var buf bytes.Buffer
	long := false
	for {
		frag, err := b.r.ReadSlice('\n')
		if !long {
			if buf.Len()+len(frag) > b.max {
				long, buf = true, bytes.Buffer{}
			} else {
				buf.Write(frag)
			}
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			consumed += int64(len(frag))
			continue
		}
		if err != nil {
			// Unterminated: give back what a whole line would have been,
			// unless it was already too long to ever be read.
			if long {
				return nil, consumed + int64(len(frag)), err
			}
			return nil, 0, err
		}
		consumed += int64(len(frag))
		if long {
			return nil, consumed, nil
		}
		return buf.Bytes(), consumed, nil
	}
}
