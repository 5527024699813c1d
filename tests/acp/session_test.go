package acp_test

import (
	"encoding/json"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gemini-ide-companion/gemini-ide-companion/tests/fakegemini"
	"github.com/gemini-ide-companion/gemini-ide-companion/tests/testkit"
)

// The MCP servers the client passes with session/new reach the A2A server
// (its settings' mcpServers): the model's call of the client's tool is
// asked with the MCP options (this tool, this server), and once allowed
// the tool really runs.
func TestClientMCPServersReachTheAgent(t *testing.T) {
	t.Parallel()
	sb := newSandbox(t)
	bin := filepath.Join(t.TempDir(), "appendmcp")
	build := exec.Command("go", "build", "-o", bin, "./tests/a2a/appendmcp")
	build.Dir = testkit.ModuleRoot(t)
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building the test MCP server: %v\n%s", err, out)
	}
	notes := filepath.Join(sb.Workspace, "notes.txt")
	sb.Fake.Reply(fakegemini.Call("append_line", map[string]any{"text": "from the editor's tool"}))
	sb.Fake.Reply(fakegemini.Text("Noted."))
	c := startAdapter(t, sb)
	c.initialize(true)
	var res struct {
		SessionID string `json:"sessionId"`
	}
	c.ok(map[string]any{"op": "new", "cwd": sb.Workspace, "mcpServers": []any{
		map[string]any{"name": "notes", "command": bin, "args": []string{"-file", notes}, "env": []any{}},
	}}, &res)
	if got := c.stopReason(c.prompt(res.SessionID, "note it")); got != "end_turn" {
		t.Fatalf("stop reason %q", got)
	}
	perm, _ := c.wait(0, time.Second, "the permission request", func(e event) bool { return e.Ev == "permission" })
	var pp permissionParams
	_ = json.Unmarshal(perm.Params, &pp)
	ids := map[string]bool{}
	for _, o := range pp.Options {
		ids[o.OptionID] = true
	}
	if !ids["proceed_always_tool"] || !ids["proceed_always_server"] || !strings.Contains(string(pp.ToolCall.Content), "notes") {
		t.Fatalf("permission request %s; want the MCP tool of server notes with its options", perm.Params)
	}
	if got, _ := testkit.ReadFile(t, notes); got != "from the editor's tool\n" {
		t.Fatalf("notes %q; the client's MCP server's tool did not run", got)
	}
	if !strings.Contains(messageText(c.updates(res.SessionID)), "Noted.") {
		t.Fatal("no answer after the tool")
	}
}

// A session is loaded again after the adapter restarted: with the A2A
// server run by the user (--agent), the session's task is still there, and
// session/load replays it (the user's prompt, the agent's text, its tool
// call, finished) before it answers; the next prompt goes on in the same
// conversation. (The client's MCP servers cannot reach a server the user
// runs: session/new says which were not passed on.) With a server the adapter started, the task died with it,
// and session/load says so.
func TestLoadAfterRestart(t *testing.T) {
	t.Parallel()
	sb := newSandbox(t)
	srv := sb.startAgent(t)

	sb.Fake.Reply(fakegemini.Text("Let me look."), fakegemini.Call("run_shell_command", map[string]any{"command": "echo replayed-output"}))
	sb.Fake.Reply(fakegemini.Text("First answer."))
	c1 := startAdapter(t, sb, "--agent", srv.URL)
	c1.initialize(true)
	// The server is the user's: the client's MCP servers are not passed on,
	// and the answer says so.
	var res struct {
		SessionID string `json:"sessionId"`
		Meta      struct {
			Adapter struct {
				Ignored []string `json:"mcpServersIgnored"`
			} `json:"gemini-a2a-acp"`
		} `json:"_meta"`
	}
	c1.ok(map[string]any{"op": "new", "cwd": sb.Workspace, "mcpServers": []any{
		map[string]any{"name": "notes", "command": "true", "args": []string{}, "env": []any{}},
	}}, &res)
	sid := res.SessionID
	if len(res.Meta.Adapter.Ignored) != 1 || res.Meta.Adapter.Ignored[0] != "notes" {
		t.Fatalf("session/new with --agent and an MCP server: %+v; want it named as not passed on", res)
	}
	if got := c1.stopReason(c1.prompt(sid, "first question")); got != "end_turn" {
		t.Fatalf("stop reason %q", got)
	}
	c1.stop()

	c2 := startAdapter(t, sb, "--agent", srv.URL)
	c2.initialize(true)
	c2.ok(map[string]any{"op": "load", "sessionId": sid, "cwd": sb.Workspace}, nil)
	replayed := c2.updates(sid)
	var user string
	for _, u := range replayed {
		if u.SessionUpdate == "user_message_chunk" {
			user += u.text()
		}
	}
	if user != "first question" || !strings.Contains(messageText(replayed), "First answer.") {
		t.Fatalf("replayed user %q, agent %q; want the first turn (updates %v)", user, messageText(replayed), kinds(replayed))
	}
	if _, last, ok := toolUpdates(replayed, "execute"); !ok || last.Status != "completed" || !strings.Contains(string(last.Content), "replayed-output") {
		t.Fatalf("replayed shell call %+v; want it completed with its output", last)
	}
	sb.Fake.Reply(fakegemini.Text("Second answer."))
	if got := c2.stopReason(c2.prompt(sid, "second question")); got != "end_turn" {
		t.Fatalf("stop reason %q after load", got)
	}
	reqs := sb.Fake.Requests()
	if last := reqs[len(reqs)-1].Text(); !strings.Contains(last, "first question") || !strings.Contains(last, "second question") {
		t.Fatalf("the model's request after load lacks the conversation: %q", last)
	}

}

// A session whose A2A server the adapter started is gone after the adapter
// restarted (the server stopped with it, and its tasks with it): session/load
// says so, and how to keep sessions.
func TestLoadOfAStartedServersSession(t *testing.T) {
	t.Parallel()
	sb := newSandbox(t)
	sb.Fake.Reply(fakegemini.Text("Gone soon."))
	c3 := startAdapter(t, sb)
	c3.initialize(true)
	sid3 := c3.newSession(sb.Workspace)
	c3.stopReason(c3.prompt(sid3, "hello"))
	c3.stop()
	c4 := startAdapter(t, sb)
	c4.initialize(true)
	ev := c4.result(c4.send(map[string]any{"op": "load", "sessionId": sid3, "cwd": sb.Workspace}), 3*time.Minute)
	if ev.Error == nil || ev.Error.Code != -32002 || !strings.Contains(ev.Error.Message, "--agent") {
		t.Fatalf("loading a session whose server stopped: %+v; want a not-found error that says how to keep sessions", ev.Error)
	}
}
