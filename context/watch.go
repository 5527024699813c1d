package context

import (
	stdctx "context"
	"errors"
	"io/fs"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gemini-ide-companion/gemini-ide-companion/internal/dirwatch"
)

// settle is how long a file may be missing before it counts as deleted:
// editors that save by writing a new file and renaming it over the old one
// make the path vanish for an instant.
const settle = 150 * time.Millisecond

// Watcher drops files from an Engine when they are deleted or moved away on
// disk. It watches the open files through the shared directory watcher
// (which watches their directories: that survives a file being replaced).
type Watcher struct {
	engine *Engine
	dw     *dirwatch.Watcher
	onErr  func(error)
	gone   chan struct{} // a watched file was removed or renamed away

	mu       sync.Mutex
	watches  map[string]func() // open file -> stops its watch
	suspects map[string]bool   // files seen gone, to check once settled
	synced   atomic.Uint64     // the engine's PathsGeneration at the last resync
	stopped  bool              // Run has ended: no new watches
}

// NewWatcher returns a Watcher for engine on dw. Call Sync whenever the set
// of open files may have changed, and Run to drop the files deleted on
// disk. onErr (may be nil) hears about files that cannot be watched, which
// is never fatal.
func NewWatcher(engine *Engine, dw *dirwatch.Watcher, onErr func(error)) *Watcher {
	if onErr == nil {
		onErr = func(error) {}
	}
	return &Watcher{engine: engine, dw: dw, onErr: onErr, gone: make(chan struct{}, 1),
		watches: map[string]func(){}, suspects: map[string]bool{}}
}

// Sync brings the watches in line with the engine's open files, before it
// returns: call it where the engine changed, before the change is
// published, so that a file is watched before any client hears of it and
// cannot be deleted unseen in between. When only a cursor moved it costs
// one atomic load.
func (w *Watcher) Sync() {
	if w.engine.PathsGeneration() == w.synced.Load() {
		return // only a cursor moved
	}
	w.resync()
}

// Run drops the open files that are deleted on disk and stay gone until
// ctx is done; then it stops every watch.
func (w *Watcher) Run(ctx stdctx.Context) {
	defer w.stopAll()
	check := time.NewTimer(time.Hour)
	check.Stop()
	defer check.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-w.gone:
			check.Reset(settle)
		case <-check.C:
			open := map[string]bool{}
			for _, p := range w.engine.Paths() {
				open[p] = true
			}
			w.mu.Lock()
			suspects := w.suspects
			w.suspects = map[string]bool{}
			w.mu.Unlock()
			for p := range suspects {
				if !open[p] {
					continue
				}
				if _, err := os.Lstat(p); errors.Is(err, fs.ErrNotExist) {
					w.engine.Close(p) // which syncs the watches
				}
			}
		}
	}
}

// seen takes an event of the shared watcher (on its goroutine).
func (w *Watcher) seen(ev dirwatch.Event) {
	if !ev.Gone {
		return
	}
	w.mu.Lock()
	w.suspects[ev.Path] = true
	w.mu.Unlock()
	select {
	case w.gone <- struct{}{}:
	default:
	}
}

func (w *Watcher) resync() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.stopped {
		return
	}
	// Read under w.mu, so that of two resyncs the later sees the later
	// set; the generation first, so that a change after it syncs again.
	w.synced.Store(w.engine.PathsGeneration())
	want := map[string]bool{}
	for _, p := range w.engine.Paths() {
		want[p] = true
	}
	// New watches first: a directory that keeps one open file is then not
	// let go of and taken again.
	for p := range want {
		if w.watches[p] != nil {
			continue
		}
		stop, err := w.dw.Watch(p, w.seen)
		if err != nil {
			w.onErr(err)
			continue
		}
		w.watches[p] = stop
	}
	for p, stop := range w.watches {
		if !want[p] {
			stop()
			delete(w.watches, p)
		}
	}
}

func (w *Watcher) stopAll() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.stopped = true
	for p, stop := range w.watches {
		stop()
		delete(w.watches, p)
	}
}
