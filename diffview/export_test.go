package diffview

// Len returns how many diffs are shown.
func (r *Registry) Len() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for _, e := range r.files {
		if e.shown != nil {
			n++
		}
	}
	return n
}
