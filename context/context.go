// Package context keeps the IdeContext that Gemini CLI receives: which files
// the user has open, in most-recently-focused order, and where the cursor and
// selection are in the active one. Editor plugins only report events; the
// ordering, timestamps, limits and truncation live here, once.
//
// (Importers usually alias it, e.g. idectx, since it shares its name with
// the standard library's context package.)
package context

import (
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf16"
	"unicode/utf8"
)

// Limits the CLI applies itself; sending no more than this saves it work and
// keeps notifications small.
const (
	MaxOpenFiles       = 10
	MaxSelectedUTF16   = 16384
	timestampIncrement = 1
)

// Cursor is a 1-based position; Character counts UTF-16 code units + 1.
type Cursor struct {
	Line      int `json:"line"`
	Character int `json:"character"`
}

// File is one open file as the CLI sees it.
type File struct {
	Path         string  `json:"path"`
	Timestamp    int64   `json:"timestamp"`
	IsActive     bool    `json:"isActive,omitempty"`
	Cursor       *Cursor `json:"cursor,omitempty"`
	SelectedText *string `json:"selectedText,omitempty"`
}

// WorkspaceState is the part of IdeContext that carries files and trust.
type WorkspaceState struct {
	OpenFiles []File `json:"openFiles"`
	IsTrusted *bool  `json:"isTrusted,omitempty"`
}

// IdeContext is the params object of an ide/contextUpdate notification.
type IdeContext struct {
	WorkspaceState *WorkspaceState `json:"workspaceState,omitempty"`
}

// Equal reports whether two snapshots would serialise identically.
func (c IdeContext) Equal(o IdeContext) bool {
	a, b := c.WorkspaceState, o.WorkspaceState
	if a == nil || b == nil {
		return a == b
	}
	if (a.IsTrusted == nil) != (b.IsTrusted == nil) || (a.IsTrusted != nil && *a.IsTrusted != *b.IsTrusted) {
		return false
	}
	if len(a.OpenFiles) != len(b.OpenFiles) {
		return false
	}
	for i := range a.OpenFiles {
		if !a.OpenFiles[i].equal(b.OpenFiles[i]) {
			return false
		}
	}
	return true
}

func (f File) equal(o File) bool {
	if f.Path != o.Path || f.Timestamp != o.Timestamp || f.IsActive != o.IsActive {
		return false
	}
	if (f.Cursor == nil) != (o.Cursor == nil) || (f.Cursor != nil && *f.Cursor != *o.Cursor) {
		return false
	}
	if (f.SelectedText == nil) != (o.SelectedText == nil) || (f.SelectedText != nil && *f.SelectedText != *o.SelectedText) {
		return false
	}
	return true
}

// entry is the engine's record of one open file.
type entry struct {
	path     string
	ts       int64
	cursor   *Cursor
	selected string
}

// Engine holds the editor state reported by a plugin and builds snapshots of
// it. It is safe for concurrent use. OnChange (if set) is called, without the
// engine's lock held, after every call that changed the state.
type Engine struct {
	mu      sync.Mutex
	files   []*entry // most recently focused first; len ≤ MaxOpenFiles
	active  bool     // whether files[0] is the focused editor
	trusted *bool    // nil: the editor has not said (no trust model)
	now     func() time.Time
	// paths counts changes to the set of open paths (not to cursors), so
	// that watchers can skip the work when only a cursor moved.
	paths atomic.Uint64

	onChange func()
}

// NewEngine returns an empty engine with no say on workspace trust: until
// SetTrusted, snapshots carry no isTrusted and the CLI's own folder trust
// decides. now may be nil (time.Now).
// onChange may be nil.
func NewEngine(now func() time.Time, onChange func()) *Engine {
	if now == nil {
		now = time.Now
	}
	if onChange == nil {
		onChange = func() {}
	}
	return &Engine{now: now, onChange: onChange}
}

func (e *Engine) changed(did bool) {
	if did {
		e.onChange()
	}
}

// Focus records that path became the active editor, with an optional cursor
// and selection. Relative paths are ignored (false).
func (e *Engine) Focus(path string, cursor *Cursor, selected string) bool {
	if !filepath.IsAbs(path) {
		return false
	}
	e.mu.Lock()
	e.focusLocked(filepath.Clean(path), cursor, selected)
	e.mu.Unlock()
	e.changed(true)
	return true
}

func (e *Engine) focusLocked(path string, cursor *Cursor, selected string) {
	ts := e.now().UnixMilli()
	if len(e.files) > 0 && e.files[0].path != path && ts <= e.files[0].ts {
		// Keep the most recent file strictly newest so the CLI's sort by
		// timestamp agrees with our order even within one millisecond.
		ts = e.files[0].ts + timestampIncrement
	}
	var ent *entry
	for i, f := range e.files {
		if f.path == path {
			ent = f
			e.files = append(e.files[:i], e.files[i+1:]...)
			break
		}
	}
	if ent == nil {
		ent = &entry{path: path}
		e.paths.Add(1)
	}
	if ts < ent.ts {
		ts = ent.ts
	}
	ent.ts = ts
	ent.cursor = validCursor(cursor)
	ent.selected = truncateUTF16(selected, MaxSelectedUTF16)
	e.files = append([]*entry{ent}, e.files...)
	if len(e.files) > MaxOpenFiles {
		e.files = e.files[:MaxOpenFiles]
	}
	e.active = true
}

// Select records a cursor or selection change in path. If path is not the
// active file it becomes active first, as if focused. Relative paths are
// ignored (false).
func (e *Engine) Select(path string, cursor *Cursor, selected string) bool {
	if !filepath.IsAbs(path) {
		return false
	}
	path = filepath.Clean(path)
	e.mu.Lock()
	if !e.active || len(e.files) == 0 || e.files[0].path != path {
		e.focusLocked(path, cursor, selected)
	} else {
		e.files[0].cursor = validCursor(cursor)
		e.files[0].selected = truncateUTF16(selected, MaxSelectedUTF16)
	}
	e.mu.Unlock()
	e.changed(true)
	return true
}

// Close forgets path. If it was the active file, no file is active until the
// next focus.
func (e *Engine) Close(path string) bool {
	path = filepath.Clean(path)
	e.mu.Lock()
	did := false
	for i, f := range e.files {
		if f.path == path {
			if i == 0 {
				e.active = false
			}
			e.files = append(e.files[:i], e.files[i+1:]...)
			did = true
			e.paths.Add(1)
			break
		}
	}
	e.mu.Unlock()
	e.changed(did)
	return did
}

// PathsGeneration changes whenever the set of open paths changes.
func (e *Engine) PathsGeneration() uint64 { return e.paths.Load() }

// Rename moves the record of oldPath to newPath, keeping its place, cursor
// and selection. A record already at newPath is replaced.
func (e *Engine) Rename(oldPath, newPath string) bool {
	if !filepath.IsAbs(newPath) {
		return false
	}
	oldPath, newPath = filepath.Clean(oldPath), filepath.Clean(newPath)
	if oldPath == newPath {
		return false
	}
	e.mu.Lock()
	did := false
	idx := -1
	for i, f := range e.files {
		if f.path == oldPath {
			idx = i
			break
		}
	}
	if idx >= 0 {
		for i, f := range e.files {
			if f.path == newPath {
				if i == 0 {
					e.active = false
				}
				e.files = append(e.files[:i], e.files[i+1:]...)
				if i < idx {
					idx--
				}
				break
			}
		}
		e.files[idx].path = newPath
		did = true
		e.paths.Add(1)
	}
	e.mu.Unlock()
	e.changed(did)
	return did
}

// SetTrusted records the workspace trust the editor reports. Only an
// editor with a real trust model reports one: the CLI lets it override its
// own folder-trust prompt.
func (e *Engine) SetTrusted(trusted bool) {
	e.mu.Lock()
	did := e.trusted == nil || *e.trusted != trusted
	e.trusted = &trusted
	e.mu.Unlock()
	e.changed(did)
}

// Paths returns the open files' paths, most recent first.
func (e *Engine) Paths() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	out := make([]string, len(e.files))
	for i, f := range e.files {
		out[i] = f.path
	}
	return out
}

// Snapshot returns the IdeContext to send now. Only the newest file, and only
// while it is the focused editor, carries isActive, cursor and selection.
func (e *Engine) Snapshot() IdeContext {
	e.mu.Lock()
	defer e.mu.Unlock()
	files := make([]File, len(e.files))
	for i, f := range e.files {
		files[i] = File{Path: f.path, Timestamp: f.ts}
		if i == 0 && e.active {
			files[i].IsActive = true
			if f.cursor != nil {
				c := *f.cursor
				files[i].Cursor = &c
			}
			if f.selected != "" {
				s := f.selected
				files[i].SelectedText = &s
			}
		}
	}
	var trusted *bool
	if e.trusted != nil {
		t := *e.trusted
		trusted = &t
	}
	return IdeContext{WorkspaceState: &WorkspaceState{OpenFiles: files, IsTrusted: trusted}}
}

func validCursor(c *Cursor) *Cursor {
	if c == nil || c.Line < 1 || c.Character < 1 {
		return nil
	}
	cc := *c
	return &cc
}

// truncateUTF16 cuts s to at most max UTF-16 code units without splitting a
// character. Invalid UTF-8 is replaced so the result is always valid JSON
// text of the intended length.
func truncateUTF16(s string, max int) string {
	if len(s) <= max && utf8.ValidString(s) {
		// Each UTF-16 code unit takes at least one byte of UTF-8, so a
		// string of at most max bytes has at most max code units.
		return s
	}
	units := 0
	for i, r := range s {
		n := 1
		if r >= 0x10000 {
			n = utf16.RuneLen(r)
		}
		if units+n > max {
			return toValid(s[:i])
		}
		units += n
	}
	return toValid(s)
}

func toValid(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	out := make([]rune, 0, len(s))
	for _, r := range s {
		out = append(out, r) // invalid bytes decode as utf8.RuneError
	}
	return string(out)
}
