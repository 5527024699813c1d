package agent

import (
	"reflect"
	"testing"

	"github.com/a2aproject/a2a-go/a2a"
)

// confirmationEvent is a tool-call-confirmation status update carrying data
// the way Gemini CLI's A2A server 0.25.2 sends it.
func confirmationEvent(name string, args, details map[string]any) *a2a.TaskStatusUpdateEvent {
	data := map[string]any{
		"request":             map[string]any{"callId": name + "-1", "name": name, "args": args},
		"status":              "awaiting_approval",
		"confirmationDetails": details,
	}
	return &a2a.TaskStatusUpdateEvent{
		TaskID: "t1", ContextID: "c1",
		Status:   a2a.TaskStatus{State: a2a.TaskStateWorking, Message: &a2a.Message{Role: a2a.MessageRoleAgent, Parts: a2a.ContentParts{a2a.DataPart{Data: data}}}},
		Metadata: map[string]any{"coderAgent": map[string]any{"kind": KindConfirmation}},
	}
}

// The confirmation details of every type the server sends are read into
// Confirmation: an MCP tool's server and tool names, an info prompt's URLs,
// and, as before, an edit's file and diff and an exec's command.
func TestParseConfirmations(t *testing.T) {
	cases := []struct {
		name    string
		tool    string
		details map[string]any
		want    Confirmation
	}{
		{"mcp", "append_line", map[string]any{
			"type": "mcp", "title": "Confirm MCP Tool Execution", "serverName": "notes",
			"toolName": "append_line", "toolDisplayName": "append_line (notes MCP Server)"},
			Confirmation{Type: "mcp", Title: "Confirm MCP Tool Execution", ServerName: "notes", ToolName: "append_line", ToolDisplayName: "append_line (notes MCP Server)"}},
		{"info", "web_fetch", map[string]any{
			"type": "info", "title": "Confirm Web Fetch", "prompt": "summarize http://127.0.0.1:9/page",
			"urls": []any{"http://127.0.0.1:9/page", 7}},
			Confirmation{Type: "info", Title: "Confirm Web Fetch", Prompt: "summarize http://127.0.0.1:9/page", URLs: []string{"http://127.0.0.1:9/page"}}},
		{"edit", "write_file", map[string]any{
			"type": "edit", "title": "Confirm Write: a.txt", "fileName": "a.txt", "filePath": "/w/a.txt",
			"fileDiff": "@@ -0,0 +1 @@\n+x\n", "originalContent": "", "newContent": "x\n"},
			Confirmation{Type: "edit", Title: "Confirm Write: a.txt", FileName: "a.txt", FilePath: "/w/a.txt", FileDiff: "@@ -0,0 +1 @@\n+x\n", NewContent: "x\n", OriginalContent: new("")}},
		{"exec", "run_shell_command", map[string]any{
			"type": "exec", "title": "Confirm Shell Command", "command": "ls", "rootCommand": "ls"},
			Confirmation{Type: "exec", Title: "Confirm Shell Command", Command: "ls"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			u := Parse(confirmationEvent(c.tool, map[string]any{"text": "hi"}, c.details))
			if u.Kind != KindConfirmation || u.Tool == nil || u.Tool.Name != c.tool || u.Tool.Status != "awaiting_approval" {
				t.Fatalf("update = %+v", u)
			}
			if got := u.Tool.Confirmation; got == nil || !reflect.DeepEqual(*got, c.want) {
				t.Fatalf("confirmation = %+v; want %+v", got, c.want)
			}
		})
	}
}

// A tool update without confirmation details has no Confirmation.
func TestParseToolUpdateWithoutConfirmation(t *testing.T) {
	ev := confirmationEvent("append_line", nil, nil)
	delete(ev.Status.Message.Parts[0].(a2a.DataPart).Data, "confirmationDetails")
	ev.Status.Message.Parts[0].(a2a.DataPart).Data["status"] = "success"
	u := Parse(ev)
	if u.Tool == nil || u.Tool.Confirmation != nil || u.Tool.Status != "success" {
		t.Fatalf("update = %+v", u.Tool)
	}
}

// A tool event carries the tool's kind and display name, and a finished
// edit its result diff.
func TestParseToolKindAndResultDiff(t *testing.T) {
	data := map[string]any{
		"request":  map[string]any{"callId": "w1", "name": "write_file", "args": map[string]any{}},
		"status":   "success",
		"tool":     map[string]any{"name": "write_file", "displayName": "WriteFile", "kind": "edit"},
		"response": map[string]any{"resultDisplay": map[string]any{"fileName": "a.txt", "filePath": "/w/a.txt", "fileDiff": "@@", "originalContent": "a", "newContent": "b"}},
	}
	ev := &a2a.TaskStatusUpdateEvent{TaskID: "t", Status: a2a.TaskStatus{State: a2a.TaskStateWorking,
		Message: &a2a.Message{Role: a2a.MessageRoleAgent, Parts: a2a.ContentParts{a2a.DataPart{Data: data}}}}}
	tc := Parse(ev).Tool
	if tc == nil || tc.Kind != "edit" || tc.DisplayName != "WriteFile" || tc.ResultDiff == nil ||
		tc.ResultDiff.FilePath != "/w/a.txt" || tc.ResultDiff.NewContent != "b" || tc.ResultDiff.OriginalContent == nil || *tc.ResultDiff.OriginalContent != "a" {
		t.Fatalf("parsed %+v (diff %+v)", tc, tc.ResultDiff)
	}
}
