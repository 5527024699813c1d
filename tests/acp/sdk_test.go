package acp_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gemini-ide-companion/gemini-ide-companion/tests/fakegemini"
	"github.com/gemini-ide-companion/gemini-ide-companion/tests/testkit"
)

// startAdapter runs the scripted SDK client on gemini-a2a-acp as an editor
// configures it: the bare command, found on PATH, in the user's
// environment (its log goes to acp.log in the sandbox's HOME).
func startAdapter(t *testing.T, sb *sandbox, args ...string) *client {
	t.Helper()
	return startClient(t, sb.env(), append([]string{"gemini-a2a-acp", "--log-file", filepath.Join(sb.Home, "acp.log")}, args...)...)
}

func kinds(us []update) []string {
	var out []string
	for _, u := range us {
		out = append(out, u.SessionUpdate)
	}
	return out
}

func messageText(us []update) string {
	var b strings.Builder
	for _, u := range us {
		if u.SessionUpdate == "agent_message_chunk" {
			b.WriteString(u.text())
		}
	}
	return b.String()
}

// lastTool is the last update about a tool call of the given kind.
func toolUpdates(us []update, kind string) (first update, last update, ok bool) {
	id := ""
	for _, u := range us {
		if u.SessionUpdate == "tool_call" && u.Kind == kind && id == "" {
			id, first, ok = u.ToolCallID, u, true
		}
		if id != "" && u.ToolCallID == id {
			last = u
		}
	}
	return first, last, ok
}

// A prompt is answered with the agent's thought and its text streamed as
// chunks, in order, ending with end_turn. The server's slash commands are
// listed right after session/new, subcommands by their full name, and a
// prompt "/memory show" runs the command (its output is the answer) instead
// of going to the model.
func TestTextAndSlashCommand(t *testing.T) {
	t.Parallel()
	sb := newSandbox(t)
	sb.Fake.Reply(fakegemini.Thought("**Greeting** deciding how to say hello"), fakegemini.Text("Hello "), fakegemini.Text("from "), fakegemini.Text("Gemini."))
	c := startAdapter(t, sb)
	c.initialize(false)
	sid := c.newSession(sb.Workspace)
	cmds, _ := c.wait(0, time.Minute, "available_commands_update", func(e event) bool {
		return e.Ev == "update" && e.Update.SessionUpdate == "available_commands_update"
	})
	var names []string
	for _, ac := range cmds.Update.AvailableCommands {
		names = append(names, ac.Name)
	}
	if !strings.Contains(","+strings.Join(names, ",")+",", ",memory show,") {
		t.Fatalf("available commands %q lack \"memory show\"", names)
	}
	if got := c.stopReason(c.prompt(sid, "say hello")); got != "end_turn" {
		t.Fatalf("stop reason %q, want end_turn", got)
	}
	us := c.updates(sid)
	if got := messageText(us); got != "Hello from Gemini." {
		t.Fatalf("message chunks %q, want %q; updates %v", got, "Hello from Gemini.", kinds(us))
	}
	thought := -1
	for i, u := range us {
		if u.SessionUpdate == "agent_thought_chunk" && strings.Contains(u.text(), "Greeting") && strings.Contains(u.text(), "deciding how to say hello") {
			thought = i
		}
		if u.SessionUpdate == "agent_message_chunk" && thought < 0 {
			t.Fatalf("the answer came before the thought: %v", kinds(us))
		}
	}
	if thought < 0 {
		t.Fatalf("no thought chunk: %v", kinds(us))
	}

	n := len(sb.Fake.Requests())
	before := len(c.updates(sid))
	if got := c.stopReason(c.prompt(sid, "/memory show")); got != "end_turn" {
		t.Fatalf("/memory show: stop reason %q", got)
	}
	if got := messageText(c.updates(sid)[before:]); !strings.Contains(got, "Memory is currently empty") {
		t.Fatalf("/memory show answered %q, want the server's memory listing", got)
	}
	if got := len(sb.Fake.Requests()); got != n {
		t.Fatalf("/memory show went to the model (%d requests, was %d)", got, n)
	}
}

// An edit is shown as a diff (the file before and after), asked with allow
// once / allow always / reject options, and once allowed it is written
// through the client's fs/write_text_file (the editor's buffer gets it),
// keeping the file's final newline that the server trims; the bytes on
// disk are the approved text. A second edit, rejected, writes nothing.
func TestEditApprovedThroughClientAndRejected(t *testing.T) {
	t.Parallel()
	sb := newSandbox(t)
	file := filepath.Join(sb.Workspace, "notes.txt")
	if err := osWrite(file, "one\ntwo\n"); err != nil {
		t.Fatal(err)
	}
	sb.Fake.Reply(fakegemini.Call("write_file", map[string]any{"file_path": file, "content": "one\ntwo\nthree"}))
	sb.Fake.Reply(fakegemini.Text("Added three."))
	c := startAdapter(t, sb)
	c.initialize(true)
	sid := c.newSession(sb.Workspace)
	c.ok(map[string]any{"op": "permission", "answer": "kind:allow_once"}, nil)
	if got := c.stopReason(c.prompt(sid, "add three")); got != "end_turn" {
		t.Fatalf("stop reason %q", got)
	}
	perm, _ := c.wait(0, time.Second, "the permission request", func(e event) bool { return e.Ev == "permission" })
	var pp permissionParams
	if err := json.Unmarshal(perm.Params, &pp); err != nil {
		t.Fatal(err)
	}
	var d []diff
	_ = json.Unmarshal(pp.ToolCall.Content, &d)
	if pp.ToolCall.Kind != "edit" || len(d) != 1 || d[0].Type != "diff" || d[0].Path != file || d[0].OldText == nil ||
		*d[0].OldText != "one\ntwo\n" || d[0].NewText != "one\ntwo\nthree\n" {
		t.Fatalf("permission request %s; want an edit of %s with the diff from the file to the proposal (final newline kept)", perm.Params, file)
	}
	optionKinds := map[string]bool{}
	for _, o := range pp.Options {
		optionKinds[o.Kind] = true
	}
	if !optionKinds["allow_once"] || !optionKinds["allow_always"] || !optionKinds["reject_once"] {
		t.Fatalf("options %+v; want allow once, allow always and reject", pp.Options)
	}
	write, _ := c.wait(0, time.Second, "fs/write_text_file", func(e event) bool { return e.Ev == "write" })
	if write.Path != file || write.Content != "one\ntwo\nthree\n" {
		t.Fatalf("fs/write_text_file %s %q; want %s with the approved text", write.Path, write.Content, file)
	}
	if got, _ := testkit.ReadFile(t, file); got != "one\ntwo\nthree\n" {
		t.Fatalf("file %q after approval", got)
	}
	first, last, ok := toolUpdates(c.updates(sid), "edit")
	if !ok || last.Status != "completed" || len(last.diffs()) != 1 || last.diffs()[0].NewText != "one\ntwo\nthree\n" {
		t.Fatalf("edit updates: first %+v last %+v; want it completed with its diff", first, last)
	}
	if len(first.Locations) != 1 || first.Locations[0].Path != file {
		t.Fatalf("edit's locations %+v; want %s", first.Locations, file)
	}
	if !strings.Contains(messageText(c.updates(sid)), "Added three.") {
		t.Fatalf("the agent's answer after the edit is missing: %v", kinds(c.updates(sid)))
	}

	// Rejected: nothing is written, and the call ends failed.
	sb.Fake.Reply(fakegemini.Call("write_file", map[string]any{"file_path": file, "content": "replaced\n"}))
	c.ok(map[string]any{"op": "permission", "answer": "kind:reject_once"}, nil)
	before := len(c.updates(sid))
	if got := c.stopReason(c.prompt(sid, "replace it")); got != "end_turn" {
		t.Fatalf("stop reason %q", got)
	}
	if got, _ := testkit.ReadFile(t, file); got != "one\ntwo\nthree\n" {
		t.Fatalf("a rejected edit changed the file: %q", got)
	}
	if _, last, ok := toolUpdates(c.updates(sid)[before:], "edit"); !ok || last.Status != "failed" {
		t.Fatalf("rejected edit's last update %+v; want failed", last)
	}
}

// Without the client's fs capabilities the server writes the approved edit
// itself and the adapter puts back the final newline it trims: the bytes on
// disk are what the diff showed; the client is never asked to read or
// write.
func TestEditApprovedWithoutClientFS(t *testing.T) {
	t.Parallel()
	sb := newSandbox(t)
	file := filepath.Join(sb.Workspace, "main.go")
	if err := osWrite(file, "package main\n"); err != nil {
		t.Fatal(err)
	}
	sb.Fake.Reply(fakegemini.Call("write_file", map[string]any{"file_path": file, "content": "package main\n\nfunc main() {}"}))
	sb.Fake.Reply(fakegemini.Text("Done."))
	c := startAdapter(t, sb)
	c.initialize(false)
	sid := c.newSession(sb.Workspace)
	if got := c.stopReason(c.prompt(sid, "add main")); got != "end_turn" {
		t.Fatalf("stop reason %q", got)
	}
	if got, _ := testkit.ReadFile(t, file); got != "package main\n\nfunc main() {}\n" {
		t.Fatalf("file %q; want the approved text with its final newline", got)
	}
	for _, e := range c.events() {
		if e.Ev == "read" || e.Ev == "write" {
			t.Fatalf("the client was asked to %s %s without offering it", e.Ev, e.Path)
		}
	}
	if _, last, ok := toolUpdates(c.updates(sid), "edit"); !ok || last.Status != "completed" {
		t.Fatalf("edit's last update %+v; want completed", last)
	}
}

// Cancel stops a command for real: cancelled the moment the server says it
// runs (before the server has spawned it: a testkit.SpawnGate holds the
// spawn until the cancel has reached the server), and cancelled while it runs,
// the prompt answers cancelled, the command's process is gone and the file
// it would have written after its sleep never appears. A shell command is
// asked (kind execute, the command shown) and, denied, does not run; nor
// does one whose permission request the client cancels. After a cancel
// the session answers the next prompt.
func TestShellDeniedAndCancelMidTurn(t *testing.T) {
	t.Parallel()
	const early = "30.6263"
	sb := newSandbox(t)
	// The gate goes to the server only, as a user's server environment; its
	// marker (on the adapter's command line too) is not the sleep's.
	gate := testkit.NewSpawnGate(t, "touch early.txt")
	var serverEnv []string
	for _, kv := range gate.Env {
		serverEnv = append(serverEnv, "--server-env", kv)
	}
	c := startAdapter(t, sb, serverEnv...)
	c.initialize(true)
	sid := c.newSession(sb.Workspace)

	// The session's first prompt: a command allowed and cancelled the moment
	// the server says it runs: the server spawns it only after the cancel
	// reached it, and it must still not run to its end.
	sb.Fake.Reply(fakegemini.Call("run_shell_command", map[string]any{"command": "sleep " + early + " && touch early.txt"}))
	c.ok(map[string]any{"op": "permission", "answer": "kind:allow_once"}, nil)
	from := len(c.events())
	tag := c.prompt(sid, "run the other slow one")
	c.wait(from, 2*time.Minute, "the command to run", func(e event) bool {
		return e.Ev == "update" && e.Update.SessionUpdate == "tool_call_update" && e.Update.Status == "in_progress"
	})
	gate.WaitHeld(t, time.Minute)
	c.ok(map[string]any{"op": "cancel", "sessionId": sid}, nil)
	if got := c.stopReason(tag); got != "cancelled" {
		t.Fatalf("stop reason after an early cancel %q, want cancelled", got)
	}
	t.Cleanup(func() { testkit.KillWith("sleep " + early) })
	pid := gate.WaitSpawned(t, time.Minute)
	gate.Check(t)
	testkit.WaitPIDGone(t, "the command spawned after the cancel", pid, 15*time.Second)
	testkit.WaitNoProcess(t, "sleep "+early)
	if _, exists := testkit.ReadFile(t, filepath.Join(sb.Workspace, "early.txt")); exists {
		t.Fatal("the command cancelled as it started still wrote its file")
	}

	sb.Fake.Reply(fakegemini.Call("run_shell_command", map[string]any{"command": "touch denied.txt"}))
	c.ok(map[string]any{"op": "permission", "answer": "kind:reject_once"}, nil)
	from = len(c.events())
	if got := c.stopReason(c.prompt(sid, "touch it")); got != "end_turn" {
		t.Fatalf("stop reason %q", got)
	}
	perm, _ := c.wait(from, time.Second, "the permission request", func(e event) bool { return e.Ev == "permission" })
	var pp permissionParams
	_ = json.Unmarshal(perm.Params, &pp)
	if pp.ToolCall.Kind != "execute" || !strings.Contains(string(pp.ToolCall.Content), "touch denied.txt") || !strings.Contains(pp.ToolCall.Title, "touch denied.txt") {
		t.Fatalf("permission request %s; want the shell command shown", perm.Params)
	}
	if _, exists := testkit.ReadFile(t, filepath.Join(sb.Workspace, "denied.txt")); exists {
		t.Fatal("the denied command ran")
	}

	// A permission request the client cancels denies the call.
	sb.Fake.Reply(fakegemini.Call("run_shell_command", map[string]any{"command": "touch unanswered.txt"}))
	c.ok(map[string]any{"op": "permission", "answer": "cancelled"}, nil)
	if got := c.stopReason(c.prompt(sid, "touch another")); got != "end_turn" {
		t.Fatalf("stop reason %q", got)
	}
	if _, exists := testkit.ReadFile(t, filepath.Join(sb.Workspace, "unanswered.txt")); exists {
		t.Fatal("a command whose permission request was cancelled ran")
	}

	const marker = "30.5171"
	sb.Fake.Reply(fakegemini.Call("run_shell_command", map[string]any{"command": "sleep " + marker + " && touch late.txt"}))
	c.ok(map[string]any{"op": "permission", "answer": "kind:allow_once"}, nil)
	from = len(c.events())
	tag = c.prompt(sid, "run the slow one")
	c.wait(from, 2*time.Minute, "the command to run", func(e event) bool {
		return e.Ev == "update" && e.Update.SessionUpdate == "tool_call_update" && e.Update.Status == "in_progress"
	})
	if !testkit.Poll(30*time.Second, func() bool { return processWith(marker) }) {
		t.Fatal("the approved command never started")
	}
	start := time.Now()
	c.ok(map[string]any{"op": "cancel", "sessionId": sid}, nil)
	if got := c.stopReason(tag); got != "cancelled" {
		t.Fatalf("stop reason after cancel %q, want cancelled", got)
	}
	t.Logf("cancelled in %v", time.Since(start))
	testkit.WaitNoProcess(t, marker)
	if _, exists := testkit.ReadFile(t, filepath.Join(sb.Workspace, "late.txt")); exists {
		t.Fatal("the cancelled command still wrote its file")
	}
	if _, last, ok := toolUpdates(c.updates(sid)[0:], "execute"); !ok || last.Status == "in_progress" {
		t.Fatalf("the cancelled command is left %+v", last)
	}

	sb.Fake.Reply(fakegemini.Text("Still here."))
	before := len(c.updates(sid))
	if got := c.stopReason(c.prompt(sid, "are you there?")); got != "end_turn" {
		t.Fatalf("after cancel: stop reason %q", got)
	}
	if got := messageText(c.updates(sid)[before:]); got != "Still here." {
		t.Fatalf("after cancel the session answered %q", got)
	}
}

// The adapter killed (SIGKILL: it can stop nothing) while its server runs an
// approved command: the server and the command end by themselves.
func TestServerEndsWithAKilledAdapter(t *testing.T) {
	t.Parallel()
	sb := newSandbox(t)
	c := startAdapter(t, sb)
	c.initialize(true)
	sid := c.newSession(sb.Workspace)
	const marker = "sleep 300.751"
	t.Cleanup(func() { testkit.KillWith(marker) })
	sb.Fake.Reply(fakegemini.Call("run_shell_command", map[string]any{"command": marker}))
	c.ok(map[string]any{"op": "permission", "answer": "kind:allow_once"}, nil)
	c.prompt(sid, "run the long one")
	testkit.WaitProcess(t, marker)
	adapter := testkit.ProcessWith(t, filepath.Join(sb.Home, "acp.log"))
	server := testkit.ChildWith(t, adapter, "a2a-server")
	t.Cleanup(func() {
		if p, err := os.FindProcess(server); err == nil {
			_ = p.Kill()
		}
	})
	p, err := os.FindProcess(adapter)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Kill(); err != nil {
		t.Fatal(err)
	}
	testkit.WaitPIDGone(t, "the A2A server of the killed adapter", server, 30*time.Second)
	testkit.WaitNoProcess(t, marker)
}
