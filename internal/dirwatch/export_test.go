package dirwatch

// Watching reports whether dir is being watched now.
func (w *Watcher) Watching(dir string) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.dirs[key(dir)] > 0
}
