//go:build !windows

package a2a_test

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gemini-ide-companion/gemini-ide-companion/tests/fakegemini"
	"github.com/gemini-ide-companion/gemini-ide-companion/tests/testkit"
)

// TestGenericTools drives the five generic A2A tools against the real
// server: load, list, a message whose turn waits on a confirmation, the
// confirmation answered, the task read back and cancelled.
func TestGenericTools(t *testing.T) {
	t.Parallel()
	sb := newSandbox(t)
	srv := sb.startAgent(t)
	b := startBridge(t, nil, "--no-start", "--timeout", "90s")

	ag := b.ok(t, "load_agent", map[string]any{"url": srv.URL + "/.well-known/agent-card.json", "name": "coder"})
	if ag["name"] != "coder" || ag["url"] != srv.URL {
		t.Fatalf("load_agent = %v", ag)
	}
	list := b.ok(t, "list_agents", nil)
	if fmt.Sprint(list["agents"]) == "[]" || !strings.Contains(fmt.Sprint(list["agents"]), srv.URL) {
		t.Fatalf("list_agents = %v", list)
	}

	path := filepath.Join(sb.Workspace, "generic.txt")
	sb.Fake.Reply(fakegemini.Call("write_file", map[string]any{"file_path": path, "content": "via send_message\n"}))
	sb.Fake.Reply(fakegemini.Text("Written."))
	out := b.ok(t, "send_message", map[string]any{"agent": "coder", "text": "write generic.txt"})
	pending, _ := out["pending"].([]any)
	if out["state"] != "input-required" || len(pending) != 1 {
		t.Fatalf("send_message = %v; want input-required with one pending confirmation", out)
	}
	p := pending[0].(map[string]any)
	if p["tool"] != "write_file" || p["kind"] != "file_edit" || p["path"] != path {
		t.Fatalf("pending = %v", p)
	}
	taskID := out["taskId"].(string)

	got := b.ok(t, "get_task", map[string]any{"agent": "coder", "taskId": taskID, "history": true})
	if got["state"] != "input-required" || len(got["pending"].([]any)) != 1 {
		t.Fatalf("get_task while waiting = %v", got)
	}

	out = b.ok(t, "send_message", map[string]any{"agent": "coder", "taskId": taskID,
		"confirm": map[string]any{"callId": p["callId"], "outcome": "proceed_once"}})
	if !strings.Contains(out["text"].(string), "Written.") || len(out["pending"].([]any)) != 0 {
		t.Fatalf("send_message(confirm) = %v", out)
	}
	if c, _ := testkit.ReadFile(t, path); c != "via send_message\n" {
		t.Fatalf("file = %q", c)
	}

	c := b.ok(t, "cancel_task", map[string]any{"agent": srv.URL, "taskId": taskID})
	if c["state"] != "canceled" {
		t.Fatalf("cancel_task = %v", c)
	}
	got = b.ok(t, "get_task", map[string]any{"agent": "coder", "taskId": taskID})
	if got["state"] != "canceled" {
		t.Fatalf("get_task after cancel = %v", got)
	}
	b.fails(t, "get_task", map[string]any{"agent": "coder", "taskId": "no-such-task"}, "tasks/get")
	b.fails(t, "send_message", map[string]any{"agent": "coder"}, "give text")
	b.fails(t, "send_message", map[string]any{"agent": "coder", "confirm": map[string]any{"callId": "x", "outcome": "proceed_once"}}, "taskId")
}

// TestTwoSessionsAndLargeEdit runs two supervised sessions at once, one of
// them an edit whose event is far over a2a-go's 64 KiB SSE line limit.
func TestTwoSessionsAndLargeEdit(t *testing.T) {
	t.Parallel()
	sb := newSandbox(t)
	srv := sb.startAgent(t)
	b := startBridge(t, nil, "--agent", srv.URL)

	big := strings.Repeat("all work and no play makes jack a dull boy\n", 5000) // ~220 KB
	paths := map[string]string{filepath.Join(sb.Workspace, "one.txt"): big, filepath.Join(sb.Workspace, "two.txt"): "two\n"}
	for p, c := range paths {
		sb.Fake.Reply(fakegemini.Call("write_file", map[string]any{"file_path": p, "content": c}))
	}
	s1 := b.ok(t, "gemini_task_start", map[string]any{"task": "first"})["session_id"].(string)
	s2 := b.ok(t, "gemini_task_start", map[string]any{"task": "second"})["session_id"].(string)
	seen := map[string]bool{}
	for _, sid := range []string{s1, s2} {
		st, _ := b.waitStatus(t, sid, "waiting")
		d := st["decision"].(map[string]any)
		path := d["path"].(string)
		if _, ok := paths[path]; !ok || seen[path] {
			t.Fatalf("session %s decision path %q", sid, path)
		}
		seen[path] = true
		if paths[path] == big && len(d["diff"].(string)) < len(big) {
			t.Fatalf("large edit's diff truncated to %d bytes", len(d["diff"].(string)))
		}
	}
	for _, sid := range []string{s1, s2} {
		b.ok(t, "gemini_respond", map[string]any{"session_id": sid, "decision": "approved"})
	}
	for _, sid := range []string{s1, s2} {
		b.waitStatus(t, sid, "complete")
	}
	for p, c := range paths {
		if got, _ := testkit.ReadFile(t, p); got != c {
			t.Fatalf("%s has %d bytes; want %d", p, len(got), len(c))
		}
	}
	// Both first edits went through the one shadow repository made before
	// the server started; the server never had to create it (which is where
	// two tasks race and one fails).
	sum := sha256.Sum256([]byte(sb.Workspace))
	repo := filepath.Join(sb.Home, ".gemini", "history", hex.EncodeToString(sum[:]))
	out, err := exec.Command("git", "--git-dir", filepath.Join(repo, ".git"), "log", "--format=%s", "main").CombinedOutput()
	if err != nil {
		t.Fatalf("the agent's history repository: %v: %s", err, out)
	}
	if n := strings.Count(string(out), "Initial commit"); n != 1 {
		t.Fatalf("history has %d initial commits; want 1:\n%s", n, out)
	}
}

// TestAgentFailures: an unreachable agent and a server that dies mid-task
// give clear tool errors and statuses; the bridge keeps serving.
func TestAgentFailures(t *testing.T) {
	t.Parallel()
	sb := newSandbox(t)
	srv := sb.startAgent(t)
	b := startBridge(t, nil, "--agent", srv.URL, "--timeout", "20s")

	// Unreachable: a port nobody listens on.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := "http://" + l.Addr().String()
	l.Close()
	b.fails(t, "load_agent", map[string]any{"url": dead}, "unreachable")
	b.fails(t, "load_agent", map[string]any{"url": "not a url"}, "http(s) URL")

	path := filepath.Join(sb.Workspace, "dies.txt")
	sb.Fake.Reply(fakegemini.Call("write_file", map[string]any{"file_path": path, "content": "x\n"}))
	sid := b.ok(t, "gemini_task_start", map[string]any{"task": "edit"})["session_id"].(string)
	b.waitStatus(t, sid, "waiting")
	if err := syscall.Kill(srv.PID(), syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-srv.Done()
	b.ok(t, "gemini_respond", map[string]any{"session_id": sid, "decision": "approved"})
	st, _ := b.waitStatus(t, sid, "failed")
	if !strings.Contains(st["error"].(string), "lost the agent") {
		t.Fatalf("status after the server died = %v", st)
	}
	start := time.Now()
	b.fails(t, "gemini_consult", map[string]any{"question": "still there?"}, "")
	if time.Since(start) > 25*time.Second {
		t.Fatalf("consult with a dead agent took %s", time.Since(start))
	}
	// Still serving.
	b.ok(t, "list_agents", nil)
	if _, err := os.Stat(path); err == nil {
		t.Fatal("edit applied by a dead server")
	}
}
