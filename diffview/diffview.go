// Package diffview tracks the diffs Gemini CLI asks the editor to show: at
// most one per file path, each moving once from open to accepted, rejected
// or closed, so a decision is reported exactly once and a late or unknown
// one is ignored.
package diffview

import (
	"fmt"
	"path/filepath"
	"sync"
)

// State is where a diff is in its life.
type State int

// The states of a diff. Open is the only one that moves; the others are
// final.
const (
	Open State = iota
	Accepted
	Rejected
	Closed
	Replaced
)

func (s State) String() string {
	switch s {
	case Open:
		return "open"
	case Accepted:
		return "accepted"
	case Rejected:
		return "rejected"
	case Closed:
		return "closed"
	case Replaced:
		return "replaced"
	}
	return fmt.Sprintf("State(%d)", int(s))
}

// Diff is one proposed change to one file.
type Diff struct {
	// ID is unique within a Registry; it tells a diff apart from a later one
	// for the same path.
	ID uint64
	// Path is the absolute path of the file, as the CLI wrote it.
	Path string
	// Original is the file's content when the diff opened; nil if the file
	// did not exist.
	Original *string
	// Proposed is the content the CLI proposed.
	Proposed string
	// State is the diff's state when this copy was taken.
	State State
}

// Registry holds the open diffs. It is safe for concurrent use.
type Registry struct {
	mu     sync.Mutex
	nextID uint64
	open   map[string]*Diff
}

// NewRegistry returns an empty registry.
func NewRegistry() *Registry {
	return &Registry{open: map[string]*Diff{}}
}

// Open registers a new diff for path, replacing (and returning) any diff
// already open for it.
//
// Diffs are keyed by the cleaned path, but Path keeps the text the caller
// gave: the CLI matches decisions to its pending diffs by that exact string.
func (r *Registry) Open(path string, original *string, proposed string) (d Diff, replaced *Diff) {
	key := filepath.Clean(path)
	r.mu.Lock()
	defer r.mu.Unlock()
	if old, ok := r.open[key]; ok {
		old.State = Replaced
		c := *old
		replaced = &c
	}
	r.nextID++
	nd := &Diff{ID: r.nextID, Path: path, Original: original, Proposed: proposed, State: Open}
	r.open[key] = nd
	return *nd, replaced
}

// Resolve moves the diff open for path to a final state (Accepted, Rejected
// or Closed) and returns it. It reports false when no diff is open for path,
// or when to is not a final state: the decision is late or unknown and must
// be ignored.
func (r *Registry) Resolve(path string, to State) (Diff, bool) {
	return r.resolve(path, 0, to)
}

// ResolveID is Resolve for one particular diff: it does nothing if the diff
// open for path is not id (it was replaced meanwhile).
func (r *Registry) ResolveID(path string, id uint64, to State) (Diff, bool) {
	return r.resolve(path, id, to)
}

func (r *Registry) resolve(path string, id uint64, to State) (Diff, bool) {
	if to != Accepted && to != Rejected && to != Closed {
		return Diff{}, false
	}
	path = filepath.Clean(path)
	r.mu.Lock()
	defer r.mu.Unlock()
	d, ok := r.open[path]
	if !ok || (id != 0 && d.ID != id) {
		return Diff{}, false
	}
	delete(r.open, path)
	d.State = to
	return *d, true
}

// Len returns how many diffs are open.
func (r *Registry) Len() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.open)
}

// Paths returns the paths of the open diffs.
func (r *Registry) Paths() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]string, 0, len(r.open))
	for p := range r.open {
		out = append(out, p)
	}
	return out
}
