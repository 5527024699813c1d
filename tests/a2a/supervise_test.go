package a2a_test

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/gemini-ide-companion/gemini-ide-companion/tests/fakegemini"
	"github.com/gemini-ide-companion/gemini-ide-companion/tests/testkit"
)

// TestSupervise covers the gemini_* tools against one real A2A server: a
// file edit approved, denied and modified, a shell command, cancel, and a
// synchronous consultation. Subtests share the server (and the fake model's
// script) so they run in order.
func TestSupervise(t *testing.T) {
	sb := newSandbox(t)
	srv := sb.startAgent(t)
	b := startBridge(t, nil, "--agent", srv.URL, "--timeout", "90s")

	t.Run("EditApproved", func(t *testing.T) {
		path := filepath.Join(sb.Workspace, "hello.txt")
		sb.Fake.Reply(fakegemini.Call("write_file", map[string]any{"file_path": path, "content": "hello from gemini\n"}))
		sb.Fake.Reply(fakegemini.Text("I wrote hello.txt."))
		sid := b.start(t, "create hello.txt")
		st, _ := b.waitStatus(t, sid, "waiting")
		d, _ := st["decision"].(map[string]any)
		if d["type"] != "file_edit" || d["path"] != path || !strings.Contains(d["diff"].(string), "+hello from gemini") {
			t.Fatalf("decision = %v; want a file_edit of %s with its diff", d, path)
		}
		if _, exists := testkit.ReadFile(t, path); exists {
			t.Fatal("file written before approval")
		}
		ack := b.ok(t, "gemini_respond", map[string]any{"session_id": sid, "decision": "approved"})
		if ack["acknowledged"] != true {
			t.Fatalf("respond = %v", ack)
		}
		st, progress := b.waitStatus(t, sid, "complete")
		if got, _ := testkit.ReadFile(t, path); got != "hello from gemini\n" {
			t.Fatalf("file after approval = %q", got)
		}
		if !strings.Contains(st["result"].(string), "I wrote hello.txt.") {
			t.Fatalf("result = %v; progress %q", st["result"], progress)
		}
	})

	t.Run("EditDenied", func(t *testing.T) {
		path := filepath.Join(sb.Workspace, "keep.txt")
		writeFile(t, path, "original\n")
		sb.Fake.Reply(fakegemini.Call("write_file", map[string]any{"file_path": path, "content": "clobbered\n"}))
		sid := b.start(t, "rewrite keep.txt")
		b.waitStatus(t, sid, "waiting")
		b.ok(t, "gemini_respond", map[string]any{"session_id": sid, "decision": "denied"})
		b.waitStatus(t, sid, "complete")
		if got, _ := testkit.ReadFile(t, path); got != "original\n" {
			t.Fatalf("file after denial = %q; want it untouched", got)
		}
	})

	t.Run("EditModified", func(t *testing.T) {
		path := filepath.Join(sb.Workspace, "mod.txt")
		writeFile(t, path, "v1\n")
		sb.Fake.Reply(fakegemini.Call("write_file", map[string]any{"file_path": path, "content": "agent's version\n"}))
		sb.Fake.Reply(fakegemini.Text("Noted your version."))
		sid := b.start(t, "update mod.txt")
		b.waitStatus(t, sid, "waiting")
		ack := b.ok(t, "gemini_respond", map[string]any{"session_id": sid, "decision": "modify: user's version\n"})
		if !strings.Contains(ack["note"].(string), path) {
			t.Fatalf("respond = %v", ack)
		}
		st, _ := b.waitStatus(t, sid, "complete")
		if st["result"] != "Noted your version." {
			t.Fatalf("result = %v; want the agent's reply to the note", st["result"])
		}
		if got, _ := testkit.ReadFile(t, path); got != "user's version\n" {
			t.Fatalf("file after modify = %q; want the user's version", got)
		}
	})

	t.Run("ShellCommand", func(t *testing.T) {
		sb.Fake.Reply(fakegemini.Call("run_shell_command", map[string]any{"command": "echo ran > shell-out.txt", "description": "write a file"}))
		sb.Fake.Reply(fakegemini.Text("Command done."))
		sid := b.start(t, "run the command")
		st, _ := b.waitStatus(t, sid, "waiting")
		d, _ := st["decision"].(map[string]any)
		if d["type"] != "shell_command" || !strings.Contains(d["command"].(string), "echo ran > shell-out.txt") {
			t.Fatalf("decision = %v; want the shell command", d)
		}
		b.ok(t, "gemini_respond", map[string]any{"session_id": sid, "decision": map[string]any{"answer": "approved"}})
		b.waitStatus(t, sid, "complete")
		if got, _ := testkit.ReadFile(t, filepath.Join(sb.Workspace, "shell-out.txt")); strings.TrimSpace(got) != "ran" {
			t.Fatalf("shell output file = %q", got)
		}
	})

	t.Run("Cancel", func(t *testing.T) {
		path := filepath.Join(sb.Workspace, "never.txt")
		sb.Fake.Reply(fakegemini.Call("write_file", map[string]any{"file_path": path, "content": "x\n"}))
		sid := b.start(t, "write never.txt")
		b.waitStatus(t, sid, "waiting")
		out := b.ok(t, "gemini_cancel", map[string]any{"session_id": sid})
		if out["status"] != "cancelled" {
			t.Fatalf("cancel = %v", out)
		}
		st := b.ok(t, "gemini_status", map[string]any{"session_id": sid})
		if st["status"] != "cancelled" {
			t.Fatalf("status after cancel = %v", st)
		}
		b.fails(t, "gemini_respond", map[string]any{"session_id": sid, "decision": "approved"}, "cancelled")
		if _, exists := testkit.ReadFile(t, path); exists {
			t.Fatal("cancelled edit reached the disk")
		}
	})

	t.Run("CancelStopsRunningCommand", func(t *testing.T) {
		late := filepath.Join(sb.Workspace, "late.txt")
		// A command that would leave a file after a delay far longer than
		// the test: once no process of it is left, the file can never come.
		command := "sleep 30.217 && echo late > late.txt"
		sb.Fake.Reply(fakegemini.Call("run_shell_command", map[string]any{"command": command, "description": "slow"}))
		sid := b.start(t, "run the slow command")
		b.waitStatus(t, sid, "waiting")
		b.ok(t, "gemini_respond", map[string]any{"session_id": sid, "decision": "approved"})
		waitProgress(t, b, sid, "run_shell_command executing")
		out := b.ok(t, "gemini_cancel", map[string]any{"session_id": sid})
		if out["status"] != "cancelled" || !strings.Contains(fmt.Sprint(out["note"]), "stopped `"+command+"`") {
			t.Fatalf("cancel = %v; want cancelled, saying it stopped the command", out)
		}
		testkit.WaitNoProcess(t, "sleep 30.217")
		if _, exists := testkit.ReadFile(t, late); exists {
			t.Fatal("the cancelled command ran to its end")
		}
	})

	t.Run("EditKeepsFinalNewline", func(t *testing.T) {
		path := filepath.Join(sb.Workspace, "list.txt")
		writeFile(t, path, "one\ntwo\n")
		sb.Fake.Reply(fakegemini.Call("write_file", map[string]any{"file_path": path, "content": "one\ntwo\nthree\n"}))
		sb.Fake.Reply(fakegemini.Text("Added three."))
		sid := b.start(t, "add three")
		st, _ := b.waitStatus(t, sid, "waiting")
		d, _ := st["decision"].(map[string]any)
		diff, _ := d["diff"].(string)
		if !strings.Contains(diff, "+three") || strings.Contains(diff, "No newline") || !strings.Contains(fmt.Sprint(d["note"]), "final newline") {
			t.Fatalf("decision = %v; want the edit with the file's final newline kept, and a note saying so", d)
		}
		b.ok(t, "gemini_respond", map[string]any{"session_id": sid, "decision": "approved"})
		b.waitStatus(t, sid, "complete")
		if got, _ := testkit.ReadFile(t, path); got != "one\ntwo\nthree\n" {
			t.Fatalf("file after approval = %q; want the final newline kept", got)
		}
	})

	t.Run("Consult", func(t *testing.T) {
		sb.Fake.Reply(fakegemini.Text("Use a sync.Mutex around the map."))
		out := b.ok(t, "gemini_consult", map[string]any{"question": "How do I guard a map?", "model": "flash"})
		if out["response"] != "Use a sync.Mutex around the map." {
			t.Fatalf("consult = %v", out)
		}
		if !strings.Contains(out["model_note"].(string), "fixes its model") {
			t.Fatalf("model_note = %v", out["model_note"])
		}
	})

	t.Run("SyncStartWithProgress", func(t *testing.T) {
		sb.Fake.Reply(fakegemini.Text("Sync answer."))
		params := &mcp.CallToolParams{Name: "gemini_task_start", Arguments: map[string]any{"task": "say it", "async": false}}
		params.SetProgressToken("tok-1")
		res, err := b.cs.CallTool(context.Background(), params)
		if err != nil || res.IsError {
			t.Fatalf("gemini_task_start: %v %v", err, res)
		}
		out, _ := res.StructuredContent.(map[string]any)
		if out["status"] != "complete" || out["result"] != "Sync answer." {
			t.Fatalf("synchronous start = %v", out)
		}
		// The client runs notification handlers apart from the call that
		// returns the result, so the last notification may be handled just
		// after the result.
		var progress string
		if !testkit.Poll(10*time.Second, func() bool {
			b.mu.Lock()
			defer b.mu.Unlock()
			progress = strings.Join(b.progress, "\n")
			return strings.Contains(progress, "text: Sync answer.")
		}) {
			t.Fatalf("progress notifications = %q", progress)
		}
	})

	t.Run("BadInput", func(t *testing.T) {
		b.fails(t, "gemini_status", map[string]any{"session_id": "gs-nope"}, "unknown session_id")
		b.fails(t, "gemini_respond", map[string]any{"session_id": "gs-nope", "decision": "approved"}, "unknown session_id")
		b.fails(t, "gemini_cancel", map[string]any{"session_id": ""}, "session_id is required")
		b.fails(t, "gemini_task_start", map[string]any{"task": " "}, "task is required")
		b.fails(t, "gemini_status", map[string]any{"session_id": "gs-nope", "wait_s": -1}, "")
		b.fails(t, "send_message", map[string]any{"agent": "nobody", "text": "hi"}, "unknown agent")
		b.fails(t, "get_task", map[string]any{"agent": "", "taskId": "x"}, "agent is required")
	})
}

// waitProgress polls gemini_status until the session's progress has an
// entry containing want.
func waitProgress(t *testing.T, b *bridge, sid, want string) {
	t.Helper()
	var seen []string
	deadline := time.Now().Add(2 * time.Minute)
	for time.Now().Before(deadline) {
		st := b.ok(t, "gemini_status", map[string]any{"session_id": sid, "wait_s": 5})
		ps, _ := st["progress"].([]any)
		for _, p := range ps {
			m, _ := p.(map[string]any)
			line := fmt.Sprint(m["kind"], ": ", m["text"])
			seen = append(seen, line)
			if strings.Contains(line, want) {
				return
			}
		}
	}
	t.Fatalf("no progress %q; saw %q", want, seen)
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := osWriteFile(path, content); err != nil {
		t.Fatal(err)
	}
}
