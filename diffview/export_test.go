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

// Stowed reports whether the diff's texts left memory (Registry.Stow).
func (d Diff) Stowed() bool {
	return d.stored != nil
}

// Open registers a proposal for path with no particular owner: the newest
// replaces any earlier one. It is Propose for a single client.
func (r *Registry) Open(path string, original *string, proposed string) (d Diff, replaced *Diff) {
	return r.Propose(path, "", original, proposed)
}

// Resolve moves the diff shown for path to a final state (Accepted,
// Rejected or Closed) and returns it. It reports false when no diff is shown
// for path, or when to is not a final state: the decision is late or
// unknown and must be refused. The first queued proposal for path, if any,
// is shown next once the caller calls Next.
func (r *Registry) Resolve(path string, to State) (Diff, bool) {
	return r.resolve(path, 0, to)
}

// Len returns how many texts the spool holds.
func (sp *Spool) Len() int {
	sp.mu.Lock()
	defer sp.mu.Unlock()
	return len(sp.files)
}

// UnifiedBounded is unified, for the tests outside the package.
func UnifiedBounded(path string, original *string, proposed string) (text string, exact bool) {
	return unified(path, original, proposed)
}
