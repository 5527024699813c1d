package acp_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gemini-ide-companion/gemini-ide-companion/tests/fakegemini"
	"github.com/gemini-ide-companion/gemini-ide-companion/tests/testkit"
)

// acpx runs acpx (flags are gemini-a2a-acp's) (on Node 22) with gemini-a2a-acp as its agent, in the
// sandbox's workspace, and returns its output.
func acpx(t *testing.T, sb *sandbox, flags string, args ...string) (string, error) {
	t.Helper()
	node, dir := node22(t)
	agentCmd := strings.TrimSpace("gemini-a2a-acp --log-file " + filepath.Join(sb.Home, "acp.log") + " " + flags)
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, append([]string{filepath.Join(dir, "node_modules", "acpx", "dist", "cli.js"), "--agent", agentCmd, "--cwd", sb.Workspace}, args...)...)
	cmd.Dir = sb.Workspace
	cmd.Env = append(os.Environ(), sb.env()...)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// acpx, a second real ACP client (headless, on Node 22), runs
// gemini-a2a-acp as its custom agent (--agent): a one-shot edit approved
// with --approve-all lands on disk through acpx's own fs/write_text_file
// (the proposal shown as a diff), a shell command is denied with
// --deny-all and does not run, and a persistent acpx session whose agent
// process has exited is loaded again (session/load) in a new one, with the
// conversation kept, when the A2A server is the user's (--agent URL).
func TestAcpx(t *testing.T) {
	t.Parallel()
	sb := newSandbox(t)

	t.Run("ExecEditApproved", func(t *testing.T) {
		file := filepath.Join(sb.Workspace, "hello.txt")
		if err := osWrite(file, "hello\n"); err != nil {
			t.Fatal(err)
		}
		sb.Fake.Reply(fakegemini.Text("Writing."), fakegemini.Call("write_file", map[string]any{"file_path": file, "content": "hello from acpx"}))
		sb.Fake.Reply(fakegemini.Text("Wrote it."))
		out, err := acpx(t, sb, "", "--format", "json", "--approve-all", "exec", "write hello")
		if err != nil {
			t.Fatalf("acpx exec: %v\n%s", err, out)
		}
		if got, _ := testkit.ReadFile(t, file); got != "hello from acpx\n" {
			t.Fatalf("file %q after acpx approved the edit\n%s", got, out)
		}
		for _, want := range []string{`"method":"session/request_permission"`, `"kind":"edit"`, `"type":"diff"`, `"oldText":"hello\n"`,
			`"method":"fs/write_text_file"`, `"status":"completed"`, "Wrote it.", `"stopReason":"end_turn"`} {
			if !strings.Contains(out, want) {
				t.Fatalf("acpx's output lacks %s:\n%s", want, out)
			}
		}
	})

	t.Run("ExecShellDenied", func(t *testing.T) {
		sb.Fake.Reply(fakegemini.Call("run_shell_command", map[string]any{"command": "touch acpx-denied.txt"}))
		out, err := acpx(t, sb, "", "--format", "json", "--deny-all", "exec", "touch it")
		if _, exists := testkit.ReadFile(t, filepath.Join(sb.Workspace, "acpx-denied.txt")); exists {
			t.Fatalf("the denied command ran\n%s", out)
		}
		if !strings.Contains(out, `"kind":"execute"`) || !strings.Contains(out, `"optionId":"cancel"`) || !strings.Contains(out, `"status":"failed"`) {
			t.Fatalf("acpx exec --deny-all (err %v): no execute permission denied with cancel and the call failed:\n%s", err, out)
		}
	})

	t.Run("SessionLoadedAgain", func(t *testing.T) {
		srv := sb.startAgent(t)
		flags := "--agent " + srv.URL
		sb.Fake.Reply(fakegemini.Text("First answer."))
		sb.Fake.Reply(fakegemini.Text("Second answer."))
		if out, err := acpx(t, sb, flags, "--ttl", "1", "sessions", "new"); err != nil {
			t.Fatalf("acpx sessions new: %v\n%s", err, out)
		}
		if out, err := acpx(t, sb, flags, "--ttl", "1", "--format", "json", "prompt", "first question"); err != nil || !strings.Contains(out, "First answer.") {
			t.Fatalf("acpx prompt: %v\n%s", err, out)
		}
		// acpx's session owner (and with it gemini-a2a-acp) exits after
		// its one-second idle time. The owner outlives its agent by its
		// own shutdown, and a prompt that reaches it meanwhile is refused
		// ("Queue owner is shutting down"): wait for both to be gone.
		testkit.WaitNoProcess(t, filepath.Join(sb.Home, "acp.log"))
		testkit.WaitNoProcessIn(t, "__queue-owner", sb.Workspace) // acpx starts it in its folder
		out, err := acpx(t, sb, flags, "--ttl", "1", "--format", "json", "prompt", "second question")
		if err != nil || !strings.Contains(out, `"method":"session/load"`) || !strings.Contains(out, "Second answer.") {
			t.Fatalf("acpx prompt after its agent exited: %v; want session/load and the answer\n%s", err, out)
		}
		if strings.Contains(out, `"method":"session/new"`) {
			t.Fatalf("acpx had to start a new session:\n%s", out)
		}
		reqs := sb.Fake.Requests()
		if last := reqs[len(reqs)-1].Text(); !strings.Contains(last, "first question") {
			t.Fatalf("the conversation was lost across the restart: %q", last)
		}
	})
}
