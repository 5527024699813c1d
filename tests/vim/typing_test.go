//go:build unix

package vim

import (
	"strings"
	"syscall"
	"testing"

	"github.com/gemini-ide-companion/gemini-ide-companion/tests/testkit"
	"github.com/gemini-ide-companion/gemini-ide-companion/tests/tmuxdrive"
)

// Typing never waits on the sidecar: with the sidecar stopped (SIGSTOP, so
// it reads nothing and its pipe fills up with large selections), keys
// typed in the real Vim still edit the buffer; once the sidecar runs
// again, the CLI gets the latest cursor.
func TestTypingDoesNotWaitForTheSidecar(t *testing.T) {
	tmuxdrive.Require(t)
	sb := testkit.NewSandbox(t)
	line := strings.Repeat("x", 99) + "\n"
	a := sb.WriteFile(t, "big.txt", strings.Repeat(line, 3000))
	v := startVim(t, sb, Options{UI: true, Args: []string{"big.txt"}, Config: map[string]any{"auto_start": true, "coalesce_ms": 0}})
	v.WaitRunning(t)
	cli := testkit.Connect(t, sb, waitTimeout)
	testkit.WaitActive(t, cli, testkit.Active{Path: a, Line: 1, Col: 1}, waitTimeout)
	pid := int(v.Eval(t, "gemini_companion#link#State().pid").(float64))
	if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = syscall.Kill(pid, syscall.SIGCONT) })

	// Each move sends a selection cut to the policy's limit (64 KiB): far
	// more than a pipe holds.
	v.pane.Keys(t, "g", "g", "V", "G")
	for i := 0; i < 20; i++ {
		v.pane.Keys(t, "k", "j")
	}
	v.pane.Keys(t, "Escape", "g", "g", "0", "i")
	v.pane.Keys(t, "-l", "typed while the sidecar sleeps")
	v.pane.Keys(t, "Escape")
	v.WaitFor(t, "the typed text", `getline(1) =~# '^typed while the sidecar sleeps' && mode() ==# 'n'`, waitTimeout)
	v.pane.Keys(t, "5", "G")

	if err := syscall.Kill(pid, syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	testkit.WaitActive(t, cli, testkit.Active{Path: a, Line: 5, Col: 1}, waitTimeout)
	if got := v.Eval(t, "gemini_companion#link#State().pid"); got != float64(pid) {
		t.Errorf("the sidecar changed (%v, was %d): the link broke", got, pid)
	}
}
