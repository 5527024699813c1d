package sidecar

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/gemini-ide-companion/gemini-ide-companion/link/protocol"
	"github.com/gemini-ide-companion/gemini-ide-companion/tests/testkit"
)

// Every proposal has an owner: the CLI session that made it. These tests
// run two CLI sessions against one editor that says it shows diff/state.

func startWithStates(t *testing.T) started {
	t.Helper()
	sb := testkit.NewSandbox(t)
	ed := testkit.StartEditor(t, sb, testkit.EditorOptions{})
	res := ed.Initialize(t, sb, map[string]any{"capabilities": map[string]any{"diffStates": true}})
	return started{sb, ed, res}
}

func stateIs(state string) func(json.RawMessage) bool {
	return func(p json.RawMessage) bool {
		var st protocol.DiffStateParams
		return json.Unmarshal(p, &st) == nil && st.State == state
	}
}

func decodeState(t *testing.T, raw json.RawMessage) protocol.DiffStateParams {
	t.Helper()
	var st protocol.DiffStateParams
	if err := json.Unmarshal(raw, &st); err != nil {
		t.Fatalf("diff/state %s: %v", raw, err)
	}
	return st
}

// opened returns the diff/open requests the editor received, decoded.
func opened(s started) []protocol.DiffOpenParams {
	var out []protocol.DiffOpenParams
	for _, r := range s.ed.Requests() {
		if r.Method == "diff/open" {
			var dr protocol.DiffOpenParams
			json.Unmarshal(r.Params, &dr)
			out = append(out, dr)
		}
	}
	return out
}

func mustOpen(t *testing.T, c *testkit.CLI, path, content string) {
	t.Helper()
	res, err := c.OpenDiff(context.Background(), path, content)
	if err != nil || res.IsError {
		t.Fatalf("openDiff %s: %v %q", path, err, toolText(res))
	}
}

// quiet checks that c got no decision, after a round trip that would have
// carried one queued before it.
func quiet(t *testing.T, c *testkit.CLI, who string) {
	t.Helper()
	if _, err := c.Session.ListTools(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	if n := len(c.All("ide/diffAccepted")) + len(c.All("ide/diffRejected")); n != 0 {
		t.Fatalf("%s received %d decisions on a proposal it never made", who, n)
	}
}

func TestSecondSessionsProposalIsQueuedNeverSwapped(t *testing.T) {
	s := startWithStates(t)
	path := s.file(t, "same.txt", "before\n")
	a := s.cli(t)
	b := s.cli(t)

	mustOpen(t, a, path, "from A\n")
	mustOpen(t, b, path, "from B\n")
	st := decodeState(t, s.ed.WaitFor(t, "diff/state", wait, stateIs("queued")))
	if st.FilePath != path || st.Queued != 1 || !strings.Contains(st.Message, "Another Gemini CLI session") {
		t.Fatalf("queued state %+v", st)
	}
	shown := opened(s)
	if len(shown) != 1 || shown[0].NewContent != "from A\n" {
		t.Fatalf("the editor must show only A's proposal until it is decided: %+v", shown)
	}

	// The user accepts what they see: A's proposal. Only A hears it.
	s.ed.Notify(t, "diff/accepted", map[string]any{"filePath": path, "content": "from A, edited\n", "diffId": shown[0].DiffID})
	got := a.WaitFor(t, "ide/diffAccepted", wait, nil)
	if !strings.Contains(string(got), "from A, edited") {
		t.Fatalf("A got %s", got)
	}
	// Then B's proposal is shown, as its own diff.
	s.ed.WaitFor(t, "request:diff/open", wait, func(p json.RawMessage) bool { return strings.Contains(string(p), "from B") })
	shown = opened(s)
	if len(shown) != 2 || shown[1].DiffID == shown[0].DiffID || shown[1].Owner == shown[0].Owner {
		t.Fatalf("B's proposal not shown as a distinct diff: %+v", shown)
	}
	quiet(t, b, "B")
	s.ed.Notify(t, "diff/rejected", map[string]any{"filePath": path, "diffId": shown[1].DiffID})
	b.WaitFor(t, "ide/diffRejected", wait, nil)
	if n := len(a.All("ide/diffAccepted")) + len(a.All("ide/diffRejected")); n != 1 {
		t.Fatalf("A received %d decisions, want only its own", n)
	}
}

func TestCloseDiffFromAnotherSessionIsRefused(t *testing.T) {
	s := startWithStates(t)
	path := filepath.Join(s.sb.Workspace, "mine.txt")
	a := s.cli(t)
	b := s.cli(t)
	mustOpen(t, a, path, "A's\n")

	res, err := b.CloseDiff(context.Background(), path)
	if err != nil || !res.IsError || !strings.Contains(toolText(res), "another Gemini CLI session") {
		t.Fatalf("closeDiff by a non-owner: %v %+v", err, res)
	}
	for _, r := range s.ed.Requests() {
		if r.Method == "diff/close" {
			t.Fatal("a non-owner's closeDiff closed the view")
		}
	}
	var st struct{ OpenDiffs []string }
	s.ed.Call(wait, "status/get", nil, &st)
	if !slices.Contains(st.OpenDiffs, path) {
		t.Fatalf("A's diff is gone: %v", st.OpenDiffs)
	}
	if got := a.CloseDiffContent(t, context.Background(), path); got == nil || *got != "A's\n" {
		t.Fatalf("the owner's closeDiff returned %v", got)
	}
}

func TestProposalOfAGoneCLIIsOrphanedAndItsAcceptUndelivered(t *testing.T) {
	s := startWithStates(t)
	path := filepath.Join(s.sb.Workspace, "orphan.txt")
	a := s.cli(t)
	mustOpen(t, a, path, "proposal\n")
	a.Session.Close()
	st := decodeState(t, s.ed.WaitFor(t, "diff/state", wait, stateIs("orphaned")))
	if st.FilePath != path || !strings.Contains(st.Message, "accepting writes nothing") {
		t.Fatalf("orphaned %+v", st)
	}
	s.ed.Notify(t, "diff/accepted", map[string]any{"filePath": path, "content": "kept text\n", "diffId": st.DiffID})
	st = decodeState(t, s.ed.WaitFor(t, "diff/state", wait, stateIs("undelivered")))
	if st.Content == nil || *st.Content != "kept text\n" || !strings.Contains(st.Message, "nothing was written") {
		t.Fatalf("undelivered %+v", st)
	}
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		t.Fatal("something wrote the file")
	}
}

func TestChangeOnDiskUnderAnOpenDiffNeedsAnExplicitChoice(t *testing.T) {
	s := startWithStates(t)
	path := s.file(t, "moving.txt", "v1\n")
	a := s.cli(t)
	mustOpen(t, a, path, "proposal\n")
	id := opened(s)[0].DiffID

	write(t, path, "v2 from another tool\n")
	st := decodeState(t, s.ed.WaitFor(t, "diff/state", wait, func(p json.RawMessage) bool {
		var st protocol.DiffStateParams
		return json.Unmarshal(p, &st) == nil && st.State == "changedOnDisk" && st.DiskContent != nil && *st.DiskContent == "v2 from another tool\n"
	}))
	if st.DiskContent == nil || *st.DiskContent != "v2 from another tool\n" || !strings.Contains(st.UnifiedDiff, "-v2 from another tool") {
		t.Fatalf("changedOnDisk %+v", st)
	}
	// Accepting without the explicit choice is refused, and A hears nothing.
	mark := s.ed.Len()
	s.ed.Notify(t, "diff/accepted", map[string]any{"filePath": path, "content": "proposal\n", "diffId": id})
	s.ed.WaitFrom(t, mark, "diff/state", wait, stateIs("needsConfirmation"))
	quiet(t, a, "A")
	s.ed.Notify(t, "diff/accepted", map[string]any{"filePath": path, "content": "proposal\n", "diffId": id, "overDiskChange": true})
	a.WaitFor(t, "ide/diffAccepted", wait, nil)
}

// TestAPlainAcceptReportsNoChangeOnDisk: accepting a proposal whose file
// nobody touched tells the editor nothing about the disk; a real change,
// and the file put back as it was, still are.
func TestAPlainAcceptReportsNoChangeOnDisk(t *testing.T) {
	s := startWithStates(t)
	path := s.file(t, "plain.txt", "v1\n")
	a := s.cli(t)
	mustOpen(t, a, path, "proposal\n")
	id := opened(s)[0].DiffID
	s.ed.Notify(t, "diff/accepted", map[string]any{"filePath": path, "content": "proposal\n", "diffId": id})
	a.WaitFor(t, "ide/diffAccepted", wait, nil)
	var st map[string]any
	if err := s.ed.Call(wait, "status/get", nil, &st); err != nil { // every note sent before it is read
		t.Fatal(err)
	}
	if states := s.ed.All("diff/state"); len(states) != 0 {
		t.Fatalf("a plain accept told the editor about the disk: %s", states[0].Params)
	}

	write(t, path, "v1, accepted\n")
	mustOpen(t, a, path, "second proposal\n")
	second := opened(s)[1].DiffID
	write(t, path, "v2 from another tool\n")
	s.ed.WaitFor(t, "diff/state", wait, stateIs("changedOnDisk"))
	write(t, path, "v1, accepted\n")
	back := decodeState(t, s.ed.WaitFor(t, "diff/state", wait, stateIs("unchangedOnDisk")))
	if back.DiffID != second || !strings.Contains(back.Message, "back to what it was") {
		t.Fatalf("unchangedOnDisk %+v, want it for diff %d", back, second)
	}
	before := len(s.ed.All("diff/state"))
	s.ed.Notify(t, "diff/accepted", map[string]any{"filePath": path, "content": "second proposal\n", "diffId": second})
	a.WaitFor(t, "ide/diffAccepted", wait, func(p json.RawMessage) bool { return strings.Contains(string(p), "second proposal") })
	if err := s.ed.Call(wait, "status/get", nil, &st); err != nil {
		t.Fatal(err)
	}
	if states := s.ed.All("diff/state"); len(states) != before {
		t.Fatalf("the file was put back, yet the accept told the editor about the disk again: %s", states[len(states)-1].Params)
	}
}

// TestAProposalMadeAgainStillSeesChangesOnDisk: a CLI that proposes the
// same file again replaces its own proposal; the file stays watched, and a
// change on disk is reported against the new proposal.
func TestAProposalMadeAgainStillSeesChangesOnDisk(t *testing.T) {
	s := startWithStates(t)
	path := s.file(t, "again.txt", "v1\n")
	a := s.cli(t)
	mustOpen(t, a, path, "first proposal\n")
	mustOpen(t, a, path, "second proposal\n")
	shown := opened(s)
	if len(shown) != 2 || shown[1].DiffID == shown[0].DiffID {
		t.Fatalf("want two diffs shown, the second a new proposal: %+v", shown)
	}
	write(t, path, "v2 from another tool\n")
	st := decodeState(t, s.ed.WaitFor(t, "diff/state", wait, stateIs("changedOnDisk")))
	if st.DiffID != shown[1].DiffID || st.DiskContent == nil || *st.DiskContent != "v2 from another tool\n" {
		t.Fatalf("changedOnDisk %+v, want it for diff %d", st, shown[1].DiffID)
	}
}

func TestDeleteOnDiskUnderAnOpenDiffIsShown(t *testing.T) {
	s := startWithStates(t)
	path := s.file(t, "doomed.txt", "here\n")
	a := s.cli(t)
	mustOpen(t, a, path, "proposal\n")
	id := opened(s)[0].DiffID
	os.Remove(path)
	st := decodeState(t, s.ed.WaitFor(t, "diff/state", wait, stateIs("deletedOnDisk")))
	if st.DiskContent != nil || !strings.Contains(st.Message, "create it again") {
		t.Fatalf("deletedOnDisk %+v", st)
	}
	mark := s.ed.Len()
	s.ed.Notify(t, "diff/accepted", map[string]any{"filePath": path, "content": "proposal\n", "diffId": id})
	s.ed.WaitFrom(t, mark, "diff/state", wait, stateIs("needsConfirmation"))
	// Restored as it was: the diff is back to normal.
	write(t, path, "here\n")
	s.ed.WaitFor(t, "diff/state", wait, stateIs("unchangedOnDisk"))
	s.ed.Notify(t, "diff/accepted", map[string]any{"filePath": path, "content": "proposal\n", "diffId": id})
	a.WaitFor(t, "ide/diffAccepted", wait, nil)
}

func TestProposalOutsideTheWorkspaceIsShownWithANote(t *testing.T) {
	s := startWithStates(t)
	path := filepath.Join(s.sb.Home, "elsewhere.txt")
	a := s.cli(t)
	mustOpen(t, a, path, "x\n")
	dr := opened(s)[0]
	if !dr.OutsideWorkspace || !strings.Contains(dr.Notice, "outside every workspace folder") || !strings.Contains(dr.Title, "outside the workspace") {
		t.Fatalf("diff/open for a file outside the workspace: %+v", dr)
	}
	inside := filepath.Join(s.sb.Workspace, "inside.txt")
	b := s.cli(t)
	mustOpen(t, b, inside, "y\n")
	if dr := opened(s)[1]; dr.OutsideWorkspace || dr.Notice != "" || strings.Contains(dr.Title, "outside") {
		t.Fatalf("a file inside the workspace got the note: %+v", dr)
	}
}

func TestDiffShownAfterTheTimeoutIsClosedAndItsDecisionExpires(t *testing.T) {
	if testing.Short() {
		t.Skip("waits for the 10 s editor timeout")
	}
	s := startWithStates(t)
	path := filepath.Join(s.sb.Workspace, "late.txt")
	a := s.cli(t)
	release := make(chan struct{})
	var once sync.Once
	t.Cleanup(func() { once.Do(func() { close(release) }) })
	s.ed.SetHandler(func(method string, params json.RawMessage) (any, error) {
		if method == "diff/open" {
			<-release // the editor shows it, but too late
			return struct{}{}, nil
		}
		return map[string]any{"content": nil}, nil
	})
	res, err := a.OpenDiff(context.Background(), path, "x\n")
	if err != nil || !res.IsError {
		t.Fatalf("openDiff past the timeout: %v %+v", err, res)
	}
	once.Do(func() { close(release) })
	// The sidecar closes the view it gave up on.
	s.ed.WaitFor(t, "request:diff/close", wait, func(p json.RawMessage) bool { return strings.Contains(string(p), "late.txt") })
	// An accept that still comes is refused, and the user is told.
	s.ed.Notify(t, "diff/accepted", map[string]any{"filePath": path, "content": "x\n", "diffId": opened(s)[0].DiffID})
	st := decodeState(t, s.ed.WaitFor(t, "diff/state", wait, stateIs("expired")))
	if !strings.Contains(st.Message, "expired; nothing was written") || st.Content == nil {
		t.Fatalf("expired %+v", st)
	}
	quiet(t, a, "A")
}

func TestAQueuedProposalLeavesTheQueueWhenWithdrawnOrItsCLIGoes(t *testing.T) {
	s := startWithStates(t)
	path := filepath.Join(s.sb.Workspace, "busy.txt")
	a := s.cli(t)
	b := s.cli(t)
	c := s.cli(t)
	mustOpen(t, a, path, "A\n")
	mustOpen(t, b, path, "B\n")
	mustOpen(t, c, path, "C\n")
	queuedIs := func(n int) func(json.RawMessage) bool {
		return func(p json.RawMessage) bool {
			st := protocol.DiffStateParams{Queued: -1}
			return json.Unmarshal(p, &st) == nil && st.State == "queued" && st.Queued == n
		}
	}
	s.ed.WaitFor(t, "diff/state", wait, queuedIs(2))

	// B withdraws its queued proposal (the CLI closes it, e.g. the user
	// answered in the terminal): nothing on screen changes, the count drops.
	mark := s.ed.Len()
	if got := b.CloseDiffContent(t, context.Background(), path); got == nil || *got != "B\n" {
		t.Fatalf("closeDiff of a queued proposal returned %v", got)
	}
	s.ed.WaitFrom(t, mark, "diff/state", wait, queuedIs(1))
	// C goes away: its queued proposal is dropped, not shown later.
	mark = s.ed.Len()
	c.Session.Close()
	s.ed.WaitFrom(t, mark, "diff/state", wait, queuedIs(0))

	s.ed.Notify(t, "diff/rejected", map[string]any{"filePath": path})
	a.WaitFor(t, "ide/diffRejected", wait, nil)
	var st struct{ OpenDiffs []string }
	if !testkit.Poll(wait, func() bool {
		s.ed.Call(wait, "status/get", nil, &st)
		return len(st.OpenDiffs) == 0
	}) {
		t.Fatalf("a withdrawn or orphaned queued proposal was shown: %v", st.OpenDiffs)
	}
	if n := len(opened(s)); n != 1 {
		t.Fatalf("%d diffs shown, want only A's", n)
	}
}

func TestAStaleDecisionForAnEarlierProposalOfTheSameFileExpires(t *testing.T) {
	s := startWithStates(t)
	path := filepath.Join(s.sb.Workspace, "again.txt")
	a := s.cli(t)
	mustOpen(t, a, path, "first\n")
	mustOpen(t, a, path, "second\n") // the same CLI replaces its own proposal
	shown := opened(s)
	if len(shown) != 2 || shown[0].DiffID == shown[1].DiffID {
		t.Fatalf("diff/open requests %+v", shown)
	}
	// An accept for the first view arrives late: it must not accept the
	// second proposal, whose text the user never saw.
	s.ed.Notify(t, "diff/accepted", map[string]any{"filePath": path, "content": "first\n", "diffId": shown[0].DiffID})
	st := decodeState(t, s.ed.WaitFor(t, "diff/state", wait, stateIs("expired")))
	if st.DiffID != shown[0].DiffID || !strings.Contains(st.Message, "nothing was written") {
		t.Fatalf("expired %+v", st)
	}
	quiet(t, a, "A")
	s.ed.Notify(t, "diff/accepted", map[string]any{"filePath": path, "content": "second\n", "diffId": shown[1].DiffID})
	raw := a.WaitFor(t, "ide/diffAccepted", wait, nil)
	if !strings.Contains(string(raw), "second") {
		t.Fatalf("got %s", raw)
	}
	// A diffId of 0 names nothing and is refused as bad input.
	s.ed.Notify(t, "diff/rejected", map[string]any{"filePath": path, "diffId": 0})
	var status struct{ Sessions int }
	if err := s.ed.Call(wait, "status/get", nil, &status); err != nil {
		t.Fatalf("the link broke on a bad diffId: %v", err)
	}
}

func TestAnAcceptJustAfterAChangeOnDiskIsNotTakenAsConfirmed(t *testing.T) {
	s := startWithStates(t)
	path := s.file(t, "instant.txt", "v1\n")
	a := s.cli(t)
	mustOpen(t, a, path, "proposal\n")
	id := opened(s)[0].DiffID
	// No waiting for the watcher: the accept follows the write at once.
	write(t, path, "v2\n")
	s.ed.Notify(t, "diff/accepted", map[string]any{"filePath": path, "content": "proposal\n", "diffId": id})
	s.ed.WaitFor(t, "diff/state", wait, stateIs("needsConfirmation"))
	quiet(t, a, "A")
}

// TestAnEditorWithoutUnifiedDiffsGetsNone: a plugin that said
// capabilities.unifiedDiff false (it shows the two texts side by side) gets
// diff/open and diff/state without a unified diff, and everything else as
// before; one that said nothing gets it.
func TestAnEditorWithoutUnifiedDiffsGetsNone(t *testing.T) {
	sb := testkit.NewSandbox(t)
	ed := testkit.StartEditor(t, sb, testkit.EditorOptions{})
	res := ed.Initialize(t, sb, map[string]any{"capabilities": map[string]any{"diffStates": true, "unifiedDiff": false}})
	s := started{sb, ed, res}
	path := s.file(t, "side.txt", "one\ntwo\n")
	a := s.cli(t)
	mustOpen(t, a, path, "one\n2\n")
	shown := opened(s)
	if len(shown) != 1 || shown[0].UnifiedDiff != "" || shown[0].NewContent != "one\n2\n" ||
		shown[0].OriginalContent == nil || *shown[0].OriginalContent != "one\ntwo\n" {
		t.Fatalf("diff/open for an editor without unified diffs: %+v", shown)
	}
	write(t, path, "one\ntwo\nthree\n")
	st := decodeState(t, s.ed.WaitFor(t, "diff/state", wait, stateIs("changedOnDisk")))
	if st.UnifiedDiff != "" || st.DiskContent == nil || *st.DiskContent != "one\ntwo\nthree\n" {
		t.Fatalf("changedOnDisk for an editor without unified diffs: %+v", st)
	}

	other := startWithStates(t)
	path = other.file(t, "side.txt", "one\ntwo\n")
	mustOpen(t, other.cli(t), path, "one\n2\n")
	if got := opened(other); len(got) != 1 || !strings.Contains(got[0].UnifiedDiff, "-two\n+2\n") {
		t.Fatalf("diff/open for an editor that did not say: %+v", got)
	}
}
