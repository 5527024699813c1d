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
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gemini-ide-companion/gemini-ide-companion/tests/fakegemini"
)

// toolUse is what the fake Claude model does next: call tool with input,
// or (tool "") say text.
type toolUse struct {
	tool  string
	input map[string]any
	text  string
}

// fakeClaude is a scripted stand-in for Anthropic's Messages API. Each
// request that offers the bridge's tools is answered with next(results),
// results being the tool results of the conversation so far.
type fakeClaude struct {
	next func(results []string) toolUse

	mu      sync.Mutex
	n       int      // answers given
	results []string // the last conversation's tool results
}

var toolResultRE = regexp.MustCompile(`"type":"tool_result"`)

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
		offers = offers || strings.HasPrefix(t.Name, "mcp__gemini__")
	}
	var results []string
	for _, m := range req.Messages {
		if m.Role == "user" && toolResultRE.Match(m.Content) {
			results = append(results, string(m.Content))
		}
	}
	step := toolUse{text: "ok"}
	if offers {
		f.mu.Lock()
		f.results = results
		f.mu.Unlock()
		step = f.next(results)
	}

	// Every answer is a message of its own: Claude Code takes a repeated
	// message id for the same message and asks again.
	f.mu.Lock()
	f.n++
	n := f.n
	f.mu.Unlock()
	id, msgID := fmt.Sprintf("toolu_%02d", n), fmt.Sprintf("msg_%02d", n)
	block := map[string]any{"type": "text", "text": ""}
	stop, partial := "end_turn", step.text
	if step.tool != "" {
		in, _ := json.Marshal(step.input)
		block = map[string]any{"type": "tool_use", "id": id, "name": step.tool, "input": map[string]any{}}
		stop, partial = "tool_use", string(in)
	}
	if !req.Stream {
		content := map[string]any{"type": "text", "text": step.text}
		if step.tool != "" {
			block["input"] = step.input
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
	if step.tool != "" {
		delta = map[string]any{"type": "input_json_delta", "partial_json": partial}
	}
	send("content_block_delta", map[string]any{"type": "content_block_delta", "index": 0, "delta": delta})
	send("content_block_stop", map[string]any{"type": "content_block_stop", "index": 0})
	send("message_delta", map[string]any{"type": "message_delta", "delta": map[string]any{"stop_reason": stop, "stop_sequence": nil}, "usage": map[string]int{"output_tokens": 1}})
	send("message_stop", map[string]any{"type": "message_stop"})
}

var sessionIDRE = regexp.MustCompile(`session_id\\*":\\*"(gs-[0-9a-f]+)`)

// supervise is the script of a supervising model: start a task and wait
// for its decision, answer it with decision, poll its status until the
// task is complete, then say done.
func supervise(task, decision string) func(results []string) toolUse {
	return func(results []string) toolUse {
		if len(results) == 0 {
			return toolUse{tool: "mcp__gemini__gemini_task_start", input: map[string]any{"task": task, "async": false}}
		}
		m := sessionIDRE.FindStringSubmatch(results[0])
		if m == nil {
			return toolUse{text: "no session: " + results[0]}
		}
		last := results[len(results)-1]
		switch {
		case len(results) == 1:
			return toolUse{tool: "mcp__gemini__gemini_respond", input: map[string]any{"session_id": m[1], "decision": decision}}
		case strings.Contains(last, `complete`) && len(results) > 2:
			return toolUse{text: "Claude: the task is complete."}
		case len(results) > 12:
			return toolUse{text: "Claude: gave up waiting."}
		}
		return toolUse{tool: "mcp__gemini__gemini_status", input: map[string]any{"session_id": m[1], "wait_s": 30}}
	}
}

// readmeBlock returns the first fenced block of the given language in the
// README's section heading that contains want.
func readmeBlock(t *testing.T, heading, lang, want string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(here(), "..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	text := string(data)
	i := strings.Index(text, "\n"+heading+"\n")
	if i < 0 {
		t.Fatalf("README.md has no section %q", heading)
	}
	text = text[i+len(heading)+2:]
	if j := strings.Index(text, "\n## "); j >= 0 {
		text = text[:j]
	}
	for _, m := range regexp.MustCompile("(?s)```"+lang+"\n(.*?)```").FindAllStringSubmatch(text, -1) {
		if strings.Contains(m[1], want) {
			return m[1]
		}
	}
	t.Fatalf("README.md's %q has no ```%s block with %q: update this test with the README", heading, lang, want)
	return ""
}

// TestClaudeCodeAsClient: Claude Code (npm, tests/a2a/claude) configured
// exactly as the README says (`claude mcp add …`, the bridge and the A2A
// server found on PATH, as installed) runs offline against a fake Messages
// API, and its model supervises the Gemini agent: a task's edit comes as a
// decision with its diff, approved through Claude's tool call it is on
// disk; denied, the file is untouched.
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
	// Claude Code and the server it starts through the bridge share the
	// user's HOME (the server reads its settings there).
	env := append(os.Environ(), append(sb.env(), "ANTHROPIC_API_KEY=sk-dummy",
		"DISABLE_TELEMETRY=1", "DISABLE_AUTOUPDATER=1", "DISABLE_ERROR_REPORTING=1",
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1", "ENABLE_TOOL_SEARCH=false")...)

	// The README's line, run in the project as the user runs it.
	add := strings.TrimSpace(readmeBlock(t, "## A2A bridge", "sh", "claude mcp add"))
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "-c", strings.Replace(add, "claude ", `"$CLAUDE" `, 1))
	cmd.Dir, cmd.Env = sb.ws, append(env, "CLAUDE="+claude)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", add, err, out)
	}

	run := func(t *testing.T, fc *fakeClaude, prompt string) string {
		t.Helper()
		api := httptest.NewServer(fc)
		defer api.Close()
		cmd := exec.CommandContext(ctx, claude, "-p", prompt, "--output-format", "json", "--allowedTools",
			"mcp__gemini__gemini_task_start,mcp__gemini__gemini_respond,mcp__gemini__gemini_status")
		cmd.Dir, cmd.Env = sb.ws, append(env, "ANTHROPIC_BASE_URL="+api.URL)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("claude -p: %v\n%s", err, out)
		}
		return string(out)
	}

	t.Run("EditApproved", func(t *testing.T) {
		path := filepath.Join(sb.ws, "hello.txt")
		sb.fake.Reply(fakegemini.Call("write_file", map[string]any{"file_path": path, "content": "hello from gemini\n"}))
		sb.fake.Reply(fakegemini.Text("I wrote hello.txt."))
		fc := &fakeClaude{next: supervise("create hello.txt", "approved")}
		out := run(t, fc, "have gemini create hello.txt")
		fc.mu.Lock()
		results := strings.Join(fc.results, "\n")
		fc.mu.Unlock()
		if !strings.Contains(out, "Claude: the task is complete.") {
			t.Fatalf("claude output:\n%s\ntool results:\n%s", out, results)
		}
		for _, want := range []string{`file_edit`, `+hello from gemini`, `I wrote hello.txt.`} {
			if !strings.Contains(results, want) {
				t.Fatalf("the tool results Claude's model got lack %q:\n%s", want, results)
			}
		}
		if got, _ := readFile(t, path); got != "hello from gemini\n" {
			t.Fatalf("hello.txt = %q after Claude approved the edit", got)
		}
	})

	t.Run("EditDenied", func(t *testing.T) {
		path := filepath.Join(sb.ws, "keep.txt")
		writeFile(t, path, "original\n")
		sb.fake.Reply(fakegemini.Call("write_file", map[string]any{"file_path": path, "content": "clobbered\n"}))
		fc := &fakeClaude{next: supervise("rewrite keep.txt", "denied")}
		out := run(t, fc, "have gemini rewrite keep.txt")
		if !strings.Contains(out, "Claude: the task is complete.") {
			t.Fatalf("claude output:\n%s", out)
		}
		if got, _ := readFile(t, path); got != "original\n" {
			t.Fatalf("keep.txt = %q after Claude denied the edit; want it untouched", got)
		}
	})
}
