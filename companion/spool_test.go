package companion

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/rs/zerolog"

	"github.com/gemini-ide-companion/gemini-ide-companion/diffview"
	"github.com/gemini-ide-companion/gemini-ide-companion/discovery"
	"github.com/gemini-ide-companion/gemini-ide-companion/internal/testproc"
)

// mutedEditor shows every diff (it keeps only a fingerprint of what it was
// asked to show, so the test's own memory does not hide the companion's)
// and never answers diff/close, as an editor that hung would.
type mutedEditor struct {
	mu      sync.Mutex
	shown   []diffview.Print
	states  []DiffState
	changed chan struct{} // a state arrived
}

func (e *mutedEditor) OpenDiff(ctx context.Context, req DiffRequest) error {
	e.mu.Lock()
	e.shown = append(e.shown, diffview.PrintOf(req.NewContent))
	e.mu.Unlock()
	return nil
}

func (e *mutedEditor) CloseDiff(ctx context.Context, path string) (*string, error) {
	return nil, errors.New("the editor did not answer")
}

func (e *mutedEditor) DiffState(st DiffState) {
	e.mu.Lock()
	e.states = append(e.states, st)
	e.mu.Unlock()
	select {
	case e.changed <- struct{}{}:
	default:
	}
}

// waitState waits for a diff/state with state st after the first n seen
// and returns it with the count seen so far. The watcher reports changes
// on disk too, so the test waits for the report rather than expect it from
// its own call.
func (e *mutedEditor) waitState(t *testing.T, n int, st string) (DiffState, int) {
	t.Helper()
	timeout := time.NewTimer(20 * time.Second)
	defer timeout.Stop()
	for {
		e.mu.Lock()
		for i := n; i < len(e.states); i++ {
			if e.states[i].State == st {
				got := e.states[i]
				e.mu.Unlock()
				return got, i + 1
			}
		}
		seen := len(e.states)
		e.mu.Unlock()
		select {
		case <-e.changed:
		case <-timeout.C:
			t.Fatalf("no %q state; saw %d states", st, seen)
		}
	}
}

// proposalText is the n-byte text proposed in these tests: lines with
// JSON escapes, astral characters and a line that differs by version.
func proposalText(n int, version string) string {
	var b strings.Builder
	b.Grow(n + 64)
	for i := 0; b.Len() < n; i++ {
		if i == 5000 {
			b.WriteString("changed in " + version + "\n")
		}
		b.WriteString("line \"quoted\" \\ tab\t 😀 <&> \u2028 end\r\n")
	}
	return b.String()
}

func startSpoolServer(t *testing.T) (*Server, *mutedEditor, string) {
	t.Helper()
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp) // where the spool makes its directory
	t.Setenv("TMP", tmp)    // the same, on Windows
	ws := t.TempDir()
	s := New(Options{DiscoveryDir: t.TempDir(), Logger: zerolog.Nop()})
	ed := &mutedEditor{changed: make(chan struct{}, 1)}
	s.SetEditor(ed)
	id := Identity{IDE: discovery.IDEInfo{Name: "test", DisplayName: "Test"}, Workspace: []string{ws}, IDEPID: os.Getpid()}
	if _, err := s.Start(context.Background(), id); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s, ed, ws
}

func callTool(t *testing.T, h func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error), args map[string]any) *mcp.CallToolResult {
	t.Helper()
	raw, err := json.Marshal(args)
	if err != nil {
		t.Fatal(err)
	}
	res, err := h(context.Background(), &mcp.CallToolRequest{Params: &mcp.CallToolParamsRaw{Name: "t", Arguments: raw}})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func resultText(res *mcp.CallToolResult) string {
	if len(res.Content) == 0 {
		return ""
	}
	return res.Content[0].(*mcp.TextContent).Text
}

// openLarge proposes proposalText(size, version) for path, building the
// request in a function of its own so that nothing of it stays reachable
// from the test.
func openLarge(t *testing.T, s *Server, path string, size int, version string) {
	t.Helper()
	res := callTool(t, s.openDiffTool, map[string]any{"filePath": path, "newContent": proposalText(size, version)})
	if res.IsError {
		t.Fatalf("openDiff: %s", resultText(res))
	}
}

func liveHeap() uint64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// TestShownLargeProposalHoldsNoCopyAndClosesExactly proposes 4 MiB over a
// 4 MiB file. Once the editor shows it, the companion's heap holds neither
// text (they would be 8 MiB); closeDiff, with an editor that does not
// answer, still returns the proposal byte for byte, read back from disk.
func TestShownLargeProposalHoldsNoCopyAndClosesExactly(t *testing.T) {
	s, ed, ws := startSpoolServer(t)
	const size = 4 << 20
	path := filepath.Join(ws, "big.txt")
	if err := os.WriteFile(path, []byte(proposalText(size, "disk")), 0o644); err != nil {
		t.Fatal(err)
	}
	before := liveHeap()
	openLarge(t, s, path, size, "v1")
	after := liveHeap()
	if grew := int64(after) - int64(before); grew > size/4 {
		t.Fatalf("the heap grew by %d bytes while a %d-byte proposal over a %d-byte file is shown: a text is still in memory", grew, size, size)
	}
	d, ok := s.diffs.Get(path)
	if !ok || !d.Stowed() || s.spool.Len() != 1 {
		t.Fatalf("shown proposal: ok %v stowed %v, spool holds %d", ok, d.Stowed(), s.spool.Len())
	}

	// The same session proposes again: the old proposal's file goes.
	openLarge(t, s, path, size, "v2")
	if s.spool.Len() != 1 {
		t.Fatalf("after a replacing proposal the spool holds %d texts, want 1", s.spool.Len())
	}

	res := callTool(t, s.closeDiffTool, map[string]any{"filePath": path})
	if res.IsError {
		t.Fatalf("closeDiff: %s", resultText(res))
	}
	var body struct {
		Content *string `json:"content"`
	}
	if err := json.Unmarshal([]byte(resultText(res)), &body); err != nil || body.Content == nil {
		t.Fatalf("closeDiff result %q: %v", resultText(res)[:min(200, len(resultText(res)))], err)
	}
	if want := proposalText(size, "v2"); *body.Content != want {
		t.Fatalf("closeDiff returned %d bytes that are not the %d proposed", len(*body.Content), len(want))
	}
	if s.spool.Len() != 0 {
		t.Fatalf("closed proposal still spooled")
	}
	ed.mu.Lock()
	n := len(ed.shown)
	ed.mu.Unlock()
	if n != 2 {
		t.Fatalf("editor was asked to show %d diffs, want 2", n)
	}
}

// TestStowedProposalSeesChangesOnDisk: with the original kept only as a
// fingerprint, a change on disk is still told apart from the file going
// back to what it was, and the diff against the disk is exact.
func TestStowedProposalSeesChangesOnDisk(t *testing.T) {
	s, ed, ws := startSpoolServer(t)
	const size = 2 << 20
	path := filepath.Join(ws, "big.txt")
	orig := proposalText(size, "disk")
	if err := os.WriteFile(path, []byte(orig), 0o644); err != nil {
		t.Fatal(err)
	}
	openLarge(t, s, path, size, "v1")
	d, _ := s.diffs.Get(path)
	if !d.Stowed() {
		t.Fatal("proposal not stowed")
	}
	edited := strings.Replace(orig, "changed in disk", "changed by hand", 1)
	if err := os.WriteFile(path, []byte(edited), 0o644); err != nil {
		t.Fatal(err)
	}
	s.checkDisk(path, d.ID)
	st, n := ed.waitState(t, 0, StateChangedOnDisk)
	want := diffview.Unified(path, &edited, proposalText(size, "v1"))
	if st.DiskContent == nil || *st.DiskContent != edited || st.UnifiedDiff != want || want == "" {
		t.Fatalf("after an edit on disk: unified diff exact %v", st.UnifiedDiff == want)
	}
	if err := os.WriteFile(path, []byte(orig), 0o644); err != nil {
		t.Fatal(err)
	}
	s.checkDisk(path, d.ID)
	_, n = ed.waitState(t, n, StateUnchangedOnDisk)
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	s.checkDisk(path, d.ID)
	ed.waitState(t, n, StateDeletedOnDisk)
}

// TestSpooledProposalThatVanished: the spool file of a shown proposal is
// gone. closeDiff says so clearly instead of returning a wrong text, a
// change on disk is still reported, and the next proposal works.
func TestSpooledProposalThatVanished(t *testing.T) {
	if testproc.UnderWine() {
		t.Skip("under Wine 8.0 this test now and then crashes the Go runtime (\"found bad pointer in Go heap\": memory written after it was freed, while a watched file's directory changes); the cause is not established, so it runs on Linux and real Windows only")
	}
	s, ed, ws := startSpoolServer(t)
	const size = 2 << 20
	path := filepath.Join(ws, "big.txt")
	if err := os.WriteFile(path, []byte("small original\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	openLarge(t, s, path, size, "v1")
	d, _ := s.diffs.Get(path)
	if !d.Stowed() {
		t.Fatal("proposal not stowed")
	}
	d.Release() // as if the file had been taken away

	if err := os.WriteFile(path, []byte("edited\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	s.checkDisk(path, d.ID)
	if st, _ := ed.waitState(t, 0, StateChangedOnDisk); st.DiskContent == nil || *st.DiskContent != "edited\n" {
		t.Fatalf("change on disk under a vanished spool file: %+v", st)
	}

	res := callTool(t, s.closeDiffTool, map[string]any{"filePath": path})
	if !res.IsError || !strings.Contains(resultText(res), "cannot be read back") {
		t.Fatalf("closeDiff with its text gone: error %v, %q", res.IsError, resultText(res))
	}
	if _, ok := s.diffs.Get(path); ok {
		t.Fatal("the diff is still open after closeDiff")
	}
	openLarge(t, s, path, size, "v2")
	if d, ok := s.diffs.Get(path); !ok || !d.Stowed() {
		t.Fatal("the next proposal was not shown and stowed")
	}
}

// TestServerCloseRemovesTheSpool: the spool's directory is private and
// goes with the server.
func TestServerCloseRemovesTheSpool(t *testing.T) {
	s, _, ws := startSpoolServer(t)
	path := filepath.Join(ws, "new.txt")
	openLarge(t, s, path, 2<<20, "v1")
	dirs, _ := filepath.Glob(filepath.Join(os.TempDir(), "gemini-ide-companion-proposals-*"))
	if len(dirs) != 1 {
		t.Fatalf("spool directories: %v", dirs)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(dirs[0]); !os.IsNotExist(err) {
		t.Fatalf("spool directory after Close: %v", err)
	}
}
