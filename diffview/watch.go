package diffview

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"

	"github.com/fsnotify/fsnotify"

	"github.com/gemini-ide-companion/gemini-ide-companion/internal/fspath"
)

// Watcher tells when the file of an open proposal is written, replaced or
// deleted on disk by anything else (another tool, a git checkout, the user
// in another editor). It watches the parent directories, so that a file
// replaced by rename, deleted or created is noticed too, and shares one
// inotify instance between every open proposal.
type Watcher struct {
	fw *fsnotify.Watcher

	mu    sync.Mutex
	dirs  map[string]int    // directory -> how many watched files are in it
	files map[string]*watch // fspath.Key of a file -> what to call on an event
}

type watch struct{ onEvent func() }

// NewWatcher returns a watcher; Run delivers its events.
func NewWatcher() (*Watcher, error) {
	fw, err := fsnotify.NewWatcher()
	if err != nil {
		return nil, fmt.Errorf("watch proposed files: %w", err)
	}
	return &Watcher{fw: fw, dirs: map[string]int{}, files: map[string]*watch{}}, nil
}

// Add calls onEvent (from Run's goroutine) whenever path may have changed on
// disk, until the returned function is called. One callback per path: a
// second Add for the same path replaces the first.
func (w *Watcher) Add(path string, onEvent func()) (remove func(), err error) {
	dir := filepath.Dir(filepath.Clean(path))
	// Events name the file as the system lists it, which on Windows may
	// differ in case from the proposal's path: both are looked up by Key.
	key, dirKey := fspath.Key(path), fspath.Key(dir)
	w.mu.Lock()
	defer w.mu.Unlock()
	if _, ok := w.files[key]; !ok {
		if w.dirs[dirKey] == 0 {
			if err := w.fw.Add(dir); err != nil {
				return func() {}, fmt.Errorf("watch %s: %w", dir, err)
			}
		}
		w.dirs[dirKey]++
	}
	mine := &watch{onEvent: onEvent}
	w.files[key] = mine
	return func() {
		w.mu.Lock()
		defer w.mu.Unlock()
		if w.files[key] != mine {
			return // removed already, or replaced by a later Add
		}
		delete(w.files, key)
		w.dirs[dirKey]--
		if w.dirs[dirKey] == 0 {
			delete(w.dirs, dirKey)
			_ = w.fw.Remove(dir)
		}
	}, nil
}

// Run delivers events until ctx ends or Close is called.
func (w *Watcher) Run(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case ev, ok := <-w.fw.Events:
			if !ok {
				return
			}
			w.mu.Lock()
			f := w.files[fspath.Key(ev.Name)]
			w.mu.Unlock()
			if f != nil {
				f.onEvent()
			}
		case _, ok := <-w.fw.Errors:
			if !ok {
				return
			}
		}
	}
}

// Close stops watching.
func (w *Watcher) Close() error {
	return w.fw.Close()
}
