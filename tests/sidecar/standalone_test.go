package sidecar

import (
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gemini-ide-companion/gemini-ide-companion/tests/testkit"
)

// standalone runs `gemini-ide-companion serve` on the sandbox's workspace,
// its answers typed on a pipe (line mode, as when input is not a
// terminal), and connects a CLI to it.
type standalone struct {
	proc *testkit.Process
	in   io.Writer
	cli  *testkit.CLI
}

func startStandalone(t *testing.T) (*standalone, *testkit.Sandbox) {
	t.Helper()
	sb := testkit.NewSandbox(t)
	cmd := exec.Command(testkit.Binary(t), "serve", "--workspace", sb.Workspace)
	cmd.Env = testkit.WithEnv(sb.Env(), "NO_COLOR=1")
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	p := testkit.StartProcess(t, cmd)
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		p.WaitOrKill(t, 10*time.Second, p.Output.String)
	})
	cli := testkit.Connect(t, sb, 20*time.Second)
	return &standalone{proc: p, in: in, cli: cli}, sb
}

// waitOutput waits until the terminal shows want after its first from
// bytes, and returns where it ends.
func (s *standalone) waitOutput(t *testing.T, from int, want string) int {
	t.Helper()
	var at int
	if !testkit.Poll(20*time.Second, func() bool {
		out := s.proc.Output.String()
		i := strings.Index(out[from:], want)
		at = from + i + len(want)
		return i >= 0
	}) {
		t.Fatalf("the companion's terminal never showed %q after byte %d:\n%s", want, from, s.proc.Output.String())
	}
	return at
}

// TestTerminalAcceptOverAChangeOnDiskAsksFirst: the file changes on disk
// while its proposal waits in the terminal. Accepting it then asks whether
// to overwrite that change, as the editors do; "no" keeps the proposal
// open, and only an explicit "yes" sends the accept to the CLI.
func TestTerminalAcceptOverAChangeOnDiskAsksFirst(t *testing.T) {
	s, sb := startStandalone(t)
	path := filepath.Join(sb.Workspace, "notes.txt")
	if err := os.WriteFile(path, []byte("one\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	s.cli.MustOpenDiff(t, path, "one\ntwo\n")
	at := s.waitOutput(t, 0, "+two")
	at = s.waitOutput(t, at, "Accept [a]")

	if err := os.WriteFile(path, []byte("one\nchanged by hand\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	io.WriteString(s.in, "a\n")
	at = s.waitOutput(t, at, "notes.txt changed on disk after this proposal was shown")
	at = s.waitOutput(t, at, "Accept anyway, over the file on disk? [y] yes, [n] no")
	if got := s.cli.All("ide/diffAccepted"); len(got) != 0 {
		t.Fatalf("the accept reached the CLI before the user confirmed it: %s", got[0].Params)
	}

	io.WriteString(s.in, "n\n")
	at = s.waitOutput(t, at, "Not accepted; the proposal is still open.")
	at = s.waitOutput(t, at, "Accept [a]")
	io.WriteString(s.in, "a\n")
	at = s.waitOutput(t, at, "Accept anyway")
	io.WriteString(s.in, "y\n")
	s.waitOutput(t, at, "Accepted: Gemini CLI writes the file.")

	got := s.cli.WaitFor(t, "ide/diffAccepted", 20*time.Second, nil)
	if p, content := testkit.DiffNote(t, got); p != path || content != "one\ntwo\n" {
		t.Fatalf("accepted %q with %q", p, content)
	}
	if n := len(s.cli.All("ide/diffAccepted")) + len(s.cli.All("ide/diffRejected")); n != 1 {
		t.Fatalf("the CLI got %d decisions, want 1", n)
	}
}
