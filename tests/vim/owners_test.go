package vim

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gemini-ide-companion/gemini-ide-companion/tests/testkit"
)

// Two CLIs propose changes to the same file: the second waits, and the
// shown proposal says so ("1 more proposal queued"); once the first is
// decided the second opens, and each decision goes to the CLI that made
// the proposal.
func TestQueuedProposalsShowOneAfterTheOther(t *testing.T) {
	sb, a, v := vimOnOneFile(t)
	first := testkit.Connect(t, sb, waitTimeout)
	second := testkit.Connect(t, sb, waitTimeout)
	first.MustOpenDiff(t, a, "one\nfirst\n")
	ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
	defer cancel()
	// The second openDiff succeeds at once: its CLI waits for the decision.
	if res, err := second.OpenDiff(ctx, a, "one\nsecond\n"); err != nil || res.IsError {
		t.Fatalf("second openDiff: %v %+v", err, res)
	}
	v.WaitFor(t, "the queue label", fmt.Sprintf(`GicDiffTab(%s).state.queued == 1`, vimString(a)), waitTimeout)
	if s := diffTab(t, v, a); !strings.Contains(s.Statusline, "1 more proposal queued") || strings.Join(s.Right, "\n") != "one\nfirst" {
		t.Errorf("the shown proposal: %q, statusline %q", s.Right, s.Statusline)
	}
	inProposal(t, v, a, "write")
	first.WaitFor(t, "ide/diffAccepted", waitTimeout, nil)
	v.WaitFor(t, "the second proposal", fmt.Sprintf(`GicDiffTab(%s).right == ['one', 'second']`, vimString(a)), waitTimeout)
	if n := len(second.All("ide/diffAccepted")); n != 0 {
		t.Errorf("the second CLI got the first CLI's decision")
	}
	inProposal(t, v, a, "quit")
	second.WaitFor(t, "ide/diffRejected", waitTimeout, nil)
	waitNoDiffTab(t, v, a)
	if n := len(first.All("ide/diffRejected")); n != 0 {
		t.Errorf("the first CLI got the second CLI's rejection")
	}
}

// The CLI that proposed a change goes away: the view says it is orphaned.
func TestOrphanedProposalIsLabelled(t *testing.T) {
	sb, a, v := vimOnOneFile(t)
	cli := testkit.Connect(t, sb, waitTimeout)
	cli.MustOpenDiff(t, a, "one\ntwo\n")
	cli.Session.Close()
	deadline := 3 * waitTimeout // a session counts as gone 5 s after its stream closed
	v.WaitFor(t, "the orphaned label", fmt.Sprintf(`GicDiffTab(%s).state.orphaned`, vimString(a)), deadline)
	if s := diffTab(t, v, a); !strings.Contains(s.Statusline, "ORPHANED") {
		t.Errorf("statusline %q does not say the proposal is orphaned", s.Statusline)
	}
}

// A proposal for a file under no workspace folder says so, in its status
// line and in a message.
func TestProposalOutsideTheWorkspaceSaysSo(t *testing.T) {
	sb := testkit.NewSandbox(t)
	outside := filepath.Join(sb.Home, "notes.txt")
	if err := os.WriteFile(outside, []byte("one\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	v := startVim(t, sb, Options{Config: map[string]any{"auto_start": true}})
	v.WaitRunning(t)
	cli := testkit.Connect(t, sb, waitTimeout)
	cli.MustOpenDiff(t, outside, "one\ntwo\n")
	v.WaitFor(t, "the outside-workspace label", fmt.Sprintf(`GicDiffTab(%s).state.outside_workspace`, vimString(outside)), waitTimeout)
	if s := diffTab(t, v, outside); !strings.Contains(s.Statusline, "outside the workspace") {
		t.Errorf("statusline %q does not say the file is outside the workspace", s.Statusline)
	}
	v.WaitNote(t, "outside", waitTimeout)
}
