package agentpanel

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gemini-ide-companion/gemini-ide-companion/tests/fakegemini"
	"github.com/gemini-ide-companion/gemini-ide-companion/tests/testkit"
	"github.com/gemini-ide-companion/gemini-ide-companion/tests/tmuxdrive"
)

// initLua loads the plugin from this checkout and starts the sidecar under
// test; the agent panel keeps its default settings (the sidecar finds the
// A2A server on PATH, installed as users install it). Messages go to a
// file (for diagnostics) instead of the screen, so no hit-enter prompt can
// swallow the keys the test types.
const initLua = `
vim.opt.rtp:prepend(%q)
vim.o.swapfile = false
vim.o.shada = ""
local notes = %q
vim.notify = function(msg, level)
  local f = io.open(notes, "a")
  if f then f:write(tostring(msg):gsub("\n", " ") .. "\n") f:close() end
end
require("gemini_companion").setup({ sidecar = { cmd = %q, log_level = "debug", log_file = %q } })
`

// nv is Neovim in tmux with the plugin.
type nv struct {
	pane  *tmuxdrive.Pane
	w     *world
	notes string
	log   string
}

func startNvim(t *testing.T, w *world, args ...string) *nv {
	t.Helper()
	nvimBin, err := exec.LookPath("nvim")
	if err != nil {
		tmuxdrive.Missing(t, "nvim is not installed (apt-get install neovim)")
	}
	n := &nv{w: w, notes: filepath.Join(w.sb.TmpDir, "notes.txt"), log: filepath.Join(w.sb.TmpDir, "sidecar.log")}
	initPath := filepath.Join(w.sb.TmpDir, "init.lua")
	plugin := filepath.Join(testkit.ModuleRoot(t), "plugins", "nvim")
	if err := os.WriteFile(initPath, fmt.Appendf(nil, initLua, plugin, n.notes, testkit.Binary(t), n.log), 0o600); err != nil {
		t.Fatal(err)
	}
	n.pane = tmuxdrive.Start(t, tmuxdrive.Options{
		Dir:     w.sb.Workspace,
		Env:     append(w.env(), "TERM=xterm-256color", "NVIM_LOG_FILE="+filepath.Join(w.sb.TmpDir, "nvim.log")),
		Command: append([]string{nvimBin, "--clean", "-u", initPath}, args...),
		Width:   180,
		Height:  50,
	})
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("screen:\n%s\nnotes:\n%s\nsidecar log (tail):\n%s", n.pane.Screen(), readTail(n.notes, 30), sidecarLog(n.log, 60))
		}
	})
	return n
}

func readTail(path string, lines int) string {
	b, _ := os.ReadFile(path)
	l := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(l) > lines {
		l = l[len(l)-lines:]
	}
	return strings.Join(l, "\n")
}

// ex runs an Ex command as a user types it.
func (n *nv) ex(t *testing.T, cmd string) {
	t.Helper()
	n.pane.Keys(t, "Escape")
	n.pane.Type(t, ":"+cmd)
}

// luaValue writes the value of a Lua expression to a file from inside
// Neovim (typed as a user would) and returns it.
func (n *nv) luaValue(t *testing.T, expr string) string {
	t.Helper()
	out := filepath.Join(n.w.sb.TmpDir, fmt.Sprintf("value-%d", time.Now().UnixNano()))
	n.ex(t, fmt.Sprintf("lua vim.fn.writefile({tostring(%s)}, %q)", expr, out))
	var v string
	if !testkit.Poll(20*time.Second, func() bool {
		b, err := os.ReadFile(out)
		v = strings.TrimSpace(string(b))
		return err == nil
	}) {
		t.Fatalf("Neovim did not evaluate %s", expr)
	}
	return v
}

func (n *nv) waitFile(t *testing.T, name, want string) {
	t.Helper()
	var got string
	if !testkit.Poll(turnTimeout, func() bool {
		got, _ = n.w.read(t, name)
		return got == want
	}) {
		t.Fatalf("%s = %q; want %q", name, got, want)
	}
}

// TestNvimAgentPanel is the agent panel as a Neovim user works with it,
// against the real sidecar, the real A2A server and a scripted model:
// a prompt streamed into the panel with the editor's context; an edit
// shown as the native diff, changed by the user and saved (:w) so exactly
// the user's text lands on disk; an edit denied with :q; a shell command
// denied from the prompt; a turn cancelled while a command runs; and the
// panel carrying on after the sidecar is killed, its pending edit shown
// again and approved.
func TestNvimAgentPanel(t *testing.T) {
	w := newWorld(t)
	notes := w.write(t, "notes.txt", "first line\n")
	n := startNvim(t, w, "notes.txt")
	p := n.pane
	p.WaitFor(t, "first line", 30*time.Second)

	// Open the panel: the sidecar starts the server for the workspace.
	n.ex(t, "GeminiAgent")
	p.WaitFor(t, "Connected to", turnTimeout)
	p.WaitFor(t, "Gemini agent: ready", turnTimeout)
	serverPID, _ := strconv.Atoi(n.luaValue(t, `require("gemini_companion.agent").state.pid`))
	if serverPID > 0 {
		t.Cleanup(func() { killPID(serverPID) })
	}

	t.Run("PromptStreams", func(t *testing.T) {
		w.fake.Reply(fakegemini.Thought("**Greeting the user** I will answer with a short greeting."), fakegemini.Text("Hello from the agent panel."))
		// Back in the file's window, the user asks from the command line.
		n.ex(t, "wincmd h")
		n.ex(t, "GeminiAgent say hello")
		p.WaitFor(t, "You: say hello", 20*time.Second)
		screen := p.WaitFor(t, "Hello from the agent panel.", turnTimeout)
		// The thought shows its subject; its description is folded.
		if !strings.Contains(screen, "∴ Greeting the user") || !strings.Contains(screen, "+--  1 line") {
			t.Fatalf("the thought is not shown folded under its subject:\n%s", screen)
		}
		reqs := w.fake.Requests()
		if got := reqs[len(reqs)-1].Text(); !strings.Contains(got, notes) {
			t.Fatalf("the model did not get the editor's context (open %s):\n%s", notes, got)
		}
	})

	t.Run("SlashCommandCompleted", func(t *testing.T) {
		p.Keys(t, "Escape")
		p.Keys(t, ":GeminiAgent /memory li", "Tab")
		p.WaitFor(t, ":GeminiAgent /memory list", 10*time.Second)
		p.Keys(t, "Enter")
		p.WaitFor(t, "You: /memory list", 20*time.Second)
		p.WaitFor(t, "/memory list:", turnTimeout)
	})

	t.Run("EditApprovedWithUserChange", func(t *testing.T) {
		w.fake.Reply(fakegemini.Call("write_file", map[string]any{"file_path": notes, "content": "agent line\n"}))
		w.fake.Reply(fakegemini.Text("Done editing."))
		n.ex(t, "GeminiAgent rewrite the notes")
		// The view's status lines, as docs/agent-panel.md shows them.
		p.WaitFor(t, ":w accepts  :q rejects  notes.txt (proposed by Gemini)  (CLI agent)", turnTimeout)
		p.WaitFor(t, "notes.txt (now, read-only)", 5*time.Second)
		p.WaitFor(t, "agent line", 10*time.Second)
		// The user changes the proposal's line, then saves it.
		p.Keys(t, "Escape", "g", "g", "c", "c", "user line", "Escape")
		n.ex(t, "w")
		p.WaitFor(t, "Done editing.", turnTimeout)
		n.waitFile(t, "notes.txt", "user line\n")
		p.WaitFor(t, "Gemini agent: ready", turnTimeout)
	})

	t.Run("EditDenied", func(t *testing.T) {
		w.fake.Reply(fakegemini.Call("write_file", map[string]any{"file_path": notes, "content": "clobbered\n"}))
		n.ex(t, "GeminiAgent clobber the notes")
		p.WaitFor(t, "(proposed by Gemini)", turnTimeout)
		n.ex(t, "q")
		p.WaitUntil(t, "the edit cancelled", turnTimeout, func(s string) bool {
			return strings.Count(s, "[CANCELLED]") >= 1 && strings.Contains(s, "Gemini agent: ready")
		})
		if got, _ := w.read(t, "notes.txt"); got != "user line\n" {
			t.Fatalf("notes.txt = %q after :q; want it untouched", got)
		}
	})

	t.Run("ShellDenied", func(t *testing.T) {
		w.fake.Reply(fakegemini.Call("run_shell_command", map[string]any{"command": "echo ran > shell.txt", "description": "write a file"}))
		n.ex(t, "GeminiAgent run the command")
		p.WaitFor(t, "wants to run `echo ran > shell.txt`", turnTimeout)
		p.WaitFor(t, "3: Deny", 5*time.Second)
		p.Type(t, "3")
		p.WaitFor(t, "echo ran > shell.txt  [CANCELLED]", turnTimeout)
		p.WaitFor(t, "Gemini agent: ready", turnTimeout)
		if _, exists := w.read(t, "shell.txt"); exists {
			t.Fatal("the denied command ran")
		}
	})

	t.Run("CancelMidTurn", func(t *testing.T) {
		// A command that would leave a file after a delay far longer than
		// the test: once no process of it is left, the file can never come.
		command := "sleep 30.619 && echo late > late.txt"
		w.fake.Reply(fakegemini.Call("run_shell_command", map[string]any{"command": command, "description": "wait"}))
		n.ex(t, "GeminiAgent wait a while")
		p.WaitFor(t, "1: Allow once", turnTimeout)
		p.Type(t, "1")
		p.WaitFor(t, command+"  [EXECUTING]", turnTimeout)
		n.ex(t, "GeminiAgent!")
		p.WaitFor(t, "— canceled —", 20*time.Second)
		p.WaitFor(t, "• stopped `"+command+"`", 5*time.Second)
		p.WaitFor(t, command+"  [CANCELLED]", 5*time.Second)
		p.WaitFor(t, "Gemini agent: canceled", 5*time.Second)
		testkit.WaitNoProcess(t, "sleep 30.619")
		if _, exists := w.read(t, "late.txt"); exists {
			t.Fatal("the cancelled command ran to its end")
		}
	})

	t.Run("EditKeepsFinalNewline", func(t *testing.T) {
		w.fake.Reply(fakegemini.Call("write_file", map[string]any{"file_path": notes, "content": "user line\nsecond line\n"}))
		w.fake.Reply(fakegemini.Text("Added a line."))
		n.ex(t, "GeminiAgent add a line to the notes")
		p.WaitFor(t, "(proposed by Gemini)", turnTimeout)
		if !testkit.Poll(10*time.Second, func() bool { return strings.Contains(mustRead(n.notes), "the newline is kept") }) {
			t.Fatalf("the view did not say the final newline is kept; notes:\n%s", mustRead(n.notes))
		}
		n.ex(t, "w")
		p.WaitFor(t, "Added a line.", turnTimeout)
		n.waitFile(t, "notes.txt", "user line\nsecond line\n")
	})

	t.Run("ResumeAfterSidecarKilled", func(t *testing.T) {
		later := w.path("later.txt")
		w.fake.Reply(fakegemini.Call("write_file", map[string]any{"file_path": later, "content": "after restart\n"}))
		w.fake.Reply(fakegemini.Text("Written after restart."))
		n.ex(t, "GeminiAgent write later.txt")
		p.WaitFor(t, "(proposed by Gemini)", turnTimeout)
		pid, err := strconv.Atoi(n.luaValue(t, `require("gemini_companion.sidecar").state.pid`))
		if err != nil || pid <= 0 {
			t.Fatalf("sidecar pid: %v", err)
		}
		if err := killPID(pid); err != nil {
			t.Fatal(err)
		}
		// The plugin restarts the sidecar; the panel resubscribes, replays
		// the conversation and shows the pending edit again.
		if !testkit.Poll(turnTimeout, func() bool {
			return strings.Count(mustRead(n.notes), "proposes a change to later.txt") == 2
		}) {
			t.Fatal("the pending edit was not shown again after the sidecar restarted")
		}
		p.WaitFor(t, "(proposed by Gemini)", 10*time.Second)
		n.ex(t, "w")
		p.WaitFor(t, "Written after restart.", turnTimeout)
		n.waitFile(t, "later.txt", "after restart\n")
		// The conversation before the restart is still in the panel.
		n.ex(t, "wincmd l")
		p.WaitFor(t, "You: write later.txt", 10*time.Second)
	})
}

func mustRead(path string) string {
	b, _ := os.ReadFile(path)
	return string(b)
}

// sidecarLog is the tail of the sidecar's log without the A2A server's
// own lines.
func sidecarLog(path string, lines int) string {
	var keep []string
	for _, l := range strings.Split(mustRead(path), "\n") {
		if !strings.Contains(l, `"a2a server: `) {
			keep = append(keep, l)
		}
	}
	if len(keep) > lines {
		keep = keep[len(keep)-lines:]
	}
	return strings.Join(keep, "\n")
}

// TestNvimAgentServerNotFound: with no A2A server installed, :GeminiAgent
// says so in the Neovim user's terms: how to install it, and the plugin's
// own option for the command (not the bridge's --server-command).
func TestNvimAgentServerNotFound(t *testing.T) {
	w := newWorld(t)
	var keep []string
	for _, dir := range filepath.SplitList(os.Getenv("PATH")) {
		if _, err := os.Stat(filepath.Join(dir, "gemini-cli-a2a-server")); err != nil {
			keep = append(keep, dir)
		}
	}
	w.pathEnv = "PATH=" + strings.Join(keep, string(os.PathListSeparator))
	n := startNvim(t, w)
	n.ex(t, "GeminiAgent")
	var said string
	if !testkit.Poll(turnTimeout, func() bool {
		said = mustRead(n.notes)
		return strings.Contains(said, "is not on PATH")
	}) {
		t.Fatalf("no error about the missing server; notes:\n%s", said)
	}
	for _, want := range []string{"npm install -g @google/gemini-cli-a2a-server", `require("gemini_companion.agent").setup({ command =`} {
		if !strings.Contains(said, want) {
			t.Fatalf("the error does not mention %q:\n%s", want, said)
		}
	}
	if strings.Contains(said, "--server-command") {
		t.Fatalf("the error tells a Neovim user about the bridge's flag:\n%s", said)
	}
	n.pane.WaitFor(t, "! Gemini CLI's A2A server", 10*time.Second)
}
