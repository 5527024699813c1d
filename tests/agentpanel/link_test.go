package agentpanel

import (
	"context"
	"encoding/json"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/shirou/gopsutil/v4/process"

	"github.com/gemini-ide-companion/gemini-ide-companion/a2a/launch"
	"github.com/gemini-ide-companion/gemini-ide-companion/tests/fakegemini"
	"github.com/gemini-ide-companion/gemini-ide-companion/tests/testkit"
)

// linkPanel is the real sidecar driven over the editor link by a stand-in
// plugin (testkit.Editor), with the agent panel attached to a server the
// sidecar started: found on PATH, as a user installed it, since the plugin
// gives no command.
type linkPanel struct {
	w  *world
	ed *testkit.Editor
}

func startLinkPanel(t *testing.T, w *world) *linkPanel {
	t.Helper()
	ed := testkit.StartEditor(t, w.sb, testkit.EditorOptions{Env: w.env()})
	ed.Initialize(t, w.sb, nil)
	lp := &linkPanel{w: w, ed: ed}
	var res map[string]any
	// No params: a Lua plugin's empty table goes out as [].
	if err := ed.Call(10*time.Second, "agent/start", []any{}, &res); err != nil {
		t.Fatalf("agent/start: %v", err)
	}
	lp.wait(t, 0, "ready", nil)
	return lp
}

// wait waits for an agent/event of type typ (matching ok, if given) at
// index ≥ from and returns it with the index after it.
func (lp *linkPanel) wait(t *testing.T, from int, typ string, ok func(event) bool) (event, int) {
	t.Helper()
	n, i := lp.ed.WaitFrom(t, from, "agent/event", turnTimeout, func(raw json.RawMessage) bool {
		e := parseEvent(raw)
		return e.Type == typ && (ok == nil || ok(e))
	})
	return parseEvent(n.Params), i + 1
}

func (lp *linkPanel) call(t *testing.T, method string, params any) error {
	t.Helper()
	var res json.RawMessage
	return lp.ed.Call(10*time.Second, method, params, &res)
}

func stateIs(s string) func(event) bool { return func(e event) bool { return e.State == s } }

// TestLinkEditFlow runs the panel's core path against the real server with
// a stand-in plugin: a prompt whose edit comes as diff/open and is approved
// unchanged, approved with the user's change, denied; a shell command
// denied; the editor's context reaching the model.
func TestLinkEditFlow(t *testing.T) {
	w := newWorld(t)
	lp := startLinkPanel(t, w)

	t.Run("ContextReachesModel", func(t *testing.T) {
		active := w.write(t, "main.go", "package main\n")
		lp.ed.Notify(t, "context/fileFocused", map[string]any{"path": active, "cursor": map[string]int{"line": 1, "character": 3}, "selectedText": "package"})
		w.fake.Reply(fakegemini.Text("Hello from the agent."))
		from := lp.ed.Len()
		if err := lp.call(t, "agent/prompt", map[string]any{"text": "say hello"}); err != nil {
			t.Fatal(err)
		}
		lp.wait(t, from, "text", func(e event) bool { return strings.Contains(e.Text, "Hello from the agent.") })
		lp.wait(t, from, "state", stateIs("idle"))
		reqs := w.fake.Requests()
		got := reqs[len(reqs)-1].Text()
		if !strings.Contains(got, "say hello") || !strings.Contains(got, active) || !strings.Contains(got, "package") {
			t.Fatalf("the model's request lacks the prompt or the editor context:\n%s", got)
		}
	})

	t.Run("EditApprovedWithUserChange", func(t *testing.T) {
		path := w.write(t, "notes.txt", "one\n")
		w.fake.Reply(fakegemini.Call("write_file", map[string]any{"file_path": path, "content": "agent text\n"}))
		w.fake.Reply(fakegemini.Text("Kept your version."))
		from := lp.ed.Len()
		if err := lp.call(t, "agent/prompt", map[string]any{"text": "edit notes"}); err != nil {
			t.Fatal(err)
		}
		ev, _ := lp.wait(t, from, "tool", func(e event) bool { return e.Tool.ConfirmationRequest != nil })
		if !ev.Tool.DiffShown || ev.Tool.ConfirmationRequest.FileEditDetails.FilePath != path {
			t.Fatalf("edit not shown as a diff: %+v", ev.Tool)
		}
		lp.wait(t, from, "state", stateIs("waiting"))
		// The plugin showed it with diff/open; the user changes the text and saves.
		lp.ed.Notify(t, "diff/accepted", map[string]any{"filePath": path, "content": "user text\n", "diffId": ev.Tool.DiffID})
		_, after := lp.wait(t, from, "text", func(e event) bool { return strings.Contains(e.Text, "Kept your version.") })
		lp.wait(t, after, "state", stateIs("idle"))
		if got, _ := w.read(t, "notes.txt"); got != "user text\n" {
			t.Fatalf("notes.txt = %q; want the user's version", got)
		}
	})

	// Server 0.25.2 trims the end of a write_file proposal: the file's
	// final newline is kept in what the plugin is shown and on disk.
	t.Run("EditKeepsFinalNewline", func(t *testing.T) {
		path := w.write(t, "list.txt", "one\n")
		w.fake.Reply(fakegemini.Call("write_file", map[string]any{"file_path": path, "content": "one\ntwo\n"}))
		w.fake.Reply(fakegemini.Text("Added two."))
		from := lp.ed.Len()
		if err := lp.call(t, "agent/prompt", map[string]any{"text": "add two"}); err != nil {
			t.Fatal(err)
		}
		ev, _ := lp.wait(t, from, "tool", func(e event) bool { return e.Tool.ConfirmationRequest != nil })
		d := ev.Tool.ConfirmationRequest.FileEditDetails
		if d == nil || d.NewContent != "one\ntwo\n" || !strings.Contains(d.Note, "final newline") || !ev.Tool.DiffShown {
			t.Fatalf("edit shown as %+v; want the proposal with its final newline, and a note", ev.Tool)
		}
		lp.wait(t, from, "state", stateIs("waiting"))
		lp.ed.Notify(t, "diff/accepted", map[string]any{"filePath": path, "content": "one\ntwo\n", "diffId": ev.Tool.DiffID})
		_, after := lp.wait(t, from, "text", func(e event) bool { return strings.Contains(e.Text, "Added two.") })
		lp.wait(t, after, "state", stateIs("idle"))
		if got, _ := w.read(t, "list.txt"); got != "one\ntwo\n" {
			t.Fatalf("list.txt = %q; want the agent's edit with the final newline", got)
		}
	})

	t.Run("SlashCommands", func(t *testing.T) {
		var list struct {
			Commands []struct {
				Name        string `json:"name"`
				SubCommands []struct {
					Name string `json:"name"`
				} `json:"subCommands"`
			} `json:"commands"`
		}
		if err := lp.ed.Call(10*time.Second, "agent/listCommands", map[string]any{}, &list); err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, c := range list.Commands {
			names = append(names, c.Name)
			for _, s := range c.SubCommands {
				names = append(names, s.Name)
			}
		}
		if !strings.Contains(strings.Join(names, ","), "memory show") {
			t.Fatalf("commands = %v; want memory show among them", names)
		}
		w.write(t, "GEMINI.md", "Always answer in haiku.\n")
		from := lp.ed.Len()
		if err := lp.call(t, "agent/runCommand", map[string]any{"command": "/memory refresh"}); err != nil {
			t.Fatal(err)
		}
		lp.wait(t, from, "command", func(e event) bool { return e.Command == "memory refresh" })
		from = lp.ed.Len()
		if err := lp.call(t, "agent/runCommand", map[string]any{"command": "memory list"}); err != nil {
			t.Fatal(err)
		}
		ev, _ := lp.wait(t, from, "command", func(e event) bool { return e.Command == "memory list" })
		if s, _ := ev.Data.(string); !strings.Contains(s, "GEMINI.md") {
			t.Fatalf("/memory list = %v; want the GEMINI.md in use", ev.Data)
		}
		from = lp.ed.Len()
		if err := lp.call(t, "agent/runCommand", map[string]any{"command": "no-such-command"}); err != nil {
			t.Fatal(err)
		}
		lp.wait(t, from, "error", func(e event) bool { return strings.Contains(e.Text, "Command not found") })
	})

	// "Allow always" runs the command; Gemini CLI's A2A server 0.25.2 does
	// not remember it (its core's policy updater is not wired in the
	// server), so the same command is asked again next time: the panel
	// never runs anything unasked.
	t.Run("ShellAllowAlways", func(t *testing.T) {
		w.fake.Reply(fakegemini.Call("run_shell_command", map[string]any{"command": "touch always-1.txt", "description": "first"}))
		w.fake.Reply(fakegemini.Text("First done."))
		from := lp.ed.Len()
		if err := lp.call(t, "agent/prompt", map[string]any{"text": "touch one"}); err != nil {
			t.Fatal(err)
		}
		ev, _ := lp.wait(t, from, "tool", func(e event) bool { return e.Tool.ConfirmationRequest != nil })
		lp.wait(t, from, "state", stateIs("waiting"))
		if err := lp.call(t, "agent/confirm", map[string]any{"callId": ev.Tool.ToolCallID, "outcome": "proceed_always"}); err != nil {
			t.Fatal(err)
		}
		_, after := lp.wait(t, from, "text", func(e event) bool { return e.Text == "First done." })
		lp.wait(t, after, "state", stateIs("idle"))
		if _, ok := w.read(t, "always-1.txt"); !ok {
			t.Fatal("the command allowed always did not run")
		}
		w.fake.Reply(fakegemini.Call("run_shell_command", map[string]any{"command": "touch always-2.txt", "description": "second"}))
		from = lp.ed.Len()
		if err := lp.call(t, "agent/prompt", map[string]any{"text": "touch two"}); err != nil {
			t.Fatal(err)
		}
		ev, _ = lp.wait(t, from, "tool", func(e event) bool { return e.Tool.ConfirmationRequest != nil })
		lp.wait(t, from, "state", stateIs("waiting"))
		if err := lp.call(t, "agent/confirm", map[string]any{"callId": ev.Tool.ToolCallID, "outcome": "cancel"}); err != nil {
			t.Fatal(err)
		}
		lp.wait(t, from, "state", stateIs("idle"))
		if _, ok := w.read(t, "always-2.txt"); ok {
			t.Fatal("a denied command ran")
		}
	})

	t.Run("ShellDenied", func(t *testing.T) {
		w.fake.Reply(fakegemini.Call("run_shell_command", map[string]any{"command": "echo ran > shell.txt", "description": "write a file"}))
		from := lp.ed.Len()
		if err := lp.call(t, "agent/prompt", map[string]any{"text": "run it"}); err != nil {
			t.Fatal(err)
		}
		ev, _ := lp.wait(t, from, "tool", func(e event) bool { return e.Tool.ConfirmationRequest != nil })
		if d := ev.Tool.ConfirmationRequest.ExecuteDetails; d == nil || !strings.Contains(d.Command, "echo ran") {
			t.Fatalf("no shell confirmation: %+v", ev.Tool)
		}
		lp.wait(t, from, "state", stateIs("waiting"))
		if err := lp.call(t, "agent/confirm", map[string]any{"callId": ev.Tool.ToolCallID, "outcome": "cancel"}); err != nil {
			t.Fatal(err)
		}
		lp.wait(t, from, "tool", func(e event) bool { return e.Tool.ToolCallID == ev.Tool.ToolCallID && e.Tool.Status == "CANCELLED" })
		lp.wait(t, from, "state", stateIs("idle"))
		if _, exists := w.read(t, "shell.txt"); exists {
			t.Fatal("the denied command ran")
		}
	})
}

// TestLinkResubscribeAfterKill kills the sidecar while an edit waits for
// approval; a new sidecar given the server's URL, pid and the task picks the
// conversation up: the history is replayed, the edit is shown again as a
// diff, and approving it writes the file.
func TestLinkResubscribeAfterKill(t *testing.T) {
	w := newWorld(t)
	lp := startLinkPanel(t, w)
	ready, _ := lp.wait(t, 0, "ready", nil)
	if ready.Agent == nil || !ready.Agent.Started || ready.Agent.PID == 0 || ready.Agent.Context != "prompt" {
		t.Fatalf("ready = %+v; want a started server with its pid", ready.Agent)
	}
	// The killed sidecar cannot stop its server; the new one adopts it. If
	// the test fails before that, stop it here.
	t.Cleanup(func() { killPID(ready.Agent.PID) })
	path := w.path("later.txt")
	w.fake.Reply(fakegemini.Text("Let me write it."), fakegemini.Call("write_file", map[string]any{"file_path": path, "content": "after restart\n"}))
	w.fake.Reply(fakegemini.Text("Written."))
	if err := lp.call(t, "agent/prompt", map[string]any{"text": "write later.txt"}); err != nil {
		t.Fatal(err)
	}
	ev, _ := lp.wait(t, 0, "tool", func(e event) bool { return e.Tool.ConfirmationRequest != nil })
	st, _ := lp.wait(t, 0, "state", stateIs("waiting"))
	if err := lp.ed.Kill(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-lp.ed.Exited()

	ed2 := testkit.StartEditor(t, w.sb, testkit.EditorOptions{Env: w.env()})
	ed2.Initialize(t, w.sb, nil)
	lp2 := &linkPanel{w: w, ed: ed2}
	if err := lp2.call(t, "agent/start", map[string]any{"url": ready.Agent.URL, "pid": ready.Agent.PID, "taskId": st.TaskID}); err != nil {
		t.Fatalf("agent/start after restart: %v", err)
	}
	_, i := lp2.wait(t, 0, "reset", nil)
	lp2.wait(t, i, "user", func(e event) bool { return e.Replay && e.Text == "write later.txt" })
	lp2.wait(t, i, "text", func(e event) bool { return e.Replay && strings.Contains(e.Text, "Let me write it.") })
	again, _ := lp2.wait(t, i, "tool", func(e event) bool { return e.Tool.ConfirmationRequest != nil })
	if again.Tool.ToolCallID != ev.Tool.ToolCallID || !again.Tool.DiffShown {
		t.Fatalf("after resubscribe: %+v; want call %s shown as a diff again", again.Tool, ev.Tool.ToolCallID)
	}
	lp2.wait(t, i, "state", stateIs("waiting"))
	if opened := ed2.All("request:diff/open"); len(opened) != 1 {
		t.Fatalf("diff/open sent %d times after resubscribe; want once", len(opened))
	}
	lp2.ed.Notify(t, "diff/accepted", map[string]any{"filePath": path, "content": "after restart\n", "diffId": again.Tool.DiffID})
	_, j := lp2.wait(t, i, "text", func(e event) bool { return e.Text == "Written." })
	lp2.wait(t, j, "state", stateIs("idle"))
	if got, _ := w.read(t, "later.txt"); got != "after restart\n" {
		t.Fatalf("later.txt = %q after approval", got)
	}
	// The new sidecar adopted the server: it stops it when its editor goes.
	if err := ed2.CloseStdin(); err != nil {
		t.Fatal(err)
	}
	if !testkit.Poll(15*time.Second, func() bool {
		alive, _ := process.PidExists(int32(ready.Agent.PID))
		return !alive
	}) {
		t.Fatal("the adopted A2A server still runs after its sidecar exited")
	}
}

// TestLinkServerEndsWithItsKilledSidecar kills the sidecar (SIGKILL: it
// can stop nothing) while the agent runs a command, and no new sidecar
// takes the server over: the server and its command end by themselves
// once the time a restarted sidecar has to adopt the server is over.
func TestLinkServerEndsWithItsKilledSidecar(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	lp := startLinkPanel(t, w)
	ready, _ := lp.wait(t, 0, "ready", nil)
	if ready.Agent == nil || ready.Agent.PID == 0 {
		t.Fatalf("ready = %+v; want a started server with its pid", ready.Agent)
	}
	t.Cleanup(func() { killPID(ready.Agent.PID) })
	const marker = "sleep 300.437"
	t.Cleanup(func() { testkit.KillWith(marker) })
	w.fake.Reply(fakegemini.Call("run_shell_command", map[string]any{"command": marker, "description": "long"}))
	if err := lp.call(t, "agent/prompt", map[string]any{"text": "run long"}); err != nil {
		t.Fatal(err)
	}
	ev, i := lp.wait(t, 0, "tool", func(e event) bool { return e.Tool.ConfirmationRequest != nil })
	if err := lp.call(t, "agent/confirm", map[string]any{"callId": ev.Tool.ToolCallID, "outcome": "proceed_once"}); err != nil {
		t.Fatal(err)
	}
	lp.wait(t, i, "tool", func(e event) bool { return e.Tool.Status == "EXECUTING" })
	testkit.WaitProcess(t, marker)
	if err := lp.ed.Kill(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-lp.ed.Exited()
	testkit.WaitPIDGone(t, "the A2A server of the killed sidecar", ready.Agent.PID, 2*time.Minute)
	testkit.WaitNoProcess(t, marker)
}

// TestLinkCancel cancels a turn while a shell command runs, and in the
// moment the server has said it runs but not spawned it yet (held there by
// a testkit.SpawnGate until the cancel has reached the server): either way
// the command is stopped (its later effect never happens), the panel says
// so, and the next prompt starts afresh.
func TestLinkCancel(t *testing.T) {
	t.Run("while it runs", func(t *testing.T) { linkCancel(t, false) })
	t.Run("as it starts", func(t *testing.T) { linkCancel(t, true) })
}

func linkCancel(t *testing.T, early bool) {
	t.Parallel()
	w := newWorld(t)
	// A command that would leave a file after a delay far longer than the
	// test: once no process of it is left, the file can never come.
	marker := "sleep 30.413"
	if early {
		marker = "sleep 30.419"
	}
	var gate *testkit.SpawnGate
	if early {
		gate = testkit.NewSpawnGate(t, marker)
		w.extra = gate.Env
	}
	lp := startLinkPanel(t, w)
	command := marker + " && echo late > late.txt"
	w.fake.Reply(fakegemini.Call("run_shell_command", map[string]any{"command": command, "description": "slow"}))
	if err := lp.call(t, "agent/prompt", map[string]any{"text": "run slow"}); err != nil {
		t.Fatal(err)
	}
	ev, i := lp.wait(t, 0, "tool", func(e event) bool { return e.Tool.ConfirmationRequest != nil })
	lp.wait(t, i, "state", stateIs("waiting"))
	if err := lp.call(t, "agent/confirm", map[string]any{"callId": ev.Tool.ToolCallID, "outcome": "proceed_once"}); err != nil {
		t.Fatal(err)
	}
	_, i = lp.wait(t, i, "tool", func(e event) bool { return e.Tool.Status == "EXECUTING" })
	if early {
		gate.WaitHeld(t, time.Minute)
	} else {
		testkit.WaitProcess(t, marker)
	}
	if err := lp.call(t, "agent/cancel", nil); err != nil {
		t.Fatal(err)
	}
	lp.wait(t, i, "tool", func(e event) bool { return e.Tool.ToolCallID == ev.Tool.ToolCallID && e.Tool.Status == "CANCELLED" })
	st, _ := lp.wait(t, i, "state", stateIs("canceled"))
	if !strings.Contains(st.Text, "stopped `"+command+"`") {
		t.Fatalf("canceled state says %q; want it to say the command was stopped", st.Text)
	}
	if early {
		// The command can only spawn after the cancel reached the server;
		// it must then be stopped as it starts.
		pid := gate.WaitSpawned(t, 60*time.Second)
		gate.Check(t)
		testkit.WaitPIDGone(t, "the command spawned after the cancel", pid, 15*time.Second)
		testkit.WaitNoProcess(t, marker)
	} else {
		testkit.WaitNoProcess(t, marker)
	}
	if _, exists := w.read(t, "late.txt"); exists {
		t.Fatal("the cancelled command ran to its end")
	}
	if err := lp.call(t, "agent/cancel", nil); err == nil || !strings.Contains(err.Error(), "nothing to cancel") {
		t.Fatalf("second cancel: %v; want nothing to cancel", err)
	}
	// A new prompt starts a new task and works.
	w.fake.Reply(fakegemini.Text("Fresh start."))
	if err := lp.call(t, "agent/prompt", map[string]any{"text": "again"}); err != nil {
		t.Fatal(err)
	}
	lp.wait(t, i, "text", func(e event) bool { return e.Text == "Fresh start." })
}

// TestServerIgnoresIDECompanion checks the finding behind the panel's
// context route (RFC §4): Gemini CLI's A2A server 0.25.2, started with
// exactly the environment an integrated terminal gets from the sidecar
// (GEMINI_CLI_IDE_* and a discovery file), never connects to the companion
// (its core runs with ideMode off), so its model sees no IDE context of its
// own; the panel's prompt carries it instead.
func TestServerIgnoresIDECompanion(t *testing.T) {
	w := newWorld(t)
	ed := testkit.StartEditor(t, w.sb, testkit.EditorOptions{Env: w.env()})
	res := ed.Initialize(t, w.sb, nil)
	if res.DiscoveryFile == "" || len(res.Env) == 0 {
		t.Fatalf("initialize gave no terminal environment: %+v", res)
	}
	env := w.env()
	for k, v := range res.Env {
		env = append(env, k+"="+v)
	}
	ctx, cancel := context.WithTimeout(context.Background(), turnTimeout)
	defer cancel()
	srv, err := launch.Start(ctx, launch.Options{Dir: w.sb.Workspace, Env: env})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Stop)
	lp := &linkPanel{w: w, ed: ed}
	if err := lp.call(t, "agent/start", map[string]any{"url": srv.URL}); err != nil {
		t.Fatal(err)
	}
	lp.wait(t, 0, "ready", nil)
	active := w.write(t, "shown.go", "package shown\n")
	ed.Notify(t, "context/fileFocused", map[string]any{"path": active, "cursor": map[string]int{"line": 1, "character": 1}})
	w.fake.Reply(fakegemini.Text("Seen."))
	if err := lp.call(t, "agent/prompt", map[string]any{"text": "what is open?"}); err != nil {
		t.Fatal(err)
	}
	_, i := lp.wait(t, 0, "text", func(e event) bool { return e.Text == "Seen." })
	lp.wait(t, i, "state", stateIs("idle"))
	var st struct {
		ConnectedClients int `json:"connectedClients"`
		Sessions         int `json:"sessions"`
	}
	if err := ed.Call(10*time.Second, "status/get", nil, &st); err != nil {
		t.Fatal(err)
	}
	if st.ConnectedClients != 0 || st.Sessions != 0 {
		t.Fatalf("the A2A server connected to the companion (%+v): the panel's context route is out of date", st)
	}
	reqs := w.fake.Requests()
	text := reqs[len(reqs)-1].Text()
	if strings.Contains(text, "Here is the user's editor context") {
		t.Fatalf("the server's core sent IDE context of its own:\n%s", text)
	}
	if !strings.Contains(text, "Context from the user's editor") || !strings.Contains(text, active) {
		t.Fatalf("the panel's context did not reach the model:\n%s", text)
	}
}

// TestLinkServerDies kills the server the sidecar started: the panel says
// so at once, refuses prompts with a clear error, and agent/start brings a
// new server.
func TestLinkServerDies(t *testing.T) {
	w := newWorld(t)
	lp := startLinkPanel(t, w)
	ready, _ := lp.wait(t, 0, "ready", nil)
	from := lp.ed.Len()
	if err := killPID(ready.Agent.PID); err != nil {
		t.Fatal(err)
	}
	lp.wait(t, from, "error", func(e event) bool { return strings.Contains(e.Text, "server exited") })
	lp.wait(t, from, "state", stateIs("stopped"))
	if err := lp.call(t, "agent/prompt", map[string]any{"text": "hello?"}); err == nil || !strings.Contains(err.Error(), "agent/start") {
		t.Fatalf("prompt without a server: %v; want an error naming agent/start", err)
	}
	from = lp.ed.Len()
	if err := lp.call(t, "agent/start", nil); err != nil {
		t.Fatal(err)
	}
	again, _ := lp.wait(t, from, "ready", nil)
	if again.Agent.PID == ready.Agent.PID || again.Agent.PID == 0 {
		t.Fatalf("after restart: %+v", again.Agent)
	}
	w.fake.Reply(fakegemini.Text("Back."))
	if err := lp.call(t, "agent/prompt", map[string]any{"text": "hello again"}); err != nil {
		t.Fatal(err)
	}
	lp.wait(t, from, "text", func(e event) bool { return e.Text == "Back." })
}
