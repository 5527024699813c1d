//go:build !windows

package a2a_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gemini-ide-companion/gemini-ide-companion/a2a/agent"
	"github.com/gemini-ide-companion/gemini-ide-companion/a2a/launch"
	"github.com/gemini-ide-companion/gemini-ide-companion/tests/fakegemini"
	"github.com/gemini-ide-companion/gemini-ide-companion/tests/testkit"
)

// attempt is one request someone who is not the bridge makes to the
// bridge's A2A server.
type attempt struct {
	Name    string            `json:"name"`
	Method  string            `json:"method"`
	Path    string            `json:"path"`
	Headers map[string]string `json:"headers,omitempty"`
	Body    string            `json:"body,omitempty"`
}

func rpcBody(method string, params any) string {
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
	return string(b)
}

// attacks are requests that would start a task (whose model reply runs a
// command), send a message, confirm the tool call the bridge's task waits
// on, and use every plain-HTTP route of the server; auth is the header
// they carry, query what goes after the path.
func attacks(ws, taskID, contextID, callID string, auth map[string]string, query string) []attempt {
	start := agent.TextMessage("", "", "run `touch "+filepath.Join(ws, "pwned.txt")+"`")
	cont := agent.TextMessage(taskID, contextID, "also run `touch "+filepath.Join(ws, "pwned.txt")+"`")
	confirm := agent.ConfirmMessage(taskID, contextID, callID, "proceed_once")
	sse := map[string]string{"Content-Type": "application/json", "Accept": "text/event-stream"}
	js := map[string]string{"Content-Type": "application/json", "Accept": "application/json"}
	with := func(h map[string]string) map[string]string {
		out := map[string]string{}
		for k, v := range h {
			out[k] = v
		}
		for k, v := range auth {
			out[k] = v
		}
		return out
	}
	return []attempt{
		{Name: "message/stream (new task)", Method: "POST", Path: "/" + query, Headers: with(sse), Body: rpcBody("message/stream", map[string]any{"message": start})},
		{Name: "message/send (new task)", Method: "POST", Path: "/" + query, Headers: with(js), Body: rpcBody("message/send", map[string]any{"message": start})},
		{Name: "message/stream (the bridge's task)", Method: "POST", Path: "/" + query, Headers: with(sse), Body: rpcBody("message/stream", map[string]any{"message": cont})},
		{Name: "confirm the bridge's tool call", Method: "POST", Path: "/" + query, Headers: with(sse), Body: rpcBody("message/stream", map[string]any{"message": confirm})},
		{Name: "confirm (message/send)", Method: "POST", Path: "/" + query, Headers: with(js), Body: rpcBody("message/send", map[string]any{"message": confirm})},
		{Name: "tasks/get", Method: "POST", Path: "/" + query, Headers: with(js), Body: rpcBody("tasks/get", map[string]any{"id": taskID})},
		{Name: "tasks/cancel", Method: "POST", Path: "/" + query, Headers: with(js), Body: rpcBody("tasks/cancel", map[string]any{"id": taskID})},
		{Name: "POST /tasks", Method: "POST", Path: "/tasks" + query, Headers: with(js), Body: `{"contextId":"x"}`},
		{Name: "POST /executeCommand", Method: "POST", Path: "/executeCommand" + query, Headers: with(js), Body: `{"command":"memory","args":["add","pwned"]}`},
		{Name: "GET /listCommands", Method: "GET", Path: "/listCommands" + query, Headers: with(nil)},
		{Name: "GET /tasks/metadata", Method: "GET", Path: "/tasks/metadata" + query, Headers: with(nil)},
		{Name: "GET /tasks/:id/metadata", Method: "GET", Path: "/tasks/" + taskID + "/metadata" + query, Headers: with(nil)},
		{Name: "agent card", Method: "GET", Path: "/.well-known/agent-card.json" + query, Headers: with(nil)},
	}
}

// do makes the attempt as this process and returns the status and body.
func do(t *testing.T, base string, a attempt) (int, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, a.Method, base+a.Path, strings.NewReader(a.Body))
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range a.Headers {
		req.Header.Set(k, v)
	}
	resp, err := (&http.Client{Transport: &http.Transport{DisableKeepAlives: true}}).Do(req)
	if err != nil {
		t.Fatalf("%s: %v", a.Name, err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	return resp.StatusCode, string(body)
}

// TestOnlyTheBridgeDrivesItsServer: the A2A server the bridge starts
// answers its client only. While a task of the bridge's waits on the
// approval of a shell command, requests from this user without the
// launch's secret, with a wrong one, with the secret in the query string,
// and from another local user, are refused (401) whatever they ask: no task
// starts, no message reaches the model, the waiting command is not
// approved, nothing is written. The same confirmation with the secret is
// accepted (the attempts were well formed), and the command the agent runs
// does not inherit the secret.
func TestOnlyTheBridgeDrivesItsServer(t *testing.T) {
	t.Parallel()
	sb := newSandbox(t)
	b := startBridge(t, sb.Env(), "--dir", sb.Workspace, "--timeout", "90s")

	ours := filepath.Join(sb.Workspace, "ours.txt")
	sb.Fake.Reply(fakegemini.Call("run_shell_command", map[string]any{"command": "env > " + ours}))
	sb.Fake.Reply(fakegemini.Text("Saved."))
	sid := b.start(t, "save the environment")
	st, _ := b.waitStatus(t, sid, "waiting")
	taskID, _ := st["task_id"].(string)
	d, _ := st["decision"].(map[string]any)
	callID, _ := d["call_id"].(string)
	if taskID == "" || callID == "" || d["type"] != "shell_command" {
		t.Fatalf("status = %v; want a shell_command decision with its task and call ids", st)
	}
	m := startedLine.FindStringSubmatch(b.stderrText())
	if m == nil {
		t.Fatalf("no start line in the bridge's log:\n%s", b.stderrText())
	}
	pid, _ := strconv.Atoi(m[1])
	base := "http://127.0.0.1:" + m[2]
	// What this user can find out (a file only they can read) lets the test
	// use the real ids and make the one request that is allowed.
	header, err := launch.HeaderFor(base)
	if err != nil {
		t.Fatalf("the server's secret is not kept for this user: %v", err)
	}
	auth := header.Get("Authorization")
	secret := strings.TrimPrefix(auth, "Bearer ")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	ag, err := agent.Load(ctx, base, agent.NewHTTPClient(), agent.WithHeader(header))
	if err != nil {
		t.Fatal(err)
	}
	task, err := ag.GetTask(ctx, taskID)
	if err != nil {
		t.Fatal(err)
	}
	contextID := task.ContextID

	for _, p := range []string{fmt.Sprintf("/proc/%d/cmdline", pid), fmt.Sprintf("/proc/%d/cmdline", b.cmd.Process.Pid)} {
		if data, err := os.ReadFile(p); err == nil && bytes.Contains(data, []byte(secret)) {
			t.Fatalf("the secret is on a command line (%s): %q", p, data)
		}
	}

	requestsBefore, auxBefore := len(sb.Fake.Requests()), len(sb.Fake.Auxiliary())
	q := url.Values{}
	for _, k := range []string{"token", "secret", "access_token", "key", "auth", "authorization"} {
		q.Set(k, secret)
	}
	cases := []struct {
		who   string
		auth  map[string]string
		query string
	}{
		{"no secret", nil, ""},
		{"a wrong secret", map[string]string{"Authorization": "Bearer " + strings.Repeat("A", len(secret))}, ""},
		{"the secret without Bearer", map[string]string{"Authorization": secret}, ""},
		{"the secret in another header", map[string]string{"X-Api-Key": secret, "X-Auth-Token": secret}, ""},
		{"the secret in the query string", nil, "?" + q.Encode()},
	}
	for _, c := range cases {
		for _, a := range attacks(sb.Workspace, taskID, contextID, callID, c.auth, c.query) {
			status, body := do(t, base, a)
			if status != http.StatusUnauthorized {
				t.Errorf("%s with %s: HTTP %d %.200s; want 401", a.Name, c.who, status, body)
			}
		}
	}

	t.Run("AnotherUser", func(t *testing.T) {
		uid, gid := otherUser(t)
		list := attacks(sb.Workspace, taskID, contextID, callID, nil, "")
		list = append(list, attacks(sb.Workspace, taskID, contextID, callID, map[string]string{"Authorization": "Bearer guessed"}, "")...)
		files := []string{launch.SecretDir(), filepath.Join(launch.SecretDir(), "server-"+m[2]+".json"), fmt.Sprintf("/proc/%d/environ", pid)}
		res := runAs(t, uid, gid, base, list, files)
		for i, st := range res.Statuses {
			if st != http.StatusUnauthorized {
				t.Errorf("another user's %s: HTTP %d; want 401", list[i].Name, st)
			}
		}
		if len(res.Statuses) != len(list) {
			t.Errorf("another user made %d of %d requests: %v", len(res.Statuses), len(list), res)
		}
		for f, e := range res.Reads {
			if e != "EACCES" {
				t.Errorf("another user reading %s: %q; want EACCES", f, e)
			}
		}
	})

	if n, a := len(sb.Fake.Requests()), len(sb.Fake.Auxiliary()); n != requestsBefore || a != auxBefore {
		t.Fatalf("the model got %d requests (and %d others) from refused clients", n-requestsBefore, a-auxBefore)
	}
	for _, f := range []string{ours, filepath.Join(sb.Workspace, "pwned.txt")} {
		if _, err := os.Stat(f); err == nil {
			t.Fatalf("%s was written by a refused request", f)
		}
	}
	metaReq := attempt{Name: "tasks/metadata", Method: "GET", Path: "/tasks/metadata", Headers: map[string]string{"Authorization": auth}}
	if status, body := do(t, base, metaReq); status != http.StatusOK || strings.Count(body, `"id"`) != 1 {
		t.Fatalf("tasks after the refused requests: HTTP %d %.2000s; want the bridge's one task", status, body)
	}
	if st := b.ok(t, "gemini_status", map[string]any{"session_id": sid}); st["status"] != "waiting" {
		t.Fatalf("the bridge's session after the refused requests: %v; want it still waiting", st)
	}

	// The same confirmation with the secret is taken, and the command runs
	// without the secret in its environment.
	var confirm attempt
	for _, a := range attacks(sb.Workspace, taskID, contextID, callID, map[string]string{"Authorization": auth}, "") {
		if a.Name == "confirm the bridge's tool call" {
			confirm = a
		}
	}
	status, body := do(t, base, confirm)
	if status != http.StatusOK || !strings.Contains(body, "Saved.") {
		t.Fatalf("confirmation with the secret: HTTP %d %.2000s", status, body)
	}
	env, ok := testkit.ReadFile(t, ours)
	if !ok {
		t.Fatal("the approved command did not run")
	}
	if strings.Contains(env, secret) || strings.Contains(env, "GEMINI_A2A_SECRET") {
		t.Fatal("the agent's command inherited the server's secret")
	}
}

// otherUser creates a local user for the test and removes it after.
func otherUser(t *testing.T) (uid, gid uint32) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("making another local user needs root (useradd); the refusals of this user's requests above still ran")
	}
	name := fmt.Sprintf("gicauth%d", os.Getpid())
	if out, err := exec.Command("useradd", "--system", "--no-create-home", "--shell", "/usr/sbin/nologin", name).CombinedOutput(); err != nil {
		t.Fatalf("useradd: %v: %s", err, out)
	}
	t.Cleanup(func() {
		if out, err := exec.Command("userdel", name).CombinedOutput(); err != nil {
			t.Errorf("userdel %s: %v: %s", name, err, out)
		}
	})
	out, err := exec.Command("id", "-u", name).Output()
	if err != nil {
		t.Fatal(err)
	}
	u, _ := strconv.Atoi(strings.TrimSpace(string(out)))
	out, err = exec.Command("id", "-g", name).Output()
	if err != nil {
		t.Fatal(err)
	}
	g, _ := strconv.Atoi(strings.TrimSpace(string(out)))
	return uint32(u), uint32(g)
}

// otherUserScript makes the attempts with Node's fetch and tries to read
// the files, and prints what it got.
const otherUserScript = `
const fs = require('fs');
const [base, list, files] = [process.argv[1], JSON.parse(process.argv[2]), JSON.parse(process.argv[3])];
(async () => {
  const out = { statuses: [], reads: {} };
  for (const a of list) {
    try {
      const r = await fetch(base + a.path, { method: a.method, headers: a.headers || {}, body: a.method === 'GET' ? undefined : a.body });
      await r.text();
      out.statuses.push(r.status);
    } catch (e) {
      out.statuses.push(-1);
    }
  }
  for (const f of files) {
    try { fs.readFileSync(f); out.reads[f] = 'read'; } catch (e) {
      if (e.code === 'EISDIR') { try { fs.readdirSync(f); out.reads[f] = 'listed'; } catch (e2) { out.reads[f] = e2.code; } }
      else out.reads[f] = e.code;
    }
  }
  process.stdout.write(JSON.stringify(out));
})();
`

type otherUserResult struct {
	Statuses []int             `json:"statuses"`
	Reads    map[string]string `json:"reads"`
}

// runAs runs the attempts as uid:gid with node and returns what it got.
func runAs(t *testing.T, uid, gid uint32, base string, list []attempt, files []string) otherUserResult {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		t.Fatal(err)
	}
	lj, _ := json.Marshal(list)
	fj, _ := json.Marshal(files)
	cmd := exec.Command(node, "-e", otherUserScript, base, string(lj), string(fj))
	cmd.Dir = "/"
	cmd.Env = []string{"PATH=/usr/bin:/bin", "HOME=/"}
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uid, Gid: gid, Groups: []uint32{}}}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("node as uid %d: %v: %s", uid, err, stderr.String())
	}
	var res otherUserResult
	if err := json.Unmarshal(out, &res); err != nil {
		t.Fatalf("node as uid %d said %q: %v", uid, out, err)
	}
	return res
}

// TestProtectedServerStreams: the preload's check, on the real server's
// express app, leaves our client's streams as they were. A turn's events
// arrive while the turn runs (the approved command waits for a file that
// the test writes only once the stream said the command is executing), and
// a turn whose approval takes longer than Node's 5 s idle timeout (the
// client keeps its connection busy meanwhile, with the secret) goes on.
func TestProtectedServerStreams(t *testing.T) {
	t.Parallel()
	sb := newSandbox(t)
	srv := sb.startAgent(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	hc := agent.NewHTTPClient()
	if _, err := agent.Load(ctx, srv.URL, hc); err == nil || !strings.Contains(err.Error(), "401") {
		t.Fatalf("loading the agent without its secret: %v; want a 401 refusal", err)
	}
	ag, err := agent.Load(ctx, srv.URL, hc, agent.WithHeader(srv.Header()))
	if err != nil {
		t.Fatal(err)
	}
	line := ag.NewLine()
	defer line.Close()

	gate := filepath.Join(sb.Workspace, "go")
	command := "while [ ! -e " + gate + " ]; do sleep 0.1; done; echo streamed-$((6*7))"
	sb.Fake.Reply(fakegemini.Call("run_shell_command", map[string]any{"command": command}))
	sb.Fake.Reply(fakegemini.Text("All done."))
	var taskID, contextID, callID string
	for u, err := range line.Send(ctx, agent.TextMessage("", "", "wait for go")) {
		if err != nil {
			t.Fatal(err)
		}
		taskID, contextID = u.TaskID, u.ContextID
		if u.Tool != nil && u.Tool.Status == "awaiting_approval" {
			callID = u.Tool.CallID
		}
	}
	if callID == "" {
		t.Fatal("the command never waited for approval")
	}
	// The user takes longer to decide than the server's idle timeout.
	time.Sleep(6 * time.Second)
	if !line.Holding() {
		t.Fatal("the turn's connection was lost while the approval waited")
	}
	var seen []string
	var text, output string
	for u, err := range line.Send(ctx, agent.ConfirmMessage(taskID, contextID, callID, "proceed_once")) {
		if err != nil {
			t.Fatalf("after %q: %v", seen, err)
		}
		if tc := u.Tool; tc != nil && tc.CallID == callID {
			seen = append(seen, tc.Status)
			if tc.Status == "executing" {
				if err := os.WriteFile(gate, nil, 0o600); err != nil {
					t.Fatal(err)
				}
			}
			if tc.Output != "" {
				output = tc.Output
			}
		}
		text += u.Text
	}
	if _, err := os.Stat(gate); err != nil {
		t.Fatalf("the stream never said the command was executing (statuses %q)", seen)
	}
	if !strings.Contains(output, "streamed-42") || !strings.Contains(text, "All done.") {
		t.Fatalf("statuses %q, output %q, text %q; want the command's output and the final answer", seen, output, text)
	}
}

// TestAgentCredentials: a protected server the bridge did not start, and
// whose secret it cannot find (another temporary folder), is attached with
// --agent and credentials from an environment variable or a header file,
// never from the command line; without them the bridge says the agent
// wants credentials.
func TestAgentCredentials(t *testing.T) {
	t.Parallel()
	sb := newSandbox(t)
	srv := sb.startAgent(t)
	token := strings.TrimPrefix(srv.Header().Get("Authorization"), "Bearer ")
	elsewhere := "TMPDIR=" + t.TempDir()

	b := startBridge(t, []string{elsewhere}, "--agent", srv.URL)
	b.fails(t, "gemini_consult", map[string]any{"question": "there?"}, "wants credentials; give them with --agent-header-file FILE or --agent-token-env VAR")

	sb.Fake.Reply(fakegemini.Text("Token taken."))
	b = startBridge(t, []string{elsewhere, "MY_A2A_TOKEN=" + token}, "--agent", srv.URL, "--agent-token-env", "MY_A2A_TOKEN")
	if out := b.ok(t, "gemini_consult", map[string]any{"question": "there?"}); out["response"] != "Token taken." {
		t.Fatalf("consult with --agent-token-env = %v", out)
	}
	if ag := b.ok(t, "load_agent", map[string]any{"url": srv.URL, "name": "same"}); ag["url"] != srv.URL {
		t.Fatalf("load_agent of --agent's URL = %v", ag)
	}

	file := filepath.Join(t.TempDir(), "headers")
	if err := os.WriteFile(file, []byte("# the agent's token\nAuthorization: Bearer "+token+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	sb.Fake.Reply(fakegemini.Text("File taken."))
	b = startBridge(t, []string{elsewhere}, "--agent", srv.URL, "--agent-header-file", file)
	if out := b.ok(t, "gemini_consult", map[string]any{"question": "there?"}); out["response"] != "File taken." {
		t.Fatalf("consult with --agent-header-file = %v", out)
	}

	out, err := exec.Command(bridgeBin, "--agent-token-env", "MY_A2A_TOKEN").CombinedOutput()
	if err == nil || !strings.Contains(string(out), "go with --agent") {
		t.Fatalf("--agent-token-env without --agent: %v: %s", err, out)
	}
	cmd := exec.Command(bridgeBin, "--agent", srv.URL, "--agent-token-env", "NOT_SET_ANYWHERE")
	cmd.Env = append(os.Environ(), "NOT_SET_ANYWHERE=")
	if out, err := cmd.CombinedOutput(); err == nil || !strings.Contains(string(out), "NOT_SET_ANYWHERE is not set or empty") {
		t.Fatalf("--agent-token-env of an empty variable: %v: %s", err, out)
	}
}
