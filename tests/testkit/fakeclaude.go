package testkit

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strings"
	"sync"
)

// ClaudeStep is what the fake Claude model does next: call Tool with Input,
// or (Tool "") say Text.
type ClaudeStep struct {
	Tool  string
	Input map[string]any
	Text  string
}

// FakeClaude is a scripted stand-in for Anthropic's Messages API, for
// Claude Code run offline (ANTHROPIC_BASE_URL). Each request that offers
// the bridge's tools (server "gemini": mcp__gemini__*) is answered with
// Next(results), results being the tool results of the conversation so far
// (as raw JSON); other requests get a short text. Prefix names another
// server's tools.
type FakeClaude struct {
	Next func(results []string) ClaudeStep
	// Prefix is the prefix of the tool names of the server under test:
	// "mcp__gemini__" when empty.
	Prefix string

	mu      sync.Mutex
	n       int      // answers given
	results []string // the last conversation's tool results
}

var toolResultRE = regexp.MustCompile(`"type":"tool_result"`)

func (f *FakeClaude) ServeHTTP(w http.ResponseWriter, r *http.Request) {
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
	prefix := f.Prefix
	if prefix == "" {
		prefix = "mcp__gemini__"
	}
	offers := false
	for _, t := range req.Tools {
		offers = offers || strings.HasPrefix(t.Name, prefix)
	}
	var results []string
	for _, m := range req.Messages {
		if m.Role == "user" && toolResultRE.Match(m.Content) {
			results = append(results, string(m.Content))
		}
	}
	step := ClaudeStep{Text: "ok"}
	if offers {
		f.mu.Lock()
		f.results = results
		f.mu.Unlock()
		step = f.Next(results)
	}

	// Every answer is a message of its own: Claude Code takes a repeated
	// message id for the same message and asks again.
	f.mu.Lock()
	f.n++
	n := f.n
	f.mu.Unlock()
	id, msgID := fmt.Sprintf("toolu_%02d", n), fmt.Sprintf("msg_%02d", n)
	block := map[string]any{"type": "text", "text": ""}
	stop, partial := "end_turn", step.Text
	if step.Tool != "" {
		in, _ := json.Marshal(step.Input)
		block = map[string]any{"type": "tool_use", "id": id, "name": step.Tool, "input": map[string]any{}}
		stop, partial = "tool_use", string(in)
	}
	if !req.Stream {
		content := map[string]any{"type": "text", "text": step.Text}
		if step.Tool != "" {
			block["input"] = step.Input
			content = block
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"id": msgID, "type": "message", "role": "assistant", "model": "claude-fake",
			"content": []any{content}, "stop_reason": stop, "usage": map[string]int{"input_tokens": 1, "output_tokens": 1}})
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	send := func(ev string, data any) {
		b, _ := json.Marshal(data)
		fmt.Fprintf(w, "event: %s\ndata: %s\n\n", ev, b)
	}
	send("message_start", map[string]any{"type": "message_start", "message": map[string]any{"id": msgID, "type": "message", "role": "assistant",
		"model": "claude-fake", "content": []any{}, "stop_reason": nil, "usage": map[string]int{"input_tokens": 1, "output_tokens": 1}}})
	send("content_block_start", map[string]any{"type": "content_block_start", "index": 0, "content_block": block})
	delta := map[string]any{"type": "text_delta", "text": partial}
	if step.Tool != "" {
		delta = map[string]any{"type": "input_json_delta", "partial_json": partial}
	}
	send("content_block_delta", map[string]any{"type": "content_block_delta", "index": 0, "delta": delta})
	send("content_block_stop", map[string]any{"type": "content_block_stop", "index": 0})
	send("message_delta", map[string]any{"type": "message_delta", "delta": map[string]any{"stop_reason": stop, "stop_sequence": nil}, "usage": map[string]int{"output_tokens": 1}})
	send("message_stop", map[string]any{"type": "message_stop"})
}

// Results returns the tool results of the last conversation that offered
// the bridge's tools.
func (f *FakeClaude) Results() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.results...)
}

// ClaudeEnv is the environment that runs Claude Code offline against a
// fake Messages API at url.
func ClaudeEnv(url string) []string {
	return []string{"ANTHROPIC_BASE_URL=" + url, "ANTHROPIC_API_KEY=sk-dummy",
		"DISABLE_TELEMETRY=1", "DISABLE_AUTOUPDATER=1", "DISABLE_ERROR_REPORTING=1",
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1", "ENABLE_TOOL_SEARCH=false"}
}
