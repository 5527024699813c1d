package diffview

import (
	"sync"
	"time"

	"github.com/gemini-ide-companion/gemini-ide-companion/internal/dirwatch"
)

// diskSettle is how long a proposed file must stay quiet after a change on
// disk before it is read: a write comes as several events (truncate, then
// data), and the half-written file is not worth telling the user about.
const diskSettle = 30 * time.Millisecond

// DiskChange is news about the file of a shown proposal: it changed on
// disk, was deleted, or is back to what it was when the proposal was shown.
type DiskChange struct {
	// Diff is the proposal, with Disk saying how the file now compares.
	Diff Diff
	// Current is the file's content now; nil when it does not exist.
	Current *string
}

// DiskWatch tells when the file of a shown proposal is written, replaced or
// deleted on disk by anything else (another tool, a git checkout, the user
// in another editor), and keeps the registry's Disk state of the proposal
// up to date. It keeps a proposal's path and id only: its texts must not
// stay reachable through the watch.
type DiskWatch struct {
	reg        *Registry
	changed    func(DiskChange)
	unreadable func(path string, err error)

	mu      sync.Mutex
	dw      *dirwatch.Watcher
	watches map[uint64]*diskWatch
}

// NewDiskWatch returns a DiskWatch over reg: changed hears of every change
// of a proposal's disk state, unreadable of a changed file that could not
// be read. It watches nothing until Attach gives it a directory watcher,
// but Check works at once.
func NewDiskWatch(reg *Registry, changed func(DiskChange), unreadable func(path string, err error)) *DiskWatch {
	return &DiskWatch{reg: reg, changed: changed, unreadable: unreadable, watches: map[uint64]*diskWatch{}}
}

// Attach makes Watch use dw (nil: watch nothing from now on).
func (w *DiskWatch) Attach(dw *dirwatch.Watcher) {
	w.mu.Lock()
	w.dw = dw
	w.mu.Unlock()
}

// diskWatch is the watch of one proposal's file and its settle timer.
type diskWatch struct {
	mu      sync.Mutex
	settle  *time.Timer
	stopped bool
	stop    func()
}

// Watch checks the file of diff id (Check) each time it has changed on
// disk and settled, until Unwatch(id). Without a directory watcher it does
// nothing.
func (w *DiskWatch) Watch(path string, id uint64) error {
	w.mu.Lock()
	dw := w.dw
	w.mu.Unlock()
	if dw == nil {
		return nil
	}
	dk := &diskWatch{}
	stop, err := dw.Watch(path, func(dirwatch.Event) {
		dk.mu.Lock()
		defer dk.mu.Unlock()
		if dk.stopped {
			return
		}
		if dk.settle != nil {
			dk.settle.Reset(diskSettle)
			return
		}
		dk.settle = time.AfterFunc(diskSettle, func() {
			dk.mu.Lock()
			dk.settle = nil
			done := dk.stopped
			dk.mu.Unlock()
			if !done {
				w.Check(path, id)
			}
		})
	})
	if err != nil {
		return err
	}
	dk.stop = stop
	w.mu.Lock()
	old := w.watches[id]
	w.watches[id] = dk
	w.mu.Unlock()
	if old != nil {
		old.end()
	}
	return nil
}

// Unwatch stops watching the file of diff id.
func (w *DiskWatch) Unwatch(id uint64) {
	w.mu.Lock()
	dk := w.watches[id]
	delete(w.watches, id)
	w.mu.Unlock()
	if dk != nil {
		dk.end()
	}
}

func (dk *diskWatch) end() {
	dk.stop()
	dk.mu.Lock()
	dk.stopped = true
	if dk.settle != nil {
		dk.settle.Stop()
	}
	dk.mu.Unlock()
}

// Check reads the file of diff id now, compares it with what it was when
// the proposal was shown, and calls changed when that differs from what
// was last said about it.
func (w *DiskWatch) Check(path string, id uint64) {
	cur, err := ReadFile(path, nil)
	if err != nil {
		w.unreadable(path, err)
		return
	}
	d, ok := w.reg.Get(path)
	if !ok || d.ID != id {
		return
	}
	disk := Unchanged
	switch {
	case cur == nil && !d.IsNew():
		disk = Deleted
	case cur == nil:
	case !d.OriginalIs(cur):
		disk = Changed
	}
	if d, changed := w.reg.SetDisk(path, id, disk, cur); changed {
		w.changed(DiskChange{Diff: d, Current: cur})
	}
}
