package context

import (
	stdctx "context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fsnotify/fsnotify"
)

// settle is how long a file may be missing before it counts as deleted:
// editors that save by writing a new file and renaming it over the old one
// make the path vanish for an instant.
const settle = 150 * time.Millisecond

// Watcher drops files from an Engine when they are deleted or moved away on
// disk. It watches the directories of the open files (watching a directory
// survives the file being replaced, watching the file itself does not).
type Watcher struct {
	engine  *Engine
	fsw     *fsnotify.Watcher
	syncReq chan struct{}

	mu     sync.Mutex
	dirs   map[string]bool
	synced atomic.Uint64 // the engine's PathsGeneration at the last resync
}

// NewWatcher creates a Watcher for engine. Call Run to make it work and Sync
// whenever the set of open files may have changed.
func NewWatcher(engine *Engine) (*Watcher, error) {
	fsw, err := fsnotify.NewWatcher()
	if err != nil {
		return nil, fmt.Errorf("start file watcher: %w", err)
	}
	return &Watcher{engine: engine, fsw: fsw, syncReq: make(chan struct{}, 1), dirs: map[string]bool{}}, nil
}

// Sync asks the watcher to bring its watched directories in line with the
// engine's open files. It never blocks.
func (w *Watcher) Sync() {
	if w.engine.PathsGeneration() == w.synced.Load() {
		return // only a cursor moved
	}
	select {
	case w.syncReq <- struct{}{}:
	default:
	}
}

// Run watches until ctx is done, then releases the OS watcher. onErr (may be
// nil) hears about watch errors, which are never fatal.
func (w *Watcher) Run(ctx stdctx.Context, onErr func(error)) {
	defer w.fsw.Close()
	if onErr == nil {
		onErr = func(error) {}
	}
	suspects := map[string]bool{}
	check := time.NewTimer(time.Hour)
	check.Stop()
	defer check.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-w.syncReq:
			w.resync(onErr)
		case ev, ok := <-w.fsw.Events:
			if !ok {
				return
			}
			if ev.Has(fsnotify.Remove) || ev.Has(fsnotify.Rename) {
				suspects[filepath.Clean(ev.Name)] = true
				check.Reset(settle)
			}
		case err, ok := <-w.fsw.Errors:
			if !ok {
				return
			}
			onErr(fmt.Errorf("file watcher: %w", err))
		case <-check.C:
			open := map[string]bool{}
			for _, p := range w.engine.Paths() {
				open[p] = true
			}
			for p := range suspects {
				if !open[p] {
					continue
				}
				if _, err := os.Lstat(p); errors.Is(err, fs.ErrNotExist) {
					w.engine.Close(p)
				}
			}
			clear(suspects)
			w.resync(onErr)
		}
	}
}

func (w *Watcher) resync(onErr func(error)) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.synced.Store(w.engine.PathsGeneration())
	want := map[string]bool{}
	for _, p := range w.engine.Paths() {
		want[filepath.Dir(p)] = true
	}
	for d := range w.dirs {
		if !want[d] {
			_ = w.fsw.Remove(d) // the directory may be gone already
			delete(w.dirs, d)
		}
	}
	for d := range want {
		if w.dirs[d] {
			continue
		}
		if err := w.fsw.Add(d); err != nil {
			onErr(fmt.Errorf("watch %s: %w", d, err))
			continue
		}
		w.dirs[d] = true
	}
}
