package diffview

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/gemini-ide-companion/gemini-ide-companion/internal/dirwatch"
)

// TestDiskWatchTellsEachChangeOnceSettled: a write under a shown proposal,
// a second different write, the file put back by rename and its deletion
// each reach the watch once, with the registry's Disk state and the file's
// content; a proposal no longer watched hears nothing.
func TestDiskWatchTellsEachChangeOnceSettled(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "f.txt")
	if err := os.WriteFile(path, []byte("one\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	dw, err := dirwatch.New()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); dw.Run(ctx, nil) }()
	t.Cleanup(func() { cancel(); <-done })

	r := NewRegistry()
	one := "one\n"
	d, _ := r.Propose(path, "A", &one, "proposed\n")
	changes := make(chan DiskChange, 10)
	w := NewDiskWatch(r, func(c DiskChange) { changes <- c }, func(p string, err error) { t.Errorf("%s unreadable: %v", p, err) })
	w.Attach(dw)
	if err := w.Watch(path, d.ID); err != nil {
		t.Fatal(err)
	}
	expect := func(what string, disk Disk, current *string) {
		t.Helper()
		select {
		case c := <-changes:
			if c.Diff.ID != d.ID || c.Diff.Disk != disk || (c.Current == nil) != (current == nil) || (current != nil && *c.Current != *current) {
				t.Fatalf("after %s: disk %v, current %v; want %v, %v", what, c.Diff.Disk, c.Current, disk, current)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("nothing told after %s", what)
		}
	}
	two, three := "two\n", "three\n"
	os.WriteFile(path, []byte(two), 0o600)
	expect("a write", Changed, &two)
	os.WriteFile(path, []byte(three), 0o600)
	expect("a second, different write", Changed, &three)
	tmp := path + ".tmp"
	os.WriteFile(tmp, []byte(one), 0o600)
	os.Rename(tmp, path)
	expect("the original put back by rename", Unchanged, &one)
	os.Remove(path)
	expect("a delete", Deleted, nil)

	w.Unwatch(d.ID)
	os.WriteFile(path, []byte(two), 0o600)
	w.Check(path, d.ID+1) // not the proposal shown: nothing to tell
	if len(changes) != 0 {
		t.Fatalf("told %v about a proposal that is not shown", (<-changes).Diff.Disk)
	}
	w.Check(path, d.ID) // looked at now, without waiting for the watch
	expect("a write checked at once", Changed, &two)
}
