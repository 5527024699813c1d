package diffview

import (
	"errors"
	"testing"
)

func TestSecondSessionsProposalWaitsItsTurn(t *testing.T) {
	r := NewRegistry()
	a, _ := r.Propose("/w/f.go", "A", str("old"), "from A")
	b, replaced := r.Propose("/w/f.go", "B", str("old"), "from B")
	if a.State != Open || b.State != Queued || replaced != nil {
		t.Fatalf("a %v, b %v, replaced %+v", a.State, b.State, replaced)
	}
	if got, _ := r.Get("/w/f.go"); got.ID != a.ID || got.Proposed != "from A" {
		t.Fatalf("shown %+v, want A's proposal untouched", got)
	}
	if _, ok := r.Next("/w/f.go"); ok {
		t.Fatal("a queued proposal was shown while another is still open")
	}
	got, ok := r.Resolve("/w/f.go", Accepted)
	if !ok || got.Owner != "A" || got.Proposed != "from A" {
		t.Fatalf("the decision went to %+v, want A's proposal", got)
	}
	next, ok := r.Next("/w/f.go")
	if !ok || next.ID != b.ID || next.Owner != "B" || next.State != Open {
		t.Fatalf("next = %+v %v", next, ok)
	}
	if got, ok := r.Resolve("/w/f.go", Rejected); !ok || got.Owner != "B" {
		t.Fatalf("second decision %+v %v", got, ok)
	}
	if r.Len() != 0 || r.Queued("/w/f.go") != 0 {
		t.Fatal("registry not empty")
	}
}

func TestOnlyTheOwnerCloses(t *testing.T) {
	r := NewRegistry()
	a, _ := r.Propose("/w/f.go", "A", nil, "from A")
	b, _ := r.Propose("/w/f.go", "B", nil, "from B")
	if _, _, ok, err := r.Close("/w/f.go", "C"); ok || !errors.Is(err, ErrNotOwner) {
		t.Fatalf("close by a stranger: ok %v err %v", ok, err)
	}
	// B closes its own queued proposal; A's stays shown.
	d, shown, ok, err := r.Close("/w/f.go", "B")
	if err != nil || !ok || shown || d.ID != b.ID {
		t.Fatalf("close queued: %+v %v %v %v", d, shown, ok, err)
	}
	if got, _ := r.Get("/w/f.go"); got.ID != a.ID {
		t.Fatal("closing a queued proposal touched the shown one")
	}
	if _, _, ok, err := r.Close("/w/f.go", "B"); ok || !errors.Is(err, ErrNotOwner) {
		t.Fatalf("B closing A's diff: ok %v err %v", ok, err)
	}
	d, shown, ok, err = r.Close("/w/f.go", "A")
	if err != nil || !ok || !shown || d.Proposed != "from A" {
		t.Fatalf("close own: %+v %v %v %v", d, shown, ok, err)
	}
	if _, _, ok, err := r.Close("/w/f.go", "A"); ok || err != nil {
		t.Fatalf("close of nothing: %v %v", ok, err)
	}
}

func TestOrphanMarksShownAndDropsQueued(t *testing.T) {
	r := NewRegistry()
	r.Propose("/w/a.go", "A", nil, "a")
	r.Propose("/w/b.go", "B", nil, "b")
	r.Propose("/w/b.go", "A", nil, "a's b") // queued behind B
	got, unqueued := r.Orphan("A")
	if len(got) != 1 || got[0].Path != "/w/a.go" || !got[0].Orphaned {
		t.Fatalf("orphaned %+v", got)
	}
	if len(unqueued) != 1 || unqueued[0] != "/w/b.go" {
		t.Fatalf("queues that got shorter: %v", unqueued)
	}
	if r.Queued("/w/b.go") != 0 {
		t.Fatal("a gone session's queued proposal is still waiting")
	}
	if d, ok := r.Get("/w/a.go"); !ok || !d.Orphaned {
		t.Fatal("the orphaned view must stay so its text can be saved")
	}
	if again, _ := r.Orphan("A"); len(again) != 0 {
		t.Fatalf("orphaned twice: %+v", again)
	}
}

func TestSetDiskReportsOnlyChanges(t *testing.T) {
	r := NewRegistry()
	d, _ := r.Propose("/w/a.go", "A", str("v1"), "p")
	if _, ch := r.SetDisk("/w/a.go", d.ID, Changed, str("v2")); !ch {
		t.Fatal("change not recorded")
	}
	if _, ch := r.SetDisk("/w/a.go", d.ID, Changed, str("v2")); ch {
		t.Fatal("same state reported twice")
	}
	if _, ch := r.SetDisk("/w/a.go", d.ID, Changed, str("v3")); !ch {
		t.Fatal("a second change to other text not recorded")
	}
	if got, ch := r.SetDisk("/w/a.go", d.ID, Deleted, nil); !ch || got.Disk != Deleted {
		t.Fatalf("deleted: %+v %v", got, ch)
	}
	if _, ch := r.SetDisk("/w/a.go", d.ID, Deleted, nil); ch {
		t.Fatal("deleted reported twice")
	}
	if _, ch := r.SetDisk("/w/a.go", d.ID+1, Changed, str("x")); ch {
		t.Fatal("another diff's id changed this one")
	}
}

// TestSetDiskUnchangedIsNoNews: a file read again as it was when the
// proposal opened is no change, however often it is read; "back to what it
// was" is news only after a real change.
func TestSetDiskUnchangedIsNoNews(t *testing.T) {
	r := NewRegistry()
	d, _ := r.Propose("/w/a.go", "A", str("v1"), "p")
	for range 2 {
		if got, ch := r.SetDisk("/w/a.go", d.ID, Unchanged, str("v1")); ch || got.Disk != Unchanged {
			t.Fatalf("the file as it was reported as a change: %+v %v", got, ch)
		}
	}
	if _, ch := r.SetDisk("/w/a.go", d.ID, Changed, str("v2")); !ch {
		t.Fatal("change not recorded")
	}
	if got, ch := r.SetDisk("/w/a.go", d.ID, Unchanged, str("v1")); !ch || got.Disk != Unchanged {
		t.Fatalf("back to the original not recorded: %+v %v", got, ch)
	}
	if _, ch := r.SetDisk("/w/a.go", d.ID, Unchanged, str("v1")); ch {
		t.Fatal("back to the original reported twice")
	}
	n, _ := r.Propose("/w/new.go", "A", nil, "p")
	if _, ch := r.SetDisk("/w/new.go", n.ID, Unchanged, nil); ch {
		t.Fatal("a new file still missing reported as a change")
	}
}
