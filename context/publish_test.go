package context

import (
	stdctx "context"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/gemini-ide-companion/gemini-ide-companion/internal/dirwatch"
)

type sent struct {
	at   time.Time
	snap IdeContext
}

// startPublisher runs a Publisher for e and collects what it sends.
func startPublisher(t *testing.T, e *Engine, quiet, maxWait time.Duration) (*Publisher, chan sent) {
	t.Helper()
	p := NewPublisher(e, quiet, maxWait)
	out := make(chan sent, 1000)
	ctx, cancel := stdctx.WithCancel(stdctx.Background())
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		p.Run(ctx, func(s IdeContext) { out <- sent{time.Now(), s} })
	}()
	t.Cleanup(func() { cancel(); wg.Wait() })
	return p, out
}

func recv(t *testing.T, ch chan sent, timeout time.Duration) sent {
	t.Helper()
	select {
	case s := <-ch:
		return s
	case <-time.After(timeout):
		t.Fatalf("nothing sent within %s", timeout)
		return sent{}
	}
}

func TestPublisherTrailingDebounce(t *testing.T) {
	var p *Publisher
	e := NewEngine(nil, func() { p.Changed() })
	p, out := startPublisher(t, e, 50*time.Millisecond, 200*time.Millisecond)

	start := time.Now()
	e.Focus("/w/a.go", &Cursor{1, 1}, "")
	e.Select("/w/a.go", &Cursor{1, 2}, "")
	e.Select("/w/a.go", &Cursor{1, 3}, "")
	s := recv(t, out, 2*time.Second)
	if d := s.at.Sub(start); d < 50*time.Millisecond {
		t.Fatalf("sent %s after the first change; the debounce is 50 ms", d)
	}
	if c := s.snap.WorkspaceState.OpenFiles[0].Cursor; c.Character != 3 {
		t.Fatalf("sent cursor %+v, want the last one (character 3)", c)
	}
}

func TestPublisherMaxWaitStreamsDuringLongMotion(t *testing.T) {
	var p *Publisher
	e := NewEngine(nil, func() { p.Changed() })
	p, out := startPublisher(t, e, 50*time.Millisecond, 200*time.Millisecond)

	// Move the cursor every 5 ms for 1 s: a plain trailing debounce would
	// send nothing until the motion stops.
	e.Focus("/w/a.go", &Cursor{1, 1}, "")
	var lastSent time.Time
	col := 1
	for end := time.Now().Add(time.Second); time.Now().Before(end); {
		col++
		e.Select("/w/a.go", &Cursor{1, col}, "")
		lastSent = time.Now()
		time.Sleep(5 * time.Millisecond) // the pace of the user's motion, not synchronisation
	}
	var during int
	var final sent
	for {
		s := recv(t, out, 2*time.Second)
		if s.at.Before(lastSent) {
			during++
		}
		if s.snap.WorkspaceState.OpenFiles[0].Cursor.Character == col {
			final = s
			break
		}
	}
	if during < 3 {
		t.Fatalf("only %d updates while the cursor moved for 1 s; max-wait 200 ms should give about 5", during)
	}
	if final.at.Before(lastSent) {
		t.Fatal("final state sent before the last change")
	}
}

func TestPublisherNeverRepeatsASnapshot(t *testing.T) {
	var p *Publisher
	e := NewEngine(nil, func() { p.Changed() })
	p, out := startPublisher(t, e, 20*time.Millisecond, 100*time.Millisecond)

	e.Focus("/w/a.go", &Cursor{1, 1}, "")
	first := recv(t, out, 2*time.Second)
	// Same state reported again: no send. Then a real change: the next
	// send must be that change, with nothing in between.
	e.Select("/w/a.go", &Cursor{1, 1}, "")
	p.Changed()
	e.Select("/w/a.go", &Cursor{2, 1}, "")
	next := recv(t, out, 2*time.Second)
	if next.snap.Equal(first.snap) || next.snap.WorkspaceState.OpenFiles[0].Cursor.Line != 2 {
		t.Fatalf("repeated or wrong snapshot: %+v", next.snap.WorkspaceState.OpenFiles[0])
	}
}

func TestWatcherDropsDeletedFiles(t *testing.T) {
	files := writeFiles(t, "a.txt", "b.txt")
	a, b := files[0], files[1]
	e, w := watchedEngine(t, nil)

	e.Focus(a, nil, "")
	e.Focus(b, nil, "")
	// Wait until the directory is watched: a rewrite-by-rename of b must
	// not drop it (editors save that way), a deletion of a must.
	w.Sync()
	tmp := b + ".tmp"
	if err := os.WriteFile(tmp, []byte("y"), 0o600); err != nil {
		t.Fatal(err)
	}
	waitFor(t, func() bool { return w.Watched(a) && w.Watched(b) })
	if err := os.Rename(tmp, b); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(a); err != nil {
		t.Fatal(err)
	}
	waitFor(t, func() bool { ps := e.Paths(); return len(ps) == 1 && ps[0] == b })
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not met within 5 s")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// A file is watched by the time the engine's change is handed on (to the
// publisher), so a deletion right after it was opened is seen; a directory
// whose open files are swapped keeps its watch.
func TestWatcherWatchesBeforeTheChangeIsHandedOn(t *testing.T) {
	files := writeFiles(t, "a.txt", "b.txt", "c.txt")
	a, b, c := files[0], files[1], files[2]
	var unwatchedAtChange []string
	e, _ := watchedEngine(t, func(w *Watcher) {
		for _, p := range w.engine.Paths() {
			if !w.Watched(p) {
				unwatchedAtChange = append(unwatchedAtChange, p)
			}
		}
	})

	e.Focus(a, nil, "")
	e.Focus(b, nil, "")
	e.Close(a)
	e.Rename(b, c) // the directory's open files go from {a, b} to {c}
	e.Focus(a, nil, "")
	if len(unwatchedAtChange) > 0 {
		t.Fatalf("open files not watched when the change was handed on: %v", unwatchedAtChange)
	}
	if err := os.Remove(a); err != nil {
		t.Fatal(err)
	}
	waitFor(t, func() bool { ps := e.Paths(); return len(ps) == 1 && ps[0] == c })
}

// writeFiles writes files of these names into a new folder and returns
// their paths.
func writeFiles(t *testing.T, names ...string) []string {
	t.Helper()
	dir := t.TempDir()
	var paths []string
	for _, name := range names {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, p)
	}
	return paths
}

// watchedEngine returns an engine whose every change syncs its Watcher,
// as the companion's does, then calls after (if not nil); the watcher and
// its shared directory watcher run until the test ends.
func watchedEngine(t *testing.T, after func(w *Watcher)) (*Engine, *Watcher) {
	t.Helper()
	var w *Watcher
	e := NewEngine(nil, func() {
		if w == nil {
			return
		}
		w.Sync()
		if after != nil {
			after(w)
		}
	})
	dw, err := dirwatch.New()
	if err != nil {
		t.Fatal(err)
	}
	w = NewWatcher(e, dw, nil)
	ctx, cancel := stdctx.WithCancel(stdctx.Background())
	done := make(chan struct{}, 2)
	go func() { defer func() { done <- struct{}{} }(); dw.Run(ctx, nil) }()
	go func() { defer func() { done <- struct{}{} }(); w.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done; <-done })
	return e, w
}
