// Package diffview tracks the diffs Gemini CLI asks the editor to show. Every
// proposal has an owner (the CLI session that made it); at most one proposal
// per file path is shown at a time, and a proposal for a path that another
// session is already showing waits in line behind it, never merged or
// swapped. Each proposal moves once from open to accepted, rejected or
// closed, so a decision is reported exactly once, to its owner, and a late or
// unknown one is refused.
package diffview

import (
	"errors"
	"fmt"
	"sync"

	"github.com/gemini-ide-companion/gemini-ide-companion/internal/fspath"
)

// State is where a diff is in its life.
type State int

// The states of a diff. Open and Queued are the only ones that move; the
// others are final.
const (
	Open State = iota
	Accepted
	Rejected
	Closed
	Replaced
	// Queued is a proposal waiting for another session's proposal for the
	// same file to be decided before it is shown.
	Queued
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
	case Queued:
		return "queued"
	}
	return fmt.Sprintf("State(%d)", int(s))
}

// Disk says how the file on disk compares with what it was when the diff
// opened.
type Disk int

// The disk states of an open diff.
const (
	// Unchanged: the file is as it was when the proposal was shown.
	Unchanged Disk = iota
	// Changed: something outside the diff wrote the file.
	Changed
	// Deleted: the file existed when the proposal was shown and is gone.
	Deleted
)

func (d Disk) String() string {
	switch d {
	case Unchanged:
		return "unchanged"
	case Changed:
		return "changedOnDisk"
	case Deleted:
		return "deletedOnDisk"
	}
	return fmt.Sprintf("Disk(%d)", int(d))
}

// ErrNotOwner is returned when a session acts on a proposal another session
// made.
var ErrNotOwner = errors.New("the diff for this file was proposed by another Gemini CLI session")

// Diff is one proposed change to one file.
type Diff struct {
	// ID is unique within a Registry; it tells a diff apart from an earlier
	// or later one for the same path.
	ID uint64
	// Path is the absolute path of the file, as the CLI wrote it.
	Path string
	// Owner names the session that proposed it; only that session hears its
	// decision and may close it.
	Owner string
	// Original is the file's content when the diff opened; nil if the file
	// did not exist, or once the diff is stowed (then OriginalPrint is set).
	Original *string
	// OriginalPrint identifies the original of a stowed diff whose file
	// existed; nil otherwise.
	OriginalPrint *Print
	// Proposed is the content the CLI proposed; empty once the diff is
	// stowed: ProposedText reads it back.
	Proposed string
	// State is the diff's state when this copy was taken.
	State State
	// Orphaned is set once the owner is gone: a decision can reach nobody.
	Orphaned bool
	// Disk says whether the file changed on disk since Original was read.
	Disk Disk

	current *Print   // the file on disk as SetDisk last saw it changed; nil when unchanged or deleted
	stored  *spooled // where Proposed went when stowed
}

// IsNew reports whether the file did not exist when the diff opened.
func (d Diff) IsNew() bool {
	return d.Original == nil && d.OriginalPrint == nil
}

// OriginalIs reports whether text (nil: no file) is the diff's original.
func (d Diff) OriginalIs(text *string) bool {
	switch {
	case text == nil || d.IsNew():
		return text == nil && d.IsNew()
	case d.Original != nil:
		return *text == *d.Original
	}
	return int64(len(*text)) == d.OriginalPrint.Size && PrintOf(*text) == *d.OriginalPrint
}

// ProposedText returns the proposed content, read back from the spool when
// the diff is stowed. It fails, and says why, when the spool file cannot be
// read or no longer holds exactly what was written to it.
func (d Diff) ProposedText() (string, error) {
	if d.stored == nil {
		return d.Proposed, nil
	}
	text, err := d.stored.text()
	if err != nil {
		return "", fmt.Errorf("the proposed text for %s cannot be read back: %w", d.Path, err)
	}
	return text, nil
}

// Release frees the spool file of a diff that Close returned; the other
// ways a diff ends free it themselves. It is safe on any diff, and more than
// once.
func (d Diff) Release() {
	if d.stored != nil {
		d.stored.release()
	}
}

type entry struct {
	shown *Diff
	queue []*Diff
}

// Registry holds the open and queued diffs. It is safe for concurrent use.
type Registry struct {
	mu     sync.Mutex
	nextID uint64
	files  map[string]*entry
}

// NewRegistry returns an empty registry.
func NewRegistry() *Registry {
	return &Registry{files: map[string]*entry{}}
}

// Propose registers owner's proposal for path. With nothing shown for path it
// is shown (State Open). If owner's own earlier proposal for path is shown
// or queued, the new one takes its place and the old one is returned as
// replaced. If another session's proposal is shown, the new one is queued
// behind it (State Queued).
//
// Diffs are keyed by fspath.Key (on Windows: any case, either separator),
// but Path keeps the text the caller
// gave: the CLI matches decisions to its pending diffs by that exact string.
func (r *Registry) Propose(path, owner string, original *string, proposed string) (d Diff, replaced *Diff) {
	key := fspath.Key(path)
	r.mu.Lock()
	defer r.mu.Unlock()
	r.nextID++
	nd := &Diff{ID: r.nextID, Path: path, Owner: owner, Original: original, Proposed: proposed, State: Open}
	e := r.files[key]
	if e == nil {
		e = &entry{}
		r.files[key] = e
	}
	switch {
	case e.shown == nil:
		e.shown = nd
	case e.shown.Owner == owner:
		old := *e.shown
		old.State = Replaced
		old.Release()
		replaced = &old
		e.shown = nd
	default:
		nd.State = Queued
		for i, q := range e.queue {
			if q.Owner == owner {
				old := *q
				old.State = Replaced
				replaced = &old
				e.queue[i] = nd
				return *nd, replaced
			}
		}
		e.queue = append(e.queue, nd)
	}
	return *nd, replaced
}

// Get returns the diff shown for path.
func (r *Registry) Get(path string) (Diff, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	e := r.files[fspath.Key(path)]
	if e == nil || e.shown == nil {
		return Diff{}, false
	}
	return *e.shown, true
}

// ResolveID moves the diff shown for path, if it is id, to a final state
// (Accepted, Rejected or Closed) and returns it. It reports false when no
// diff is shown for path, when the one shown is not id (it was decided or
// replaced meanwhile), or when to is not a final state: the decision is
// late or unknown and must be refused. The first queued proposal for path,
// if any, is shown next once the caller calls Next.
func (r *Registry) ResolveID(path string, id uint64, to State) (Diff, bool) {
	return r.resolve(path, id, to)
}

func (r *Registry) resolve(path string, id uint64, to State) (Diff, bool) {
	if to != Accepted && to != Rejected && to != Closed {
		return Diff{}, false
	}
	key := fspath.Key(path)
	r.mu.Lock()
	defer r.mu.Unlock()
	e := r.files[key]
	if e == nil || e.shown == nil || (id != 0 && e.shown.ID != id) {
		return Diff{}, false
	}
	d := e.shown
	e.shown = nil
	if len(e.queue) == 0 {
		delete(r.files, key)
	}
	d.State = to
	d.Release()
	return *d, true
}

// Next promotes the first queued proposal for path to shown, if nothing is
// shown for path, and returns it. The caller shows it in the editor.
func (r *Registry) Next(path string) (Diff, bool) {
	key := fspath.Key(path)
	r.mu.Lock()
	defer r.mu.Unlock()
	e := r.files[key]
	if e == nil || e.shown != nil || len(e.queue) == 0 {
		return Diff{}, false
	}
	e.shown = e.queue[0]
	e.queue = e.queue[1:]
	e.shown.State = Open
	return *e.shown, true
}

// Rebase sets the original side of the diff shown for path (if it is id)
// to the file as it is now, for a queued proposal shown after the file
// changed, and returns the diff.
func (r *Registry) Rebase(path string, id uint64, original *string) Diff {
	r.mu.Lock()
	defer r.mu.Unlock()
	e := r.files[fspath.Key(path)]
	if e == nil || e.shown == nil || e.shown.ID != id {
		return Diff{}
	}
	e.shown.Original, e.shown.OriginalPrint = original, nil
	e.shown.Disk, e.shown.current = Unchanged, nil
	return *e.shown
}

// Close ends owner's proposal for path as Closed: the shown one, or one
// still queued (wasShown false). It returns ErrNotOwner when the only
// proposal for path belongs to another session, and ok false when there is
// none. The caller may still read the proposed text of the diff it gets,
// and must Release it when done.
func (r *Registry) Close(path, owner string) (d Diff, wasShown, ok bool, err error) {
	key := fspath.Key(path)
	r.mu.Lock()
	defer r.mu.Unlock()
	e := r.files[key]
	if e == nil {
		return Diff{}, false, false, nil
	}
	if e.shown != nil && e.shown.Owner == owner {
		d := e.shown
		e.shown = nil
		if len(e.queue) == 0 {
			delete(r.files, key)
		}
		d.State = Closed
		return *d, true, true, nil
	}
	for i, q := range e.queue {
		if q.Owner == owner {
			e.queue = append(e.queue[:i], e.queue[i+1:]...)
			q.State = Closed
			return *q, false, true, nil
		}
	}
	if e.shown != nil {
		return Diff{}, false, false, ErrNotOwner
	}
	return Diff{}, false, false, nil
}

// Orphan marks every proposal owner has shown as orphaned and drops the
// ones it still has queued (nobody waits for them any more). It returns the
// shown ones, now orphaned, and the paths whose queue got shorter.
func (r *Registry) Orphan(owner string) (out []Diff, unqueued []string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for key, e := range r.files {
		q := e.queue[:0]
		for _, d := range e.queue {
			if d.Owner != owner {
				q = append(q, d)
			}
		}
		if len(q) != len(e.queue) && e.shown != nil {
			unqueued = append(unqueued, e.shown.Path)
		}
		clear(e.queue[len(q):])
		e.queue = q
		if e.shown != nil && e.shown.Owner == owner && !e.shown.Orphaned {
			e.shown.Orphaned = true
			out = append(out, *e.shown)
		}
		if e.shown == nil && len(e.queue) == 0 {
			delete(r.files, key)
		}
	}
	return out, unqueued
}

// SetDisk records what the file of diff id now holds on disk. It reports
// whether anything changed, and returns the diff as it is now.
func (r *Registry) SetDisk(path string, id uint64, disk Disk, current *string) (Diff, bool) {
	var cur *Print
	if current != nil && disk != Unchanged {
		// Unchanged is one state whatever the file's text: the original,
		// as the diff starts. Changed keeps the text's print, so that a
		// second, different change is told too.
		p := PrintOf(*current)
		cur = &p
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	e := r.files[fspath.Key(path)]
	if e == nil || e.shown == nil || e.shown.ID != id {
		return Diff{}, false
	}
	d := e.shown
	if d.Disk == disk && samePrint(d.current, cur) {
		return *d, false
	}
	d.Disk, d.current = disk, cur
	return *d, true
}

func samePrint(a, b *Print) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return *a == *b
}

// Stow moves the texts of the diff shown for path, if it is id and either
// text is SpoolMin or larger, out of memory: the proposed text into a file
// of sp, the original down to its Print. It is meant for a diff the editor
// already shows, which holds both texts itself. A diff that is no longer
// shown, or already stowed, is left alone.
func (r *Registry) Stow(path string, id uint64, sp *Spool) error {
	key := fspath.Key(path)
	r.mu.Lock()
	e := r.files[key]
	if e == nil || e.shown == nil || e.shown.ID != id || e.shown.stored != nil {
		r.mu.Unlock()
		return nil
	}
	d := *e.shown
	r.mu.Unlock()
	if len(d.Proposed) < SpoolMin && (d.Original == nil || len(*d.Original) < SpoolMin) {
		return nil
	}
	// The slow part, writing the file and hashing, runs unlocked.
	var orig *Print
	if d.Original != nil {
		p := PrintOf(*d.Original)
		orig = &p
	}
	sf, err := sp.put(d.Proposed)
	if err != nil {
		return fmt.Errorf("keep the proposed text for %s on disk: %w", d.Path, err)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	e = r.files[key]
	if e == nil || e.shown == nil || e.shown.ID != id || e.shown.stored != nil {
		sf.release()
		return nil
	}
	e.shown.stored = sf
	e.shown.Proposed = ""
	e.shown.Original, e.shown.OriginalPrint = nil, orig
	return nil
}

// Queued returns how many proposals wait behind the one shown for path.
func (r *Registry) Queued(path string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	if e := r.files[fspath.Key(path)]; e != nil {
		return len(e.queue)
	}
	return 0
}

// Paths returns the paths of the shown diffs.
func (r *Registry) Paths() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]string, 0, len(r.files))
	for _, e := range r.files {
		if e.shown != nil {
			out = append(out, e.shown.Path)
		}
	}
	return out
}
