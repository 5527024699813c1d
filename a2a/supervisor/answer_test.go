package supervisor

import (
	"strings"
	"testing"

	"github.com/gemini-ide-companion/gemini-ide-companion/a2a/agent"
)

// The supervisor's words map to the A2A server's outcomes; a modified file's
// content is kept byte for byte.
func TestOutcomeOf(t *testing.T) {
	for _, c := range []struct{ in, outcome, rest string }{
		{"approved", "proceed_once", ""},
		{" Approve ", "proceed_once", ""},
		{"denied", "cancel", ""},
		{"abort", "cancel", ""},
		{"modify: new body\n", "modify", "new body\n"},
		{"MODIFY:  two spaces\n\n", "modify", " two spaces\n\n"},
		{"adjust: smaller steps", "text", "smaller steps"},
		{"use the other file", "text", "use the other file"},
	} {
		o, r := outcomeOf(c.in)
		if o != c.outcome || r != c.rest {
			t.Errorf("outcomeOf(%q) = %q, %q; want %q, %q", c.in, o, r, c.outcome, c.rest)
		}
	}
}

func TestCheckpointRaceFailureSaysWhatToDo(t *testing.T) {
	raw := "Failed to initialize checkpointing: fatal: cannot lock ref 'HEAD': reference already exists\n. Please check that Git is working properly or disable checkpointing."
	if got := explainFailure(raw); !strings.HasPrefix(got, raw) || !strings.Contains(got, "start the task again") {
		t.Fatalf("explainFailure = %q", got)
	}
	if got := explainFailure("model quota exceeded"); got != "model quota exceeded" {
		t.Fatalf("an unrelated failure changed: %q", got)
	}
}

// An MCP tool's decision names the server, the tool and the arguments; an
// info confirmation (a web fetch) keeps its title, prompt and URLs. Both are
// checkpoints, as the bridge's contract has no other type for them.
func TestDecisionForMCPAndInfo(t *testing.T) {
	d := decisionFor(&agent.ToolCall{CallID: "c1", Name: "append_line", Args: map[string]any{"text": "hi"},
		Confirmation: &agent.Confirmation{Type: "mcp", ServerName: "notes", ToolName: "append_line"}})
	if d.Type != "checkpoint" || d.Kind != "mcp" || d.Server != "notes" || d.ServerTool != "append_line" || d.Tool != "append_line" ||
		d.Description != `call MCP tool append_line on server notes with {"text":"hi"}` || d.Args["text"] != "hi" {
		t.Fatalf("mcp decision = %+v", d)
	}
	d = decisionFor(&agent.ToolCall{CallID: "c2", Name: "web_fetch", Args: map[string]any{"prompt": "get http://127.0.0.1:9/p"},
		Confirmation: &agent.Confirmation{Type: "info", Title: "Confirm Web Fetch", Prompt: "get http://127.0.0.1:9/p", URLs: []string{"http://127.0.0.1:9/p"}}})
	if d.Type != "checkpoint" || d.Kind != "info" || d.Description != "web_fetch Confirm Web Fetch get http://127.0.0.1:9/p" || len(d.URLs) != 1 || d.Server != "" {
		t.Fatalf("info decision = %+v", d)
	}
	d = decisionFor(&agent.ToolCall{CallID: "c3", Name: "run_shell_command", Confirmation: &agent.Confirmation{Type: "exec", Command: "ls"}})
	if d.Type != "shell_command" || d.Kind != "exec" || d.Command != "ls" || d.Args != nil {
		t.Fatalf("exec decision = %+v", d)
	}
}

// A caller that starts a session and watches it a moment later still gets
// what the turn reported in between; a plain Watch gets only what follows.
func TestWatchAllReplaysWhatWasNotRead(t *testing.T) {
	ss := &Session{changed: make(chan struct{})}
	ss.mu.Lock()
	ss.add("text", "early")
	ss.mu.Unlock()
	var all, later []string
	stopAll := ss.WatchAll(func(p Progress) { all = append(all, p.Text) })
	stopLater := ss.Watch(func(p Progress) { later = append(later, p.Text) })
	ss.mu.Lock()
	ss.add("text", "late")
	ss.mu.Unlock()
	stopAll()
	stopLater()
	if strings.Join(all, ",") != "early,late" || strings.Join(later, ",") != "late" {
		t.Fatalf("WatchAll saw %v, Watch saw %v", all, later)
	}
}
