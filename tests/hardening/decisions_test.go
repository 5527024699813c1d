package hardening

import (
	"context"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gemini-ide-companion/gemini-ide-companion/tests/testkit"
)

// Gemini CLI never sends DELETE: when it exits, or the user runs
// /ide disable, its event stream just closes. These tests play exactly that
// with a diff open in the editor, and check that the user's decision is never
// silently lost: it reaches a CLI, or the user is told it could not.

// cliWithDiff connects a raw CLI session, opens its event stream and asks
// the editor to show a diff for path.
func cliWithDiff(t *testing.T, s *sidecar, path string) (*rawClient, string, *stream) {
	t.Helper()
	ctx := context.Background()
	c := newRawClient(t, s)
	sid, err := c.connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	st, err := c.openStream(ctx, sid)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(st.drop)
	if _, ok := st.notes.wait("ide/contextUpdate", wait, nil); !ok {
		t.Fatal("no context update on a new event stream")
	}
	res, err := c.callTool(ctx, sid, 2, "openDiff", map[string]string{"filePath": path, "newContent": "proposed\n"})
	if err != nil || res.IsError {
		t.Fatalf("openDiff: %v %+v", err, res)
	}
	s.ed.WaitFor(t, "status", wait, has(`"connectedClients":1`))
	return c, sid, st
}

// diffStillOpen asserts the editor still shows the diff for path: the
// sidecar never asked it to close, and it is still listed as open.
func diffStillOpen(t *testing.T, s *sidecar, path string) {
	t.Helper()
	for _, r := range s.ed.Requests() {
		if r.Method == "diff/close" {
			t.Fatalf("the sidecar closed the diff in the editor when the CLI left: %s", r.Params)
		}
	}
	if st := s.status(t); !slices.Contains(st.OpenDiffs, path) {
		t.Fatalf("diff for %s no longer open: %v", path, st.OpenDiffs)
	}
}

func TestDecisionAfterTheCLIDroppedItsStreamIsReportedUndelivered(t *testing.T) {
	t.Parallel()
	s := start(t)
	path := filepath.Join(s.sb.Workspace, "left.txt")
	_, _, st := cliWithDiff(t, s, path)

	mark := s.ed.Len()
	st.drop()
	// After the grace period the session is gone, and the editor is told
	// at once that its proposal is orphaned.
	s.ed.WaitFrom(t, mark, "status", wait, has(`"connectedClients":0`))
	s.ed.WaitFrom(t, mark, "log", wait, has("left.txt is gone"))
	s.pollStatus(t, wait, "session removed", func(st status) bool { return st.Sessions == 0 })
	diffStillOpen(t, s, path)

	s.ed.Notify(t, "diff/accepted", map[string]any{"filePath": path, "content": "proposed, edited\n"})
	s.ed.WaitFrom(t, mark, "log", wait, has("did not reach the Gemini CLI session"))

	// A later CLI never proposed it: it must not receive the decision.
	again := testkit.ConnectCLI(t, s.res.Port, s.res.AuthToken)
	again.WaitFor(t, "ide/contextUpdate", wait, nil)
	if _, err := again.Session.ListTools(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	if n := len(again.All("ide/diffAccepted")); n != 0 {
		t.Fatalf("a decision for a gone session's proposal reached another CLI (%d)", n)
	}
	s.noCrash(t)
}

func TestDecisionWhileTheStreamIsDownReachesTheSameSessionWhenItReturns(t *testing.T) {
	t.Parallel()
	s := start(t)
	path := filepath.Join(s.sb.Workspace, "blip.txt")
	c, sid, st := cliWithDiff(t, s, path)

	// A network blip: the stream drops and the CLI reopens it at once.
	st.drop()
	s.waitStreamClosed(t, st)
	s.ed.Notify(t, "diff/rejected", map[string]any{"filePath": path})
	s.pollStatus(t, wait, "diff resolved", func(st status) bool { return len(st.OpenDiffs) == 0 })
	back, err := c.openStream(context.Background(), sid)
	if err != nil {
		t.Fatalf("reopen stream within the grace period: %v", err)
	}
	t.Cleanup(back.drop)
	raw, ok := back.notes.wait("ide/diffRejected", wait, nil)
	if !ok || !strings.Contains(string(raw), "blip.txt") {
		t.Fatalf("the decision taken while the stream was down never arrived: %v", back.notes.all())
	}
	// Nothing was announced as lost, and the session never counted as gone.
	for _, n := range s.ed.All("log") {
		if strings.Contains(string(n.Params), "No Gemini CLI") {
			t.Fatalf("delivered decision announced as undelivered: %s", n.Params)
		}
	}
	for _, n := range s.ed.All("status") {
		if strings.Contains(string(n.Params), `"connectedClients":0`) {
			t.Fatal("a stream that came back within the grace period counted as a disconnect")
		}
	}
	s.noCrash(t)
}

func TestDecisionDuringTheGracePeriodIsNotLostWhenTheCLIIsGone(t *testing.T) {
	t.Parallel()
	s := start(t)
	path := filepath.Join(s.sb.Workspace, "grace.txt")
	_, _, st := cliWithDiff(t, s, path)

	// The CLI exits; the user accepts in the editor a moment later, before
	// the sidecar has concluded that the CLI is gone.
	mark := s.ed.Len()
	st.drop()
	s.waitStreamClosed(t, st)
	s.ed.Notify(t, "diff/accepted", map[string]any{"filePath": path, "content": "accepted in the gap\n"})
	s.pollStatus(t, wait, "diff resolved", func(st status) bool { return len(st.OpenDiffs) == 0 })
	if st := s.status(t); st.Sessions != 1 {
		t.Fatalf("precondition: the session should still be in its grace period, status %+v", st)
	}

	// When the session expires without having read it, the user is told
	// it did not reach the CLI.
	s.ed.WaitFrom(t, mark, "status", wait, has(`"connectedClients":0`))
	s.ed.WaitFrom(t, mark, "log", wait, has("did not reach the Gemini CLI session"))
	s.noCrash(t)
}

func TestDecisionNeverReachesAnotherCLIWhenTheProposerLeaves(t *testing.T) {
	t.Parallel()
	s := start(t)
	path := filepath.Join(s.sb.Workspace, "two.txt")
	stays := testkit.ConnectCLI(t, s.res.Port, s.res.AuthToken)
	_, _, st := cliWithDiff(t, s, path)
	s.ed.WaitFor(t, "status", wait, has(`"connectedClients":2`))

	mark := s.ed.Len()
	st.drop()
	s.ed.Notify(t, "diff/accepted", map[string]any{"filePath": path, "content": "x\n"})
	s.ed.WaitFrom(t, mark, "log", wait, has("did not reach the Gemini CLI session"))
	s.ed.WaitFor(t, "status", wait, has(`"connectedClients":1`))
	// The CLI that stayed never proposed it: the CLI matches decisions by
	// path alone, so receiving it would resolve the wrong wait.
	if _, err := stays.Session.ListTools(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	if n := len(stays.All("ide/diffAccepted")); n != 0 {
		t.Fatalf("the decision went to a CLI that did not propose it (%d)", n)
	}
	s.noCrash(t)
}

// A decision written into the socket of a CLI that has stopped handling its
// stream is not delivered: the CLI never saw it. This CLI's stream receives
// the bytes but answers nothing (not even the ping after it), then dies.
func TestDecisionAHungCLINeverHandledIsReportedUndelivered(t *testing.T) {
	t.Parallel()
	s := start(t)
	path := filepath.Join(s.sb.Workspace, "hung.txt")
	c, sid, st := cliWithDiff(t, s, path)
	st.drop()
	// The sidecar takes a new stream only once it has let go of the old.
	s.waitStreamClosed(t, st)

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req, err := c.request(ctx, http.MethodGet, sid, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Accept", "text/event-stream")
	resp, err := c.hc.Do(req)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("hung stream: %v %v", err, resp)
	}
	seen := make(chan struct{})
	go func() {
		defer resp.Body.Close()
		var got []byte
		buf := make([]byte, 4096)
		for {
			n, err := resp.Body.Read(buf)
			got = append(got, buf[:n]...)
			if strings.Contains(string(got), "ide/diffAccepted") {
				close(seen)
				return // and never reads or answers again
			}
			if err != nil {
				return
			}
		}
	}()

	mark := s.ed.Len()
	s.ed.Notify(t, "diff/accepted", map[string]any{"filePath": path, "content": "accepted, never handled\n"})
	select {
	case <-seen:
	case <-time.After(wait):
		t.Fatal("the decision was never written to the stream")
	}
	cancel() // the CLI dies
	s.ed.WaitFrom(t, mark, "log", wait, has("did not reach the Gemini CLI session"))
	s.noCrash(t)
}
