package context

import (
	"encoding/json"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"
	"unicode/utf16"
	"unicode/utf8"
)

// fakeClock returns the same millisecond until advanced, to prove ordering
// does not depend on the clock moving.
type fakeClock struct{ ms atomic.Int64 }

func (c *fakeClock) now() time.Time      { return time.UnixMilli(c.ms.Load()) }
func (c *fakeClock) add(d time.Duration) { c.ms.Add(d.Milliseconds()) }

func newTestEngine() (*Engine, *fakeClock, *atomic.Int32) {
	clk := &fakeClock{}
	clk.ms.Store(1_700_000_000_000)
	var changes atomic.Int32
	return NewEngine(clk.now, func() { changes.Add(1) }), clk, &changes
}

func paths(c IdeContext) []string {
	var out []string
	for _, f := range c.WorkspaceState.OpenFiles {
		out = append(out, f.Path)
	}
	return out
}

func TestFocusOrdersMostRecentFirstWithStrictTimestamps(t *testing.T) {
	e, _, changes := newTestEngine()
	e.Focus("/w/a.go", nil, "")
	e.Focus("/w/b.go", &Cursor{Line: 3, Character: 5}, "")
	e.Focus("/w/c.go", nil, "")
	e.Focus("/w/a.go", &Cursor{Line: 1, Character: 1}, "x")

	snap := e.Snapshot()
	if got, want := strings.Join(paths(snap), " "), "/w/a.go /w/c.go /w/b.go"; got != want {
		t.Fatalf("order = %s, want %s", got, want)
	}
	files := snap.WorkspaceState.OpenFiles
	for i := 1; i < len(files); i++ {
		if files[i-1].Timestamp <= files[i].Timestamp {
			t.Fatalf("timestamps not strictly decreasing (the CLI sorts by them): %+v", files)
		}
	}
	if !files[0].IsActive || files[0].Cursor == nil || *files[0].Cursor != (Cursor{1, 1}) || *files[0].SelectedText != "x" {
		t.Fatalf("active file wrong: %+v", files[0])
	}
	for _, f := range files[1:] {
		if f.IsActive || f.Cursor != nil || f.SelectedText != nil {
			t.Fatalf("only the active file may carry cursor/selection: %+v", f)
		}
	}
	if changes.Load() != 4 {
		t.Fatalf("onChange called %d times, want 4", changes.Load())
	}
}

func TestRelativePathsAreIgnored(t *testing.T) {
	e, _, changes := newTestEngine()
	if e.Focus("rel/a.go", nil, "") || e.Select("", &Cursor{1, 1}, "") {
		t.Fatal("relative path accepted")
	}
	if len(e.Snapshot().WorkspaceState.OpenFiles) != 0 || changes.Load() != 0 {
		t.Fatal("relative path changed the state")
	}
}

func TestAtMostTenFiles(t *testing.T) {
	e, clk, _ := newTestEngine()
	for i := 0; i < 15; i++ {
		clk.add(time.Millisecond)
		e.Focus(fmt.Sprintf("/w/%02d.go", i), nil, "")
	}
	ps := paths(e.Snapshot())
	if len(ps) != MaxOpenFiles || ps[0] != "/w/14.go" || ps[9] != "/w/05.go" {
		t.Fatalf("got %v", ps)
	}
}

func TestSelectOnOtherFileFocusesIt(t *testing.T) {
	e, _, _ := newTestEngine()
	e.Focus("/w/a.go", nil, "")
	e.Focus("/w/b.go", nil, "")
	e.Select("/w/a.go", &Cursor{Line: 2, Character: 4}, "sel")
	f := e.Snapshot().WorkspaceState.OpenFiles[0]
	if f.Path != "/w/a.go" || !f.IsActive || f.Cursor.Line != 2 || *f.SelectedText != "sel" {
		t.Fatalf("got %+v", f)
	}
	// Clearing the selection: no selectedText.
	e.Select("/w/a.go", &Cursor{Line: 2, Character: 5}, "")
	if f := e.Snapshot().WorkspaceState.OpenFiles[0]; f.SelectedText != nil {
		t.Fatalf("selection not cleared: %+v", f)
	}
}

func TestCloseActiveLeavesNoActiveFile(t *testing.T) {
	e, _, _ := newTestEngine()
	e.Focus("/w/a.go", nil, "")
	e.Focus("/w/b.go", &Cursor{1, 1}, "")
	e.Close("/w/b.go")
	files := e.Snapshot().WorkspaceState.OpenFiles
	if len(files) != 1 || files[0].Path != "/w/a.go" || files[0].IsActive {
		t.Fatalf("got %+v", files)
	}
	if e.Close("/w/zzz.go") {
		t.Fatal("closing an unknown file reported a change")
	}
}

func TestRenameKeepsPlaceAndCursor(t *testing.T) {
	e, _, _ := newTestEngine()
	e.Focus("/w/a.go", nil, "")
	e.Focus("/w/b.go", &Cursor{7, 3}, "hi")
	e.Rename("/w/b.go", "/w/c.go")
	f := e.Snapshot().WorkspaceState.OpenFiles
	if f[0].Path != "/w/c.go" || f[0].Cursor.Line != 7 || *f[0].SelectedText != "hi" || f[1].Path != "/w/a.go" {
		t.Fatalf("got %+v", f)
	}
	// Renaming onto another open file replaces it.
	e.Rename("/w/c.go", "/w/a.go")
	if ps := paths(e.Snapshot()); len(ps) != 1 || ps[0] != "/w/a.go" {
		t.Fatalf("got %v", ps)
	}
}

func TestTrustIsPassedThrough(t *testing.T) {
	e, _, changes := newTestEngine()
	if tr := e.Snapshot().WorkspaceState.IsTrusted; tr != nil {
		t.Fatalf("isTrusted %v before the editor said anything; want none, so the CLI's folder trust decides", *tr)
	}
	e.SetTrusted(false)
	e.SetTrusted(false)
	if *e.Snapshot().WorkspaceState.IsTrusted || changes.Load() != 1 {
		t.Fatalf("trust not recorded once: %v changes", changes.Load())
	}
}

func TestSelectedTextTruncatedInUTF16Units(t *testing.T) {
	e, _, _ := newTestEngine()
	// 16383 ASCII characters then an emoji (2 UTF-16 units): the emoji
	// would straddle the limit, so it must be dropped whole.
	text := strings.Repeat("a", MaxSelectedUTF16-1) + "😀" + "tail"
	e.Focus("/w/a.go", &Cursor{1, 1}, text)
	got := *e.Snapshot().WorkspaceState.OpenFiles[0].SelectedText
	if got != strings.Repeat("a", MaxSelectedUTF16-1) {
		t.Fatalf("got %d bytes ending %q", len(got), got[len(got)-8:])
	}
	// Multi-byte characters that are one UTF-16 unit each: é is 2 bytes.
	text = strings.Repeat("é", MaxSelectedUTF16+10)
	e.Focus("/w/a.go", &Cursor{1, 1}, text)
	got = *e.Snapshot().WorkspaceState.OpenFiles[0].SelectedText
	if n := len(utf16.Encode([]rune(got))); n != MaxSelectedUTF16 {
		t.Fatalf("UTF-16 length %d, want %d", n, MaxSelectedUTF16)
	}
	// Invalid UTF-8 comes out valid.
	e.Focus("/w/a.go", &Cursor{1, 1}, "ok\xff\xfe")
	if got := *e.Snapshot().WorkspaceState.OpenFiles[0].SelectedText; !utf8.ValidString(got) {
		t.Fatalf("invalid UTF-8 passed through: %q", got)
	}
}

func TestSnapshotJSONShape(t *testing.T) {
	e, _, _ := newTestEngine()
	e.Focus("/w/a.go", &Cursor{Line: 2, Character: 9}, "sel")
	e.Focus("/w/b.go", nil, "")
	data, err := json.Marshal(e.Snapshot())
	if err != nil {
		t.Fatal(err)
	}
	want := `{"workspaceState":{"openFiles":[{"path":"/w/b.go","timestamp":1700000000001,"isActive":true},{"path":"/w/a.go","timestamp":1700000000000}]}}`
	if string(data) != want {
		t.Fatalf("got  %s\nwant %s", data, want)
	}
}

func TestEqual(t *testing.T) {
	e, _, _ := newTestEngine()
	e.Focus("/w/a.go", &Cursor{1, 2}, "x")
	a, b := e.Snapshot(), e.Snapshot()
	if !a.Equal(b) {
		t.Fatal("identical snapshots not equal")
	}
	e.Select("/w/a.go", &Cursor{1, 3}, "x")
	if a.Equal(e.Snapshot()) {
		t.Fatal("cursor change not noticed")
	}
}
