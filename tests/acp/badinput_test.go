package acp_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gemini-ide-companion/gemini-ide-companion/tests/fakegemini"
	"github.com/gemini-ide-companion/gemini-ide-companion/tests/testkit"
)

// raw is gemini-a2a-acp on plain pipes, for input no SDK would send.
type raw struct {
	t    *testing.T
	in   io.WriteCloser
	mu   sync.Mutex
	msgs []map[string]any
	more chan struct{}
	cmd  *exec.Cmd
}

func startRaw(t *testing.T, sb *sandbox, args ...string) *raw {
	t.Helper()
	cmd := exec.Command(adapterBin, append([]string{"--log-file", filepath.Join(sb.Home, "acp.log")}, args...)...)
	cmd.Env = append(os.Environ(), sb.env()...)
	in, _ := cmd.StdinPipe()
	out, _ := cmd.StdoutPipe()
	cmd.Stderr = &testWriter{t: t, prefix: "adapter: "}
	r := &raw{t: t, in: in, more: make(chan struct{}), cmd: cmd}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		sc := bufio.NewScanner(out)
		sc.Buffer(make([]byte, 1<<20), 64<<20)
		for sc.Scan() {
			var m map[string]any
			if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
				m = map[string]any{"unparsable": sc.Text()}
			}
			r.mu.Lock()
			r.msgs = append(r.msgs, m)
			close(r.more)
			r.more = make(chan struct{})
			r.mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		_ = in.Close()
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(20 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
	})
	return r
}

func (r *raw) line(s string) {
	r.t.Helper()
	if _, err := io.WriteString(r.in, s+"\n"); err != nil {
		r.t.Fatal(err)
	}
}

func (r *raw) request(id int, method string, params any) {
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params})
	r.line(string(b))
}

// wait returns the first message that matches.
func (r *raw) wait(what string, timeout time.Duration, match func(map[string]any) bool) map[string]any {
	r.t.Helper()
	deadline := time.After(timeout)
	from := 0
	for {
		r.mu.Lock()
		for i := from; i < len(r.msgs); i++ {
			if match(r.msgs[i]) {
				m := r.msgs[i]
				r.mu.Unlock()
				return m
			}
		}
		from = len(r.msgs)
		more := r.more
		r.mu.Unlock()
		select {
		case <-more:
		case <-deadline:
			r.mu.Lock()
			all, _ := json.Marshal(r.msgs)
			r.mu.Unlock()
			r.t.Fatalf("waited %v for %s; got %s", timeout, what, all)
		}
	}
}

func (r *raw) answer(id int) map[string]any {
	r.t.Helper()
	return r.wait(fmt.Sprint("the answer to ", id), 3*time.Minute, func(m map[string]any) bool {
		v, ok := m["id"].(float64)
		return ok && int(v) == id && m["method"] == nil
	})
}

// errCode is an answer's error code and message (0 when it succeeded).
func errCode(m map[string]any) (int, string) {
	e, ok := m["error"].(map[string]any)
	if !ok {
		return 0, ""
	}
	c, _ := e["code"].(float64)
	msg, _ := e["message"].(string)
	return int(c), msg
}

// Bad input gets clear JSON-RPC errors and the adapter goes on: a
// malformed line, an unknown method, a prompt for an unknown session, a
// relative cwd. An A2A server that dies mid-turn fails that prompt with an
// error that says so, while the other session (another folder, another
// server) keeps answering, and the next prompt of the first session gets
// a new server.
func TestBadInputAndDeadServer(t *testing.T) {
	t.Parallel()
	sb := newSandbox(t)
	r := startRaw(t, sb)

	r.line("{this is not json")
	m := r.wait("the parse error", time.Minute, func(m map[string]any) bool { return m["error"] != nil })
	if code, _ := errCode(m); code != -32700 || m["id"] != nil {
		t.Fatalf("malformed line answered %v; want a parse error (-32700) with id null", m)
	}
	r.request(1, "no/such/method", map[string]any{})
	if code, msg := errCode(r.answer(1)); code != -32601 || !strings.Contains(msg, "no/such/method") {
		t.Fatalf("unknown method: %d %q", code, msg)
	}
	r.request(2, "initialize", map[string]any{"protocolVersion": 1, "clientCapabilities": map[string]any{}})
	if code, msg := errCode(r.answer(2)); code != 0 {
		t.Fatalf("initialize: %d %s", code, msg)
	}
	r.request(3, "session/prompt", map[string]any{"sessionId": "no-such-session", "prompt": []any{map[string]any{"type": "text", "text": "hi"}}})
	if code, msg := errCode(r.answer(3)); code != -32002 || !strings.Contains(msg, "no-such-session") {
		t.Fatalf("prompt for an unknown session: %d %q", code, msg)
	}
	r.request(4, "session/new", map[string]any{"cwd": "relative/dir", "mcpServers": []any{}})
	if code, msg := errCode(r.answer(4)); code != -32602 || !strings.Contains(msg, "absolute") {
		t.Fatalf("relative cwd: %d %q", code, msg)
	}

	other := t.TempDir()
	sid := func(id int, cwd string) string {
		r.request(id, "session/new", map[string]any{"cwd": cwd, "mcpServers": []any{}})
		m := r.answer(id)
		res, _ := m["result"].(map[string]any)
		s, _ := res["sessionId"].(string)
		if s == "" {
			t.Fatalf("session/new: %v", m)
		}
		return s
	}
	a, b := sid(5, sb.Workspace), sid(6, other)
	prompt := func(id int, s, text string) {
		r.request(id, "session/prompt", map[string]any{"sessionId": s, "prompt": []any{map[string]any{"type": "text", "text": text}}})
	}

	const marker = "40.2713"
	sb.Fake.Reply(fakegemini.Call("run_shell_command", map[string]any{"command": "sleep " + marker}))
	prompt(7, a, "run it")
	perm := r.wait("the permission request", 2*time.Minute, func(m map[string]any) bool { return m["method"] == "session/request_permission" })
	b2, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": perm["id"], "result": map[string]any{"outcome": map[string]any{"outcome": "selected", "optionId": "proceed_once"}}})
	r.line(string(b2))
	if !testkit.Poll(time.Minute, func() bool { return processWith(marker) }) {
		t.Fatal("the approved command never started")
	}
	// The server dies by SIGKILL and cannot stop its command: the test does.
	t.Cleanup(func() { testkit.KillWith(marker) })
	pid := serverPID(t, sb, sb.Workspace)
	p, err := os.FindProcess(pid)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Kill(); err != nil {
		t.Fatal(err)
	}
	if code, msg := errCode(r.answer(7)); code == 0 || !strings.Contains(msg, "exited") {
		t.Fatalf("a prompt whose server died: %d %q; want an error saying the server exited", code, msg)
	}

	sb.Fake.Reply(fakegemini.Text("Other folder fine."))
	prompt(8, b, "still there?")
	if code, msg := errCode(r.answer(8)); code != 0 {
		t.Fatalf("the other session failed after the first's server died: %d %s", code, msg)
	}
	sb.Fake.Reply(fakegemini.Text("Back again."))
	prompt(9, a, "and you?")
	if code, msg := errCode(r.answer(9)); code != 0 {
		t.Fatalf("the session whose server died did not get a new one: %d %s", code, msg)
	}
	r.wait("the new server's answer", time.Second, func(m map[string]any) bool {
		b, _ := json.Marshal(m)
		return strings.Contains(string(b), "Back again.")
	})
}

// serverPID reads the adapter's log for the pid of the A2A server it
// started for cwd.
func serverPID(t *testing.T, sb *sandbox, cwd string) int {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(sb.Home, "acp.log"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`A2A server pid (\d+) on \S+ for `+regexp.QuoteMeta(cwd)+`\b`).FindAllStringSubmatch(string(b), -1)
	if m == nil {
		t.Fatalf("no server pid for %s in the log:\n%s", cwd, b)
	}
	pid, _ := strconv.Atoi(m[len(m)-1][1])
	return pid
}
