// Package dirwatch is the sidecar's one file watcher, shared by the context
// engine (open files deleted on disk) and the proposals (a proposed file
// changed on disk). It watches the directories of the files its callers
// care about, not the files themselves: a directory watch survives a file
// being replaced by rename, deleted or created again, which a watch on the
// file does not. One OS watcher serves every caller, and a directory is
// watched once however many watched files it holds.
//
// What an event means, and how long to wait before acting on it, is the
// caller's business: dirwatch only says that something happened to a file.
package dirwatch

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/gemini-ide-companion/gemini-ide-companion/internal/fspath"
)

// Event is something that happened to a watched file.
type Event struct {
	// Path is the file's path as the caller gave it to Watch.
	Path string
	// Gone is set when the file was removed or renamed away; it may be
	// back already (an editor that saves by renaming a new file over it).
	Gone bool
}

// Watcher watches files through their directories. Create it with New, let
// Run deliver its events, and Watch the files of interest.
type Watcher struct {
	fw *fsnotify.Watcher

	mu    sync.Mutex
	dirs  map[string]int                 // key of a directory -> watched files in it
	files map[string]map[*watch]struct{} // key of a file -> its watches
}

type watch struct {
	path string
	fn   func(Event)
}

// New returns a watcher; Run delivers its events.
func New() (*Watcher, error) {
	fw, err := fsnotify.NewWatcher()
	if err != nil {
		return nil, fmt.Errorf("start the file watcher: %w", err)
	}
	return &Watcher{fw: fw, dirs: map[string]int{}, files: map[string]map[*watch]struct{}{}}, nil
}

// key is the form under which two names of one path are equal. Events
// name a file as the system lists it, which on Windows may differ in case
// from the name a caller watches.
func key(path string) string { return fspath.Key(path) }

// Watch calls fn, from Run's goroutine, whenever path may have changed on
// disk, until stop is called. fn must not block: it runs before the events
// of every other watch. Several watches of one path each get every event.
func (w *Watcher) Watch(path string, fn func(Event)) (stop func(), err error) {
	dir := filepath.Dir(filepath.Clean(path))
	fk, dk := key(path), key(dir)
	mine := &watch{path: path, fn: fn}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.dirs[dk] == 0 {
		if err := w.fw.Add(dir); err != nil {
			return func() {}, fmt.Errorf("watch %s: %w", dir, err)
		}
	}
	w.dirs[dk]++
	if w.files[fk] == nil {
		w.files[fk] = map[*watch]struct{}{}
	}
	w.files[fk][mine] = struct{}{}
	var once sync.Once
	return func() {
		once.Do(func() {
			w.mu.Lock()
			defer w.mu.Unlock()
			delete(w.files[fk], mine)
			if len(w.files[fk]) == 0 {
				delete(w.files, fk)
			}
			w.dirs[dk]--
			if w.dirs[dk] == 0 {
				delete(w.dirs, dk)
				_ = w.fw.Remove(dir) // the directory may be gone already
			}
		})
	}, nil
}

// Run delivers events until ctx ends, then releases the OS watcher. onErr
// (may be nil) hears about the OS watcher's errors, which are never fatal.
func (w *Watcher) Run(ctx context.Context, onErr func(error)) {
	defer w.release(onErr)
	for {
		select {
		case <-ctx.Done():
			return
		case ev, ok := <-w.fw.Events:
			if !ok {
				return
			}
			gone := ev.Has(fsnotify.Remove) || ev.Has(fsnotify.Rename)
			w.mu.Lock()
			watches := make([]*watch, 0, len(w.files[key(ev.Name)]))
			for wt := range w.files[key(ev.Name)] {
				watches = append(watches, wt)
			}
			w.mu.Unlock()
			for _, wt := range watches {
				wt.fn(Event{Path: wt.path, Gone: gone})
			}
		case err, ok := <-w.fw.Errors:
			if !ok {
				return
			}
			if onErr != nil {
				onErr(fmt.Errorf("file watcher: %w", err))
			}
		}
	}
}

// closeWait bounds how long release waits for the OS watcher to close.
const closeWait = 3 * time.Second

// release closes the OS watcher, taking in what it still sends meanwhile
// so that it is never stuck delivering. Its Close can block for good on
// Windows when the wake-up it posts to its completion port is lost (seen
// under Wine, in fsnotify's reader): after closeWait the watcher is left to
// the process's exit, and onErr hears of it, rather than holding up the
// shutdown of the program that owns it.
func (w *Watcher) release(onErr func(error)) {
	closed := make(chan struct{})
	go func() {
		defer close(closed)
		_ = w.fw.Close()
	}()
	t := time.NewTimer(closeWait)
	defer t.Stop()
	events, errs := w.fw.Events, w.fw.Errors
	for {
		select {
		case <-closed:
			return
		case _, ok := <-events:
			if !ok {
				events = nil
			}
		case _, ok := <-errs:
			if !ok {
				errs = nil
			}
		case <-t.C:
			if onErr != nil {
				onErr(fmt.Errorf("file watcher: not closed within %s; left to the process's exit", closeWait))
			}
			return
		}
	}
}
