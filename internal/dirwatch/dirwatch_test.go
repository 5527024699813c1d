package dirwatch

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"
)

func start(t *testing.T) *Watcher {
	t.Helper()
	w, err := New()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); w.Run(ctx, nil) }()
	t.Cleanup(func() { cancel(); <-done })
	return w
}

func expect(t *testing.T, events chan Event, what string, gone bool) {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for {
		select {
		case ev := <-events:
			if ev.Gone == gone {
				for len(events) > 0 {
					<-events
				}
				return
			}
		case <-deadline:
			t.Fatalf("no event (gone %v) after %s", gone, what)
		}
	}
}

// TestWatchSeesWritesReplacementsAndDeletes: a write, a replacement by
// rename and a delete of a watched file each reach its watch, the last two
// as gone; a sibling file's events do not.
func TestWatchSeesWritesReplacementsAndDeletes(t *testing.T) {
	// The directory first: its removal, a cleanup, then runs after the
	// watcher has ended and let go of its handle (Windows refuses to
	// delete a directory still open).
	dir := t.TempDir()
	w := start(t)
	path := filepath.Join(dir, "f.txt")
	if err := os.WriteFile(path, []byte("one\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	events := make(chan Event, 100)
	stop, err := w.Watch(path, func(ev Event) {
		if ev.Path != path {
			t.Errorf("event for %q, watched %q", ev.Path, path)
		}
		events <- ev
	})
	if err != nil {
		t.Fatal(err)
	}
	other, _ := w.Watch(filepath.Join(dir, "other.txt"), func(Event) { t.Error("event for another file") })
	defer other()
	if err := os.WriteFile(filepath.Join(dir, "unrelated.txt"), []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(path, []byte("two\n"), 0o600)
	expect(t, events, "a write", false)
	tmp := filepath.Join(dir, "f.txt.tmp")
	os.WriteFile(tmp, []byte("three\n"), 0o600)
	os.Rename(path, path+".bak")
	expect(t, events, "a rename away", true)
	os.Rename(tmp, path)
	expect(t, events, "a replacement by rename", false)
	os.Remove(path)
	expect(t, events, "a delete", true)
	stop()
	stop() // twice is harmless
}

// TestSharedDirectoryIsWatchedUntilItsLastFileGoes: two watches of one
// file, and one of a file beside it, share the directory's watch; each
// watch of the same file gets the event; the directory is dropped with the
// last watch in it.
func TestSharedDirectoryIsWatchedUntilItsLastFileGoes(t *testing.T) {
	// The directory first: its removal, a cleanup, then runs after the
	// watcher has ended and let go of its handle (Windows refuses to
	// delete a directory still open).
	dir := t.TempDir()
	w := start(t)
	path := filepath.Join(dir, "f.txt")
	a, b := make(chan Event, 10), make(chan Event, 10)
	stopA, err := w.Watch(path, func(ev Event) { a <- ev })
	if err != nil {
		t.Fatal(err)
	}
	stopB, err := w.Watch(path, func(ev Event) { b <- ev })
	if err != nil {
		t.Fatal(err)
	}
	stopC, err := w.Watch(filepath.Join(dir, "g.txt"), func(Event) {})
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(path, []byte("x"), 0o600)
	expect(t, a, "a write, first watch", false)
	expect(t, b, "a write, second watch", false)
	stopA()
	stopB()
	if !w.Watching(dir) {
		t.Fatal("the directory was dropped while g.txt is still watched")
	}
	stopC()
	if w.Watching(dir) {
		t.Fatal("the directory is still watched with no watched file in it")
	}
}
