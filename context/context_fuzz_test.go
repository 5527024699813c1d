package context

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf16"
	"unicode/utf8"
)

// fuzzPaths are the paths events name: more than the context keeps,
// spellings that clean to the same file, and paths that must be ignored.
var fuzzPaths = func() []string {
	var p []string
	for i := range 13 {
		p = append(p, fmt.Sprintf("/w/f%d.go", i))
	}
	return append(p, "/w/./f1.go", "/w/d/../f2.go", "/w/f3.go/", "relative/x.go", "", "/")
}()

// ops reads fuzz bytes as a sequence of small numbers; past the end it
// reads zeros.
type ops struct {
	data []byte
	long int // selections past the limit still allowed (they are costly)
}

func (o *ops) next() byte {
	if len(o.data) == 0 {
		return 0
	}
	b := o.data[0]
	o.data = o.data[1:]
	return b
}

func (o *ops) take(n int) string {
	n = min(n, len(o.data))
	s := string(o.data[:n])
	o.data = o.data[n:]
	return s
}

func (o *ops) path() string { return fuzzPaths[int(o.next())%len(fuzzPaths)] }

func (o *ops) cursor() *Cursor {
	if b := o.next(); b%4 == 0 {
		return nil
	}
	return &Cursor{Line: int(int8(o.next())), Character: int(int8(o.next()))}
}

// selection is empty, a few raw bytes (maybe not UTF-8), or a pattern
// repeated past the 16384-unit limit.
func (o *ops) selection() string {
	switch b := o.next(); b % 4 {
	case 0:
		return ""
	case 1, 2:
		return o.take(int(b) % 16)
	default:
		pattern := o.take(1 + int(o.next())%6)
		reps := 1 + int(o.next())
		if o.long > 0 {
			o.long--
			reps *= 70
		}
		return strings.Repeat(pattern, reps)
	}
}

// wantSelection is the selection the CLI must see for s: invalid bytes
// replaced by U+FFFD, then cut after the last whole character that fits in
// MaxSelectedUTF16 code units.
func wantSelection(s string) string {
	var b strings.Builder
	units := 0
	for _, r := range s {
		n := utf16.RuneLen(r)
		if n < 0 {
			n = 1
		}
		if units+n > MaxSelectedUTF16 {
			break
		}
		units += n
		b.WriteRune(r)
	}
	return b.String()
}

// model is what the engine must do, written as plainly as possible.
type model struct {
	paths  []string // most recent first
	active bool
	cursor *Cursor
	sel    string
}

func (m *model) focus(p string, c *Cursor, sel string) {
	i := slices.Index(m.paths, p)
	if i >= 0 {
		m.paths = slices.Delete(m.paths, i, i+1)
	}
	m.paths = slices.Insert(m.paths, 0, p)
	if len(m.paths) > MaxOpenFiles {
		m.paths = m.paths[:MaxOpenFiles]
	}
	m.active, m.cursor, m.sel = true, c, wantSelection(sel)
}

func (m *model) close(p string) {
	i := slices.Index(m.paths, p)
	if i < 0 {
		return
	}
	if i == 0 {
		m.active = false
	}
	m.paths = slices.Delete(m.paths, i, i+1)
}

func (m *model) rename(from, to string) {
	i := slices.Index(m.paths, from)
	if i < 0 || from == to {
		return
	}
	if j := slices.Index(m.paths, to); j >= 0 {
		if j == 0 {
			m.active = false
		}
		m.paths = slices.Delete(m.paths, j, j+1)
		if j < i {
			i--
		}
	}
	m.paths[i] = to
}

func cursorOK(c *Cursor) *Cursor {
	if c == nil || c.Line < 1 || c.Character < 1 {
		return nil
	}
	return c
}

// FuzzEngine feeds the engine random event sequences, with a clock that
// may stand still or go back, and checks after every step what the CLI
// relies on: at most 10 files, newest first with strictly decreasing
// timestamps, one active file at most and only the newest, a selection
// within 16384 UTF-16 units that is valid text cut between characters,
// timestamps of a file that never go back, and the order a plain model of
// the events predicts.
func FuzzEngine(f *testing.F) {
	f.Fuzz(func(t *testing.T, data []byte) {
		now := time.UnixMilli(1_700_000_000_000)
		e := NewEngine(func() time.Time { return now }, nil)
		var m model
		var trusted *bool
		seen := map[string]int64{} // last timestamp of each open file
		o := &ops{data: data, long: 3}
		for step := 0; len(o.data) > 0 && step < 500; step++ {
			what := ""
			op := o.next() % 6
			switch op {
			case 0, 1:
				p, c, sel := o.path(), o.cursor(), o.selection()
				what = fmt.Sprintf("focus(%q) op %d", p, op)
				var did bool
				if op == 0 {
					did = e.Focus(p, c, sel)
				} else {
					did = e.Select(p, c, sel)
				}
				if did != filepath.IsAbs(p) {
					t.Fatalf("step %d %s: returned %v", step, what, did)
				}
				if did {
					cp := filepath.Clean(p)
					if op == 1 && m.active && m.paths[0] == cp {
						m.cursor, m.sel = c, wantSelection(sel)
					} else {
						m.focus(cp, c, sel)
					}
					m.cursor = cursorOK(m.cursor)
				}
			case 2:
				p := o.path()
				what = fmt.Sprintf("close(%q)", p)
				e.Close(p)
				m.close(filepath.Clean(p))
				delete(seen, filepath.Clean(p))
			case 3:
				from, to := o.path(), o.path()
				what = fmt.Sprintf("rename(%q, %q)", from, to)
				if e.Rename(from, to) {
					cf, ct := filepath.Clean(from), filepath.Clean(to)
					m.rename(cf, ct)
					if ts, ok := seen[cf]; ok {
						delete(seen, cf)
						seen[ct] = ts
					}
				}
			case 4:
				tr := o.next()%2 == 0
				trusted = &tr
				what = fmt.Sprintf("trusted(%v)", tr)
				e.SetTrusted(tr)
			case 5:
				d := time.Duration(int8(o.next())) * time.Millisecond
				what = fmt.Sprintf("clock %+v", d)
				now = now.Add(d)
			}
			// Only focus and select change the selection: check its text then.
			checkSnapshot(t, step, what, e.Snapshot(), &m, trusted, seen, op <= 1)
		}
	})
}

func checkSnapshot(t *testing.T, step int, what string, snap IdeContext, m *model, trusted *bool, seen map[string]int64, text bool) {
	t.Helper()
	fail := func(format string, args ...any) {
		t.Helper()
		data, _ := json.Marshal(snap)
		t.Fatalf("after step %d, %s: %s\nsnapshot %s\nmodel %+v", step, what, fmt.Sprintf(format, args...), data, m.paths)
	}
	ws := snap.WorkspaceState
	if ws == nil || (ws.IsTrusted == nil) != (trusted == nil) || (trusted != nil && *ws.IsTrusted != *trusted) {
		fail("workspace state or trust wrong")
	}
	files := ws.OpenFiles
	if len(files) > MaxOpenFiles {
		fail("%d open files", len(files))
	}
	var paths []string
	for i, f := range files {
		paths = append(paths, f.Path)
		if i > 0 && f.Timestamp >= files[i-1].Timestamp {
			fail("timestamps not strictly newest first at %d", i)
		}
		if i > 0 && (f.IsActive || f.Cursor != nil || f.SelectedText != nil) {
			fail("file %d is not the newest but is active or has a cursor or selection", i)
		}
		if last, ok := seen[f.Path]; ok && f.Timestamp < last {
			fail("timestamp of %s went back from %d to %d", f.Path, last, f.Timestamp)
		}
		seen[f.Path] = f.Timestamp
	}
	if !slices.Equal(paths, m.paths) {
		fail("order %v, the model says %v", paths, m.paths)
	}
	for p := range seen {
		if !slices.Contains(paths, p) {
			delete(seen, p) // dropped from the list: a later open starts afresh
		}
	}
	active := len(files) > 0 && files[0].IsActive
	if active != (m.active && len(files) > 0) {
		fail("active %v, the model says %v", active, m.active)
	}
	if !active {
		return
	}
	f := files[0]
	if (f.Cursor == nil) != (m.cursor == nil) || (f.Cursor != nil && *f.Cursor != *m.cursor) {
		fail("cursor %v, want %v", f.Cursor, m.cursor)
	}
	if !text {
		return
	}
	sel := ""
	if f.SelectedText != nil {
		sel = *f.SelectedText
		if sel == "" {
			fail("an empty selectedText is sent instead of none")
		}
	}
	if !utf8.ValidString(sel) {
		fail("selection is not valid UTF-8")
	}
	if n := len(utf16.Encode([]rune(sel))); n > MaxSelectedUTF16 {
		fail("selection of %d UTF-16 units", n)
	}
	if sel != m.sel {
		fail("selection of %d bytes, want %d bytes (prefix kept: %v)", len(sel), len(m.sel), strings.HasPrefix(m.sel, sel))
	}
	data, err := json.Marshal(snap)
	if err != nil || !utf8.Valid(data) || !bytes.HasPrefix(data, []byte(`{"workspaceState":`)) {
		fail("does not encode as UTF-8 JSON: %v", err)
	}
}
