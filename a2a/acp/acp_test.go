package acp

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gemini-ide-companion/gemini-ide-companion/a2a/agent"
	"github.com/gemini-ide-companion/gemini-ide-companion/a2a/rfc"
)

// serve runs an Agent on pipes and returns a writer for its input and a
// reader of its output lines.
func serve(t *testing.T) (io.WriteCloser, *bufio.Scanner) {
	t.Helper()
	return serveWith(t, Options{AgentURL: "http://127.0.0.1:1", Timeout: time.Second, HTTPClient: agent.NewHTTPClient()})
}

// serveWith runs an Agent with opts on pipes, as serve does. When the test
// ends, the agent's input ends and what it still writes is read and
// dropped: a pipe holds nothing, so a notification the agent sends after
// the test's last read (the session's commands, sent after session/new
// is answered) would otherwise block it, and its end, for good.
func serveWith(t *testing.T, opts Options) (io.WriteCloser, *bufio.Scanner) {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = Serve(context.Background(), inR, outW, opts)
		outW.Close()
	}()
	t.Cleanup(func() {
		inW.Close()
		_, _ = io.Copy(io.Discard, outR)
		<-done
	})
	sc := bufio.NewScanner(outR)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	return inW, sc
}

func next(t *testing.T, sc *bufio.Scanner) map[string]any {
	t.Helper()
	if !sc.Scan() {
		t.Fatalf("no answer: %v", sc.Err())
	}
	var m map[string]any
	if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
		t.Fatalf("answer %q: %v", sc.Text(), err)
	}
	return m
}

func code(m map[string]any) int {
	e, _ := m["error"].(map[string]any)
	c, _ := e["code"].(float64)
	return int(c)
}

// Bad input gets the JSON-RPC error that names it, and the agent reads on.
func TestBadInputErrors(t *testing.T) {
	in, sc := serve(t)
	dir := t.TempDir()
	quoted := func(s string) string { b, _ := json.Marshal(s); return string(b) }
	for _, c := range []struct {
		line string
		code int
		id   any
	}{
		{`{not json`, CodeParseError, nil},
		{`[{"jsonrpc":"2.0","id":1,"method":"initialize"}]`, CodeParseError, nil},
		{`{"jsonrpc":"2.0","id":2}`, CodeInvalidRequest, 2.0},
		{`{"jsonrpc":"2.0","id":3,"method":"nope"}`, CodeMethodNotFound, 3.0},
		{`{"jsonrpc":"2.0","id":4,"method":"session/prompt","params":{"sessionId":"x","prompt":[]}}`, CodeNotFound, 4.0},
		{`{"jsonrpc":"2.0","id":5,"method":"session/new","params":{"cwd":"rel","mcpServers":[]}}`, CodeInvalidParams, 5.0},
		{`{"jsonrpc":"2.0","id":6,"method":"session/new","params":{"cwd":` + quoted(filepath.Join(dir, "missing")) + `,"mcpServers":[]}}`, CodeInvalidParams, 6.0},
		{`{"jsonrpc":"2.0","id":7,"method":"session/load","params":{"sessionId":"0123","cwd":` + quoted(dir) + `,"mcpServers":[]}}`, CodeNotFound, 7.0},
		{`{"jsonrpc":"2.0","id":8,"method":"session/prompt"}`, CodeInvalidParams, 8.0},
	} {
		if _, err := io.WriteString(in, c.line+"\n"); err != nil {
			t.Fatal(err)
		}
		m := next(t, sc)
		if code(m) != c.code || m["id"] != c.id {
			t.Errorf("%s answered %v; want code %d, id %v", c.line, m, c.code, c.id)
		}
	}
	if _, err := io.WriteString(in, `{"jsonrpc":"2.0","id":9,"method":"initialize","params":{"protocolVersion":7}}`+"\n"); err != nil {
		t.Fatal(err)
	}
	m := next(t, sc)
	res, _ := m["result"].(map[string]any)
	if res["protocolVersion"] != 1.0 {
		t.Fatalf("initialize after bad input: %v", m)
	}
	caps, _ := res["agentCapabilities"].(map[string]any)
	mcp, _ := caps["mcpCapabilities"].(map[string]any)
	if caps["loadSession"] != true || mcp["http"] != false {
		t.Fatalf("capabilities with --agent: %v; want loadSession and no MCP transports to pass on", caps)
	}
}

// The client's MCP servers become the server's settings entries, added to
// the user's (whose comments Gemini CLI allows), in a private home that
// links the rest of the user's .gemini.
func TestMCPHome(t *testing.T) {
	home := t.TempDir()
	dir := filepath.Join(home, ".gemini")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	user := `{
  // the user's own
  "mcpServers": {"mine": {"command": "x"}, "notes": {"command": "old"}},
  "general": {"previewFeatures": true} /* kept */
}`
	if err := os.WriteFile(filepath.Join(dir, "settings.json"), []byte(user), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "GEMINI.md"), []byte("memory"), 0o600); err != nil {
		t.Fatal(err)
	}
	h, err := mcpHome([]string{"HOME=" + home, "USERPROFILE=" + home, "GEMINI_CLI_HOME="}, []McpServer{
		{Name: "notes", Command: "appendmcp", Args: []string{"-file", "n"}, Env: []nameValue{{"K", "V"}}},
		{Type: "http", Name: "web", URL: "http://127.0.0.1:9/mcp", Headers: []nameValue{{"Authorization", "x"}}},
		{Type: "sse", Name: "events", URL: "http://127.0.0.1:9/sse"},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(h)
	var got map[string]any
	b, _ := os.ReadFile(filepath.Join(h, ".gemini", "settings.json"))
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	servers := got["mcpServers"].(map[string]any)
	want := `{"events":{"url":"http://127.0.0.1:9/sse"},"mine":{"command":"x"},"notes":{"args":["-file","n"],"command":"appendmcp","env":{"K":"V"}},"web":{"headers":{"Authorization":"x"},"httpUrl":"http://127.0.0.1:9/mcp"}}`
	if raw, _ := json.Marshal(servers); string(raw) != want {
		t.Fatalf("mcpServers %s\nwant %s", raw, want)
	}
	if got["general"].(map[string]any)["previewFeatures"] != true {
		t.Fatal("the user's other settings were lost")
	}
	if b, err := os.ReadFile(filepath.Join(h, ".gemini", "GEMINI.md")); err != nil || string(b) != "memory" {
		t.Fatalf("the user's GEMINI.md is not there: %q %v", b, err)
	}
}

// A prompt runs the longest slash command it names; other text is the
// model's.
func TestMatchCommand(t *testing.T) {
	s := &session{commands: rfc.Flatten([]rfc.SlashCommand{{Name: "memory", SubCommands: []rfc.SlashCommand{{Name: "show"}, {Name: "add"}}}, {Name: "init"}})}
	for _, c := range []struct {
		text, name string
		args       []string
		ok         bool
	}{
		{"/memory show", "memory show", nil, true},
		{" /memory add remember this ", "memory add", []string{"remember", "this"}, true},
		{"/memory", "memory", nil, true},
		{"/init", "init", nil, true},
		{"/nope x", "", nil, false},
		{"memory show", "", nil, false},
	} {
		name, args, ok := s.matchCommand(c.text)
		if name != c.name || ok != c.ok || strings.Join(args, " ") != strings.Join(c.args, " ") {
			t.Errorf("%q: %q %q %v; want %q %q %v", c.text, name, args, ok, c.name, c.args, c.ok)
		}
	}
}

// Tool kinds are Gemini CLI's own ACP mapping; a tool the event does not
// describe is told by its name.
func TestKinds(t *testing.T) {
	for _, c := range []struct {
		tc   agent.ToolCall
		want string
	}{
		{agent.ToolCall{Kind: "edit"}, "edit"},
		{agent.ToolCall{Kind: "agent"}, "think"},
		{agent.ToolCall{Kind: "communicate"}, "other"},
		{agent.ToolCall{Name: "run_shell_command"}, "execute"},
		{agent.ToolCall{Name: "replace"}, "edit"},
		{agent.ToolCall{Name: "mystery"}, "other"},
	} {
		if got := acpKind(&c.tc); got != c.want {
			t.Errorf("%+v: %q, want %q", c.tc, got, c.want)
		}
	}
}

// Any A2A agent, not only Gemini CLI's: its streamed messages are the
// answer, a completed task ends the turn, and the next prompt starts a new
// task in the same context.
func TestGenericA2AAgent(t *testing.T) {
	var mu sync.Mutex
	var taskIDs []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet {
			_, _ = io.WriteString(w, `{"name":"echo","url":"http://x/","protocolVersion":"0.3.0","capabilities":{"streaming":true}}`)
			return
		}
		var req struct {
			Params struct {
				Message struct {
					TaskID    string `json:"taskId"`
					ContextID string `json:"contextId"`
				} `json:"message"`
			} `json:"params"`
		}
		_ = json.NewDecoder(r.Body).Decode(&req)
		mu.Lock()
		taskIDs = append(taskIDs, req.Params.Message.TaskID)
		n := len(taskIDs)
		mu.Unlock()
		w.Header().Set("Content-Type", "text/event-stream")
		task := fmt.Sprintf("task-%d", n)
		for _, ev := range []string{
			`{"kind":"status-update","taskId":"` + task + `","contextId":"ctx","final":false,"status":{"state":"working","message":{"kind":"message","messageId":"m1","role":"agent","parts":[{"kind":"text","text":"echo "}]}}}`,
			`{"kind":"status-update","taskId":"` + task + `","contextId":"ctx","final":true,"status":{"state":"completed","message":{"kind":"message","messageId":"m2","role":"agent","parts":[{"kind":"text","text":"done"}]}}}`,
		} {
			fmt.Fprintf(w, "data: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":%s}\n\n", ev)
		}
	}))
	defer srv.Close()
	inW, sc := serveWith(t, Options{AgentURL: srv.URL, Timeout: 5 * time.Second, HTTPClient: agent.NewHTTPClient()})
	send := func(id int, method string, params any) map[string]any {
		b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params})
		if _, err := inW.Write(append(b, '\n')); err != nil {
			t.Fatal(err)
		}
		for {
			m := next(t, sc)
			if v, ok := m["id"].(float64); ok && int(v) == id && m["method"] == nil {
				return m
			}
			if m["method"] == "session/update" {
				u := m["params"].(map[string]any)["update"].(map[string]any)
				if u["sessionUpdate"] == "agent_message_chunk" {
					mu.Lock()
					taskIDs = append(taskIDs, "chunk:"+u["content"].(map[string]any)["text"].(string))
					mu.Unlock()
				}
			}
		}
	}
	send(1, "initialize", map[string]any{"protocolVersion": 1})
	sid := send(2, "session/new", map[string]any{"cwd": t.TempDir(), "mcpServers": []any{}})["result"].(map[string]any)["sessionId"]
	for i := 3; i <= 4; i++ {
		res := send(i, "session/prompt", map[string]any{"sessionId": sid, "prompt": []any{map[string]any{"type": "text", "text": "hi"}}})
		if r, _ := res["result"].(map[string]any); r["stopReason"] != "end_turn" {
			t.Fatalf("prompt %d: %v", i, res)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if want := []string{"", "chunk:echo ", "chunk:done", "", "chunk:echo ", "chunk:done"}; strings.Join(taskIDs, "|") != strings.Join(want, "|") {
		t.Fatalf("task ids sent and chunks received %q; want %q", taskIDs, want)
	}
}

// A line longer than the limit is answered with a parse error and skipped
// to its end; the next line is served.
func TestLongLine(t *testing.T) {
	old := maxLine
	maxLine = 1 << 10
	defer func() { maxLine = old }()
	in, sc := serve(t)
	go func() {
		_, _ = io.WriteString(in, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"x":"`+strings.Repeat("a", 200<<10)+`"}}`+"\n")
		_, _ = io.WriteString(in, `{"jsonrpc":"2.0","id":2,"method":"initialize","params":{"protocolVersion":1}}`+"\n")
	}()
	if m := next(t, sc); code(m) != CodeParseError || m["id"] != nil {
		t.Fatalf("long line answered %v", m)
	}
	if m := next(t, sc); m["id"] != 2.0 || m["result"] == nil {
		t.Fatalf("the line after it answered %v", m)
	}
}
