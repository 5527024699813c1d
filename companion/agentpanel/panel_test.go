package agentpanel

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/a2aproject/a2a-go/a2a"

	"github.com/gemini-ide-companion/gemini-ide-companion/a2a/agent"
	"github.com/gemini-ide-companion/gemini-ide-companion/companion/editorlink"
	idectx "github.com/gemini-ide-companion/gemini-ide-companion/context"
	"github.com/gemini-ide-companion/gemini-ide-companion/link"
	"github.com/gemini-ide-companion/gemini-ide-companion/link/protocol"
)

// recConn records what the panel sends to the editor.
type recConn struct {
	mu     sync.Mutex
	events []Event
	calls  []string
}

func (c *recConn) Notify(method string, params any) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if ev, ok := params.(Event); ok {
		c.events = append(c.events, ev)
	}
	return nil
}

func (c *recConn) CallThen(_ context.Context, method string, _, _ any, _ func()) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.calls = append(c.calls, method)
	return nil
}

func code(err error) int {
	var le *link.Error
	if errors.As(err, &le) {
		return le.Code
	}
	return 0
}

// Requests that cannot be served get a clear error and change nothing.
func TestHandleRefusesBadRequests(t *testing.T) {
	p := New(Options{Conn: &recConn{}})
	defer p.Close()
	ctx := context.Background()
	m := link.NewMux()
	p.Register(m)
	for _, tc := range []struct {
		method, params string
		code           int
		want           string
	}{
		{"agent/prompt", `{"text":"hi"}`, link.CodeInvalidRequest, "agent/start first"},
		{"agent/prompt", `{"text":"  "}`, link.CodeInvalidParams, "text is required"},
		{"agent/prompt", `{"text":5}`, link.CodeInvalidParams, "text: expected string"},
		{"agent/confirm", `{"callId":"x","outcome":"yes"}`, link.CodeInvalidParams, "outcome"},
		{"agent/confirm", `{"callId":"x","outcome":"cancel"}`, link.CodeInvalidRequest, "waits for an answer"},
		{"agent/cancel", ``, link.CodeInvalidRequest, "agent/start first"},
		{"agent/start", `{"url":"ftp://x"}`, link.CodeInvalidParams, "url"},
		{"agent/start", `{"dir":"relative"}`, link.CodeInvalidParams, "absolute"},
		{"agent/start", `{}`, link.CodeInvalidParams, "no workspace folder"},
		{"agent/runCommand", `{"command":"/"}`, link.CodeInvalidParams, "command is required"},
		{"agent/resubscribe", `{}`, link.CodeInvalidRequest, "agent/start first"},
		{"agent/nope", `{}`, link.CodeMethodNotFound, "unknown method"},
	} {
		_, err := m.HandleRequest(ctx, tc.method, json.RawMessage(tc.params))
		if code(err) != tc.code || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s %s: %v; want code %d mentioning %q", tc.method, tc.params, err, tc.code, tc.want)
		}
	}
	st, err := m.HandleRequest(ctx, "agent/status", nil)
	if err != nil || st.(protocol.AgentStatus).Attached {
		t.Fatalf("status = %+v, %v", st, err)
	}
}

// Decisions on IDE-mode diffs (ids below the panel's range) are not the
// panel's; a decision on a panel diff nobody waits on is taken and said.
func TestDecideRouting(t *testing.T) {
	c := &recConn{}
	p := New(Options{Conn: c})
	defer p.Close()
	if p.Decide("/w/a.txt", 3, true, "x") {
		t.Fatal("an IDE-mode decision was taken by the panel")
	}
	var nilPanel *Panel
	if nilPanel.Decide("/w/a.txt", diffBase+1, true, "x") {
		t.Fatal("a nil panel took a decision")
	}
	if !p.Decide("/w/a.txt", diffBase+7, true, "x") {
		t.Fatal("a decision on a panel diff was not taken")
	}
	if len(c.events) != 1 || c.events[0].Type != "notice" || !strings.Contains(c.events[0].Text, "nothing was written") {
		t.Fatalf("events = %+v", c.events)
	}
}

// The server's tool calls become the RFC's ToolCall with the options the
// server takes.
func TestToolCallMapping(t *testing.T) {
	old := "old\n"
	edit := toolCall(&agent.ToolCall{CallID: "c1", Name: "write_file", Status: "awaiting_approval",
		Args:         map[string]any{"file_path": "/w/a.txt"},
		Confirmation: &agent.Confirmation{Type: "edit", FileName: "a.txt", FilePath: "/w/a.txt", FileDiff: "@@", NewContent: "new\n"}}, &old)
	fe := edit.ConfirmationRequest.FileEditDetails
	if edit.Status != "PENDING" || fe == nil || *fe.OldContent != old || fe.NewContent != "new\n" || fe.FormattedDiff != "@@" {
		t.Fatalf("edit = %+v", edit)
	}
	exec := toolCall(&agent.ToolCall{CallID: "c2", Name: "run_shell_command", Status: "awaiting_approval",
		Confirmation: &agent.Confirmation{Type: "exec", Command: "ls"}}, nil)
	var ids []string
	for _, o := range exec.ConfirmationRequest.Options {
		ids = append(ids, o.ID)
	}
	if exec.ConfirmationRequest.ExecuteDetails.Command != "ls" || strings.Join(ids, ",") != "proceed_once,proceed_always,cancel" {
		t.Fatalf("exec = %+v", exec.ConfirmationRequest)
	}
	for in, want := range map[string]string{"executing": "EXECUTING", "success": "SUCCEEDED", "error": "FAILED", "cancelled": "CANCELLED", "scheduled": "PENDING"} {
		if got := toolCall(&agent.ToolCall{Status: in}, nil); got.Status != want || got.ConfirmationRequest != nil {
			t.Errorf("status %s -> %+v", in, got)
		}
	}
}

// An MCP tool's confirmation names the server and the tool from the
// server's confirmation details (not from the tool's arguments) and offers
// the four MCP outcomes; an info confirmation (a web fetch) becomes
// GenericDetails with its title, prompt and URLs.
func TestToolCallMappingMCPAndInfo(t *testing.T) {
	mcpCall := toolCall(&agent.ToolCall{CallID: "c3", Name: "notes__append_line", Status: "awaiting_approval",
		Args: map[string]any{"serverName": "not-this", "text": "hi"},
		Confirmation: &agent.Confirmation{Type: "mcp", Title: "Confirm MCP Tool Execution", ServerName: "notes",
			ToolName: "append_line", ToolDisplayName: "append_line (notes MCP Server)"}}, nil)
	md := mcpCall.ConfirmationRequest.McpDetails
	if md == nil || md.ServerName != "notes" || md.ToolName != "append_line" || md.ToolDisplayName != "append_line (notes MCP Server)" {
		t.Fatalf("mcp details = %+v", md)
	}
	var ids []string
	for _, o := range mcpCall.ConfirmationRequest.Options {
		ids = append(ids, o.ID)
	}
	if strings.Join(ids, ",") != "proceed_once,proceed_always_tool,proceed_always_server,cancel" {
		t.Fatalf("mcp options = %v", ids)
	}
	info := toolCall(&agent.ToolCall{CallID: "c4", Name: "web_fetch", Status: "awaiting_approval",
		Confirmation: &agent.Confirmation{Type: "info", Title: "Confirm Web Fetch", Prompt: "summarize http://127.0.0.1:9/p", URLs: []string{"http://127.0.0.1:9/p"}}}, nil)
	gd := info.ConfirmationRequest.GenericDetails
	if gd == nil || gd.Description != "Confirm Web Fetch\nsummarize http://127.0.0.1:9/p" || len(gd.Urls) != 1 || gd.Urls[0] != "http://127.0.0.1:9/p" {
		t.Fatalf("info details = %+v", gd)
	}
}

// A task's history replays as the panel showed it: the user's prompt
// without the editor context, thoughts, text, and each tool call once, in
// its last state.
func TestHistoryEvents(t *testing.T) {
	msg := func(role a2a.MessageRole, parts ...a2a.Part) *a2a.Message { return a2a.NewMessage(role, parts...) }
	tool := func(status string) a2a.Part {
		return a2a.DataPart{Data: map[string]any{"request": map[string]any{"callId": "c1", "name": "write_file"}, "status": status,
			"confirmationDetails": map[string]any{"type": "edit", "filePath": "/w/a.txt", "newContent": "x"}}}
	}
	task := &a2a.Task{ID: "t1", History: []*a2a.Message{
		msg(a2a.MessageRoleUser, a2a.TextPart{Text: "do it"}, a2a.TextPart{Text: "Context from the user's editor..."}),
		msg(a2a.MessageRoleAgent, a2a.DataPart{Data: map[string]any{"subject": "Plan", "description": "write a.txt"}}),
		msg(a2a.MessageRoleAgent, a2a.TextPart{Text: "On it."}),
		msg(a2a.MessageRoleAgent, tool("validating")),
		msg(a2a.MessageRoleAgent, tool("awaiting_approval")),
		msg(a2a.MessageRoleUser, a2a.DataPart{Data: map[string]any{"callId": "c1", "outcome": "cancel"}}),
	}}
	events, last := historyEvents(task)
	var got []string
	for _, e := range events {
		if !e.Replay {
			t.Errorf("event %+v not marked as replayed", e)
		}
		switch e.Type {
		case "user", "text":
			got = append(got, e.Type+":"+e.Text)
		case "thought":
			got = append(got, "thought:"+e.Thought.Subject)
		case "tool":
			got = append(got, "tool:"+e.Tool.ToolCallID+":"+e.Tool.Status)
		}
	}
	if strings.Join(got, "|") != "user:do it|thought:Plan|text:On it.|tool:c1:PENDING" {
		t.Fatalf("replay = %q", got)
	}
	if len(last) != 1 || last[0].Status != "awaiting_approval" {
		t.Fatalf("last = %+v", last)
	}
}

// The context sent with a prompt names the open files, newest first, and
// the active one's cursor and selection.
func TestContextText(t *testing.T) {
	if contextText(idectx.IdeContext{}) != "" {
		t.Fatal("context text without open files")
	}
	sel := "func main()"
	c := idectx.IdeContext{WorkspaceState: &idectx.WorkspaceState{OpenFiles: []idectx.File{
		{Path: "/w/old.go", Timestamp: 1},
		{Path: "/w/main.go", Timestamp: 2, IsActive: true, Cursor: &idectx.Cursor{Line: 3, Character: 5}, SelectedText: &sel},
	}}}
	got := contextText(c)
	if !strings.Contains(got, "/w/main.go (active, cursor at line 3, character 5)") || !strings.Contains(got, "func main()") ||
		strings.Index(got, "/w/main.go") > strings.Index(got, "/w/old.go") {
		t.Fatalf("context text:\n%s", got)
	}
}

var _ editorlink.ExtensionHandler = (*Panel)(nil)
