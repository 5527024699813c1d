package context

// Watched reports whether path is being watched now.
func (w *Watcher) Watched(path string) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.watches[path] != nil
}
