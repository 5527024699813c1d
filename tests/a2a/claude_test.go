package a2a_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gemini-ide-companion/gemini-ide-companion/tests/fakegemini"
)

// fakeClaude is a scripted stand-in for Anthropic's Messages API: a request
// that offers our gemini_consult tool gets a tool_use of it; one carrying
// the tool's result gets a text that quotes it; anything else a short text.
type fakeClaude struct {
	mu      sync.Mutex
	results []string
}

func (f *fakeClaude) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || !strings.HasSuffix(r.URL.Path, "/v1/messages") {
		http.NotFound(w, r)
		return
	}
	body, _ := io.ReadAll(r.Body)
	var req struct {
		Stream   bool `json:"stream"`
		Tools    []struct{ Name string }
		Messages []struct {
			Role    string          `json:"role"`
			Content json.RawMessage `json:"content"`
		} `json:"messages"`
	}
	_ = json.Unmarshal(body, &req)
	offers := false
	for _, t := range req.Tools {
		offers = offers || t.Name == "mcp__a2a__gemini_consult"
	}
	var block map[string]any
	var input string
	stop := "end_turn"
	last := ""
	if n := len(req.Messages); n > 0 {
		last = string(req.Messages[n-1].Content)
	}
	switch {
	case offers && strings.Contains(last, "tool_result"):
		f.mu.Lock()
		f.results = append(f.results, last)
		f.mu.Unlock()
		block = map[string]any{"type": "text", "text": ""}
		input = "Claude relays: " + map[bool]string{true: "mutex", false: "nothing"}[strings.Contains(last, "sync.Mutex")]
	case offers:
		block = map[string]any{"type": "tool_use", "id": "toolu_01", "name": "mcp__a2a__gemini_consult", "input": map[string]any{}}
		input = `{"question":"How should I guard a shared map?"}`
		stop = "tool_use"
	default:
		block = map[string]any{"type": "text", "text": ""}
		input = "ok"
	}
	if !req.Stream {
		content := map[string]any{"type": "text", "text": input}
		if block["type"] == "tool_use" {
			var in map[string]any
			_ = json.Unmarshal([]byte(input), &in)
			block["input"] = in
			content = block
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"id": "msg_1", "type": "message", "role": "assistant", "model": "claude-fake",
			"content": []any{content}, "stop_reason": stop, "usage": map[string]int{"input_tokens": 1, "output_tokens": 1}})
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	send := func(ev string, data any) {
		b, _ := json.Marshal(data)
		fmt.Fprintf(w, "event: %s\ndata: %s\n\n", ev, b)
	}
	send("message_start", map[string]any{"type": "message_start", "message": map[string]any{"id": "msg_1", "type": "message", "role": "assistant",
		"model": "claude-fake", "content": []any{}, "stop_reason": nil, "usage": map[string]int{"input_tokens": 1, "output_tokens": 1}}})
	send("content_block_start", map[string]any{"type": "content_block_start", "index": 0, "content_block": block})
	delta := map[string]any{"type": "text_delta", "text": input}
	if block["type"] == "tool_use" {
		delta = map[string]any{"type": "input_json_delta", "partial_json": input}
	}
	send("content_block_delta", map[string]any{"type": "content_block_delta", "index": 0, "delta": delta})
	send("content_block_stop", map[string]any{"type": "content_block_stop", "index": 0})
	send("message_delta", map[string]any{"type": "message_delta", "delta": map[string]any{"stop_reason": stop, "stop_sequence": nil}, "usage": map[string]int{"output_tokens": 1}})
	send("message_stop", map[string]any{"type": "message_stop"})
}

// TestClaudeCodeAsClient: Claude Code (npm, tests/a2a/claude) runs offline
// against a fake Messages API, with gemini-a2a-mcp in its --mcp-config, and
// its model consults the Gemini agent through our tool.
func TestClaudeCodeAsClient(t *testing.T) {
	t.Parallel()
	claude := filepath.Join(here(), "claude", "node_modules", ".bin", "claude")
	if _, err := os.Stat(claude); err != nil {
		msg := "needs Claude Code: run (cd tests/a2a/claude && npm ci)"
		if os.Getenv("CI") != "" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	sb := newSandbox(t)
	srv := sb.startAgent(t)
	sb.fake.Reply(fakegemini.Text("Guard the map with a sync.Mutex."))

	fc := &fakeClaude{}
	api := httptest.NewServer(fc)
	defer api.Close()
	home, ws := t.TempDir(), t.TempDir()
	cfg, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{"a2a": map[string]any{
		"type": "stdio", "command": bridgeBin, "args": []string{"--agent", srv.URL}}}})
	cfgPath := filepath.Join(t.TempDir(), "mcp.json")
	if err := os.WriteFile(cfgPath, cfg, 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, claude, "-p", "ask gemini how to guard a map", "--mcp-config", cfgPath,
		"--allowedTools", "mcp__a2a__gemini_consult", "--output-format", "json")
	cmd.Dir = ws
	cmd.Env = append(os.Environ(), "HOME="+home, "ANTHROPIC_BASE_URL="+api.URL, "ANTHROPIC_API_KEY=sk-dummy",
		"DISABLE_TELEMETRY=1", "DISABLE_AUTOUPDATER=1", "DISABLE_ERROR_REPORTING=1",
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1", "ENABLE_TOOL_SEARCH=false")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("claude -p: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "Claude relays: mutex") {
		t.Fatalf("claude output:\n%s", out)
	}
	fc.mu.Lock()
	defer fc.mu.Unlock()
	if len(fc.results) == 0 || !strings.Contains(strings.Join(fc.results, "\n"), "Guard the map with a sync.Mutex.") {
		t.Fatalf("tool results Claude's model got: %q", fc.results)
	}
}
