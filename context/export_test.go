package context

import "path/filepath"

// Watched reports whether dir is being watched now.
func (w *Watcher) Watched(dir string) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.dirs[filepath.Clean(dir)]
}
