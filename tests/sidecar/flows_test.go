package sidecar

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	idectx "github.com/gemini-ide-companion/gemini-ide-companion/context"
	"github.com/gemini-ide-companion/gemini-ide-companion/link"
	"github.com/gemini-ide-companion/gemini-ide-companion/tests/testkit"
)

func decodeContext(t *testing.T, raw json.RawMessage) idectx.IdeContext {
	t.Helper()
	var c idectx.IdeContext
	if err := json.Unmarshal(raw, &c); err != nil {
		t.Fatalf("contextUpdate params %s: %v", raw, err)
	}
	if c.WorkspaceState == nil {
		t.Fatalf("contextUpdate without workspaceState: %s", raw)
	}
	return c
}

// activeIs matches a contextUpdate whose active file is path at line:char.
func activeIs(path string, line, char int) func(json.RawMessage) bool {
	return func(raw json.RawMessage) bool {
		var c idectx.IdeContext
		if json.Unmarshal(raw, &c) != nil || c.WorkspaceState == nil || len(c.WorkspaceState.OpenFiles) == 0 {
			return false
		}
		f := c.WorkspaceState.OpenFiles[0]
		return f.Path == path && f.IsActive && f.Cursor != nil && f.Cursor.Line == line && f.Cursor.Character == char
	}
}

func TestContextReachesTheCLI(t *testing.T) {
	s := start(t)
	a := filepath.Join(s.sb.Workspace, "a.go")
	b := filepath.Join(s.sb.Workspace, "b.go")
	write(t, a, "package a\n")
	write(t, b, "package b\n")

	cli := s.cli(t)
	// A new session gets the current state as soon as its stream opens,
	// even with nothing open yet.
	first := decodeContext(t, cli.WaitFor(t, "ide/contextUpdate", wait, nil))
	if len(first.WorkspaceState.OpenFiles) != 0 || first.WorkspaceState.IsTrusted == nil || !*first.WorkspaceState.IsTrusted {
		t.Fatalf("initial context %+v", first.WorkspaceState)
	}

	s.ed.Notify(t, "context/fileFocused", map[string]any{"path": a, "cursor": map[string]int{"line": 1, "character": 1}})
	s.ed.Notify(t, "context/fileFocused", map[string]any{"path": b, "cursor": map[string]int{"line": 1, "character": 9}})
	s.ed.Notify(t, "context/selectionChanged", map[string]any{"path": b, "cursor": map[string]int{"line": 1, "character": 5}, "selectedText": "kage"})
	raw := cli.WaitFor(t, "ide/contextUpdate", wait, activeIs(b, 1, 5))
	c := decodeContext(t, raw)
	files := c.WorkspaceState.OpenFiles
	if len(files) != 2 || files[1].Path != a || files[1].IsActive || files[1].Cursor != nil {
		t.Fatalf("files %+v", files)
	}
	if files[0].SelectedText == nil || *files[0].SelectedText != "kage" || files[0].Timestamp <= files[1].Timestamp {
		t.Fatalf("active file %+v", files[0])
	}

	// Trust, close, rename.
	s.ed.Notify(t, "workspace/trustChanged", map[string]any{"isTrusted": false})
	s.ed.Notify(t, "context/fileClosed", map[string]any{"path": a})
	c2 := filepath.Join(s.sb.Workspace, "c.go")
	s.ed.Notify(t, "context/fileRenamed", map[string]any{"oldPath": b, "newPath": c2})
	cli.WaitFor(t, "ide/contextUpdate", wait, func(raw json.RawMessage) bool {
		var c idectx.IdeContext
		json.Unmarshal(raw, &c)
		ws := c.WorkspaceState
		return ws != nil && ws.IsTrusted != nil && !*ws.IsTrusted && len(ws.OpenFiles) == 1 && ws.OpenFiles[0].Path == c2
	})

	// A file deleted on disk leaves the context. (The update that opens
	// a.go again is looked for among the updates after that: the first
	// ones had a.go and another file too.)
	mark := cli.Len()
	write(t, a, "x")
	s.ed.Notify(t, "context/fileFocused", map[string]any{"path": a})
	cli.WaitFrom(t, mark, "ide/contextUpdate", wait, func(raw json.RawMessage) bool {
		return strings.Contains(string(raw), `/a.go"`) && strings.Contains(string(raw), `/c.go"`) && strings.Count(string(raw), `"path"`) == 2
	})
	mark = cli.Len()
	os.Remove(a)
	cli.WaitFrom(t, mark, "ide/contextUpdate", wait, func(raw json.RawMessage) bool {
		return !strings.Contains(string(raw), "a.go") && strings.Contains(string(raw), "c.go")
	})
}

func TestContextDebounceAndMaxWait(t *testing.T) {
	s := start(t)
	path := filepath.Join(s.sb.Workspace, "long.go")
	write(t, path, strings.Repeat("x", 1000))
	cli := s.cli(t)
	cli.WaitFor(t, "ide/contextUpdate", wait, nil)

	// One event then silence: one update, no earlier than 50 ms after it.
	mark := cli.Len()
	sent := time.Now()
	s.ed.Notify(t, "context/fileFocused", map[string]any{"path": path, "cursor": map[string]int{"line": 1, "character": 1}})
	n, _ := cli.WaitFrom(t, mark, "ide/contextUpdate", wait, activeIs(path, 1, 1))
	if d := n.At.Sub(sent); d < 50*time.Millisecond {
		t.Fatalf("update %s after the event; the debounce is 50 ms", d)
	}

	// A long cursor motion: an event every 5 ms for 1.2 s. Updates must
	// stream while it lasts (max-wait), and the final position must arrive.
	mark = cli.Len()
	col := 1
	var last time.Time
	for end := time.Now().Add(1200 * time.Millisecond); time.Now().Before(end); {
		col++
		s.ed.Notify(t, "context/selectionChanged", map[string]any{"path": path, "cursor": map[string]int{"line": 1, "character": col}})
		last = time.Now()
		time.Sleep(5 * time.Millisecond) // the pace of the motion, not synchronisation
	}
	final, idx := cli.WaitFrom(t, mark, "ide/contextUpdate", wait, activeIs(path, 1, col))
	during := 0
	all := cli.All("")
	for _, n := range all[mark:idx] {
		if n.Method == "ide/contextUpdate" && n.At.Before(last) {
			during++
		}
	}
	if during < 3 {
		t.Fatalf("%d updates during a 1.2 s motion; expected about one per 200 ms", during)
	}
	if updates := idx - mark + 1; updates > col/2 {
		t.Fatalf("%d updates for %d events: no coalescing", updates, col)
	}
	if final.At.Before(last) {
		t.Fatal("final position arrived before the last event was sent")
	}
	// Nothing is repeated: reporting the same position again sends
	// nothing, so the next update is the next real change.
	mark = cli.Len()
	s.ed.Notify(t, "context/selectionChanged", map[string]any{"path": path, "cursor": map[string]int{"line": 1, "character": col}})
	s.ed.Notify(t, "context/selectionChanged", map[string]any{"path": path, "cursor": map[string]int{"line": 1, "character": col}})
	var st map[string]any
	s.ed.Call(wait, "status/get", nil, &st) // both events processed
	time.Sleep(60 * time.Millisecond)       // past the debounce window of those events
	s.ed.Notify(t, "context/selectionChanged", map[string]any{"path": path, "cursor": map[string]int{"line": 1, "character": col + 1}})
	n, _ = cli.WaitFrom(t, mark, "ide/contextUpdate", wait, nil)
	if !activeIs(path, 1, col+1)(n.Params) {
		t.Fatalf("an unchanged state was sent again: %s", n.Params)
	}
}

func TestAcceptWithUserEdits(t *testing.T) {
	s := start(t)
	path := filepath.Join(s.sb.Workspace, "f.txt")
	write(t, path, "one\ntwo\n")
	cli := s.cli(t)
	ctx := context.Background()

	res, err := cli.OpenDiff(ctx, path, "one\n2\n")
	if err != nil || res.IsError {
		t.Fatalf("openDiff: %v %+v", err, res)
	}
	if len(res.Content) != 0 {
		t.Fatalf("openDiff success must have empty content, got %d blocks", len(res.Content))
	}
	reqs := s.ed.Requests()
	if len(reqs) != 1 || reqs[0].Method != "diff/open" {
		t.Fatalf("editor requests %v", reqs)
	}
	var open struct {
		FilePath        string  `json:"filePath"`
		NewContent      string  `json:"newContent"`
		OriginalContent *string `json:"originalContent"`
		UnifiedDiff     string  `json:"unifiedDiff"`
		Title           string  `json:"title"`
	}
	json.Unmarshal(reqs[0].Params, &open)
	if open.FilePath != path || open.NewContent != "one\n2\n" || open.OriginalContent == nil || *open.OriginalContent != "one\ntwo\n" ||
		!strings.Contains(open.UnifiedDiff, "-two\n+2\n") || !strings.Contains(open.Title, "f.txt") {
		t.Fatalf("diff/open params %+v", open)
	}

	s.ed.Notify(t, "diff/accepted", map[string]any{"filePath": path, "content": "one\nTWO, edited\n"})
	raw := cli.WaitFor(t, "ide/diffAccepted", wait, nil)
	var acc struct{ FilePath, Content string }
	json.Unmarshal(raw, &acc)
	if acc.FilePath != path || acc.Content != "one\nTWO, edited\n" {
		t.Fatalf("diffAccepted %s", raw)
	}
	// The companion never writes the user's file: the CLI does.
	if data, _ := os.ReadFile(path); string(data) != "one\ntwo\n" {
		t.Fatalf("file changed by the companion: %q", data)
	}
	// A second decision for the same diff is ignored: the next decision
	// notification the CLI sees is for the next diff.
	s.ed.Notify(t, "diff/accepted", map[string]any{"filePath": path, "content": "again"})
	s.ed.Notify(t, "diff/rejected", map[string]any{"filePath": path})
	other := filepath.Join(s.sb.Workspace, "new.txt")
	if res, err := cli.OpenDiff(ctx, other, "fresh\n"); err != nil || res.IsError {
		t.Fatalf("openDiff new file: %v", err)
	}
	var newOpen struct {
		OriginalContent *string `json:"originalContent"`
	}
	json.Unmarshal(s.ed.Requests()[1].Params, &newOpen)
	if newOpen.OriginalContent != nil {
		t.Fatal("originalContent of a new file must be null")
	}
	s.ed.Notify(t, "diff/rejected", map[string]any{"filePath": other})
	cli.WaitFor(t, "ide/diffRejected", wait, nil)
	decisions := append(cli.All("ide/diffAccepted"), cli.All("ide/diffRejected")...)
	if len(decisions) != 2 || !strings.Contains(string(decisions[1].Params), "new.txt") {
		t.Fatalf("decisions %v", decisions)
	}
}

func TestCloseDiffReturnsTheEditorsTextAndSilencesDecisions(t *testing.T) {
	s := start(t)
	path := filepath.Join(s.sb.Workspace, "g.txt")
	cli := s.cli(t)
	ctx := context.Background()
	if _, err := cli.OpenDiff(ctx, path, "proposed\n"); err != nil {
		t.Fatal(err)
	}
	s.ed.SetProposal(path, "proposed, then edited\n")
	got := cli.CloseDiffContent(t, ctx, path)
	if got == nil || *got != "proposed, then edited\n" {
		t.Fatalf("closeDiff content %v", got)
	}
	reqs := s.ed.Requests()
	if reqs[len(reqs)-1].Method != "diff/close" {
		t.Fatal("editor was not asked to close the view")
	}
	// The editor's late decision must not reach the CLI.
	s.ed.Notify(t, "diff/accepted", map[string]any{"filePath": path, "content": "late"})
	// No diff open: content null.
	if got := cli.CloseDiffContent(t, ctx, path); got != nil {
		t.Fatalf("closeDiff with nothing open: %q", *got)
	}
	// A decision on a later diff is the first one the CLI sees.
	if _, err := cli.OpenDiff(ctx, path, "v2\n"); err != nil {
		t.Fatal(err)
	}
	s.ed.Notify(t, "diff/rejected", map[string]any{"filePath": path})
	cli.WaitFor(t, "ide/diffRejected", wait, nil)
	if n := len(cli.All("ide/diffAccepted")); n != 0 {
		t.Fatalf("a decision after closeDiff leaked: %d accepts", n)
	}
}

func toolText(res *mcp.CallToolResult) string {
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			return tc.Text
		}
	}
	return ""
}

func TestOpenDiffErrors(t *testing.T) {
	s := start(t)
	cli := s.cli(t)
	ctx := context.Background()
	for _, c := range []struct{ path, want string }{
		{"relative/file.go", "not absolute"},
		{"", "empty"},
		{"/tmp/a\x00b", "NUL"},
		{s.sb.Workspace, "directory"},
	} {
		res, err := cli.OpenDiff(ctx, c.path, "x")
		if err != nil || !res.IsError || !strings.Contains(toolText(res), c.want) {
			t.Errorf("openDiff(%q): err %v, result %+v; want isError mentioning %q", c.path, err, res, c.want)
		}
	}
	res, err := cli.Session.CallTool(ctx, &mcp.CallToolParams{Name: "openDiff", Arguments: map[string]any{"filePath": 5}})
	if err == nil && !res.IsError {
		t.Error("openDiff with wrong argument types succeeded")
	}
	// The editor fails to show the diff: its message reaches the CLI.
	s.ed.SetHandler(func(method string, params json.RawMessage) (any, error) {
		return nil, link.Errorf(-32000, "buffer is read-only")
	})
	res, err = cli.OpenDiff(ctx, filepath.Join(s.sb.Workspace, "x.txt"), "x")
	if err != nil || !res.IsError || !strings.Contains(toolText(res), "buffer is read-only") {
		t.Fatalf("editor error: %v %+v", err, res)
	}
	if len(s.ed.Requests()) != 1 {
		t.Fatalf("invalid paths reached the editor: %v", s.ed.Requests())
	}
}

func TestEditorThatNeverAnswersTimesOut(t *testing.T) {
	if testing.Short() {
		t.Skip("waits for the 10 s editor timeout")
	}
	s := start(t)
	cli := s.cli(t)
	release := make(chan struct{})
	var once sync.Once
	t.Cleanup(func() { once.Do(func() { close(release) }) })
	s.ed.SetHandler(func(method string, params json.RawMessage) (any, error) {
		if method == "diff/open" {
			<-release
			return nil, errors.New("too late")
		}
		return map[string]any{"content": nil}, nil
	})
	started := time.Now()
	res, err := cli.OpenDiff(context.Background(), filepath.Join(s.sb.Workspace, "slow.txt"), "x")
	if err != nil || !res.IsError || !strings.Contains(toolText(res), "did not show the diff") {
		t.Fatalf("got %v %+v", err, res)
	}
	if d := time.Since(started); d < 9*time.Second || d > 20*time.Second {
		t.Fatalf("timed out after %s, want about 10 s", d)
	}
	once.Do(func() { close(release) })
	// The session is still usable.
	if _, err := cli.Session.ListTools(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
}

func TestTwoSessionsGetContextButOnlyTheProposerGetsTheDecision(t *testing.T) {
	s := start(t)
	path := filepath.Join(s.sb.Workspace, "shared.txt")
	one := s.cli(t)
	two := s.cli(t)
	s.ed.WaitFor(t, "status", wait, func(p json.RawMessage) bool { return strings.Contains(string(p), `"connectedClients":2`) })

	s.ed.Notify(t, "context/fileFocused", map[string]any{"path": path, "cursor": map[string]int{"line": 3, "character": 4}})
	for _, c := range []*testkit.CLI{one, two} {
		c.WaitFor(t, "ide/contextUpdate", wait, activeIs(path, 3, 4))
	}
	if _, err := one.OpenDiff(context.Background(), path, "x\n"); err != nil {
		t.Fatal(err)
	}
	s.ed.Notify(t, "diff/accepted", map[string]any{"filePath": path, "content": "x\n"})
	one.WaitFor(t, "ide/diffAccepted", wait, nil)
	two.Session.Close()
	s.ed.WaitFor(t, "status", wait, func(p json.RawMessage) bool {
		return strings.Contains(string(p), `"connectedClients":1`)
	})
	if n1, n2 := len(one.All("ide/diffAccepted")), len(two.All("ide/diffAccepted")); n1 != 1 || n2 != 0 {
		t.Fatalf("accepts delivered: proposer %d, other session %d; want 1 and 0", n1, n2)
	}
}

func TestDecisionForAGoneCLIIsReportedUndelivered(t *testing.T) {
	s := start(t)
	path := filepath.Join(s.sb.Workspace, "kept.txt")
	first := s.cli(t)
	if _, err := first.OpenDiff(context.Background(), path, "k\n"); err != nil {
		t.Fatal(err)
	}
	first.Session.Close()
	s.ed.WaitFor(t, "status", wait, func(p json.RawMessage) bool { return strings.Contains(string(p), `"connectedClients":0`) })
	s.ed.WaitFor(t, "log", wait, func(p json.RawMessage) bool { return strings.Contains(string(p), "kept.txt is gone") })
	s.ed.Notify(t, "diff/accepted", map[string]any{"filePath": path, "content": "k\n"})
	s.ed.WaitFor(t, "log", wait, func(p json.RawMessage) bool {
		return strings.Contains(string(p), "did not reach the Gemini CLI session")
	})
	again := s.cli(t)
	if _, err := again.Session.ListTools(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	if n := len(again.All("ide/diffAccepted")); n != 0 {
		t.Fatalf("a later CLI received a decision on a proposal it never made")
	}
}

func TestADecisionWithoutIDIsNeverTakenForANewerProposal(t *testing.T) {
	// A plugin that sends no diffId decides on the view it shows. The user
	// accepts the first proposal just as the CLI proposes again for the
	// same file: the accept reaches the sidecar after the new proposal is
	// made but before the plugin has answered its diff/open. The CLI must
	// not hear the old text accepted as the new proposal's.
	s := start(t)
	path := s.file(t, "h.txt", "old\n")
	cli := s.cli(t)
	ctx := context.Background()
	if _, err := cli.OpenDiff(ctx, path, "first\n"); err != nil {
		t.Fatal(err)
	}
	crossed := make(chan error, 1)
	s.ed.SetHandler(func(method string, params json.RawMessage) (any, error) {
		if method == "diff/open" {
			crossed <- s.ed.Conn.Notify("diff/accepted", map[string]any{"filePath": path, "content": "first\n"})
		}
		return struct{}{}, nil
	})
	if _, err := cli.OpenDiff(ctx, path, "second\n"); err != nil {
		t.Fatal(err)
	}
	if err := <-crossed; err != nil {
		t.Fatal(err)
	}
	// The plugin has shown the second proposal: a decision now is about it.
	s.ed.Notify(t, "diff/rejected", map[string]any{"filePath": path})
	cli.WaitFor(t, "ide/diffRejected", wait, nil)
	if accepts := cli.All("ide/diffAccepted"); len(accepts) != 0 {
		t.Fatalf("the accept of the first proposal was taken for the second: %v", accepts)
	}
}

func TestADecisionWithoutIDAfterItsProposalEndedIsNeverTakenForTheNext(t *testing.T) {
	// A plugin that sends no diffId accepts a proposal, then sends a
	// second decision for the same file (a stray one, as a view closing
	// after the accept may send) just as the proposal queued behind the
	// first is being shown: the stray decision must not reach the second
	// CLI, whose proposal the user has not seen yet.
	s := start(t)
	path := s.file(t, "q.txt", "old\n")
	a, b := s.cli(t), s.cli(t)
	ctx := context.Background()
	mustOpen(t, a, path, "from a\n")
	mustOpen(t, b, path, "from b\n") // queued behind a's
	crossed := make(chan error, 1)
	s.ed.SetHandler(func(method string, params json.RawMessage) (any, error) {
		if method == "diff/open" && strings.Contains(string(params), "from b") {
			crossed <- s.ed.Conn.Notify("diff/rejected", map[string]any{"filePath": path})
		}
		return struct{}{}, nil
	})
	s.ed.Notify(t, "diff/accepted", map[string]any{"filePath": path, "content": "from a\n"})
	a.WaitFor(t, "ide/diffAccepted", wait, nil)
	if err := <-crossed; err != nil {
		t.Fatal(err)
	}
	var st map[string]any
	if err := s.ed.Call(wait, "status/get", nil, &st); err != nil { // the stray decision is handled
		t.Fatal(err)
	}
	if _, err := b.Session.ListTools(ctx, nil); err != nil { // and anything sent to b has arrived
		t.Fatal(err)
	}
	if got := b.All("ide/diffRejected"); len(got) != 0 {
		t.Fatalf("the stray decision was taken for the next proposal: %s", got[0].Params)
	}
	// The plugin has shown the second proposal: a decision now is about it.
	s.ed.Notify(t, "diff/accepted", map[string]any{"filePath": path, "content": "from b\n"})
	b.WaitFor(t, "ide/diffAccepted", wait, nil)
}
