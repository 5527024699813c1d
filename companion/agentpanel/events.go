package agentpanel

import (
	"strings"

	"github.com/a2aproject/a2a-go/a2a"

	"github.com/gemini-ide-companion/gemini-ide-companion/a2a/agent"
)

// Event is the params of an agent/event notification: one thing that
// happened in the conversation, for the panel to show. Type says which of
// the other fields are set.
type Event struct {
	// Type: "ready", "user", "text", "thought", "tool", "state", "command",
	// "notice", "error", "reset".
	Type string `json:"type"`
	// Text is the text of user, text, notice and error events, and what a
	// state event says to the user.
	Text string `json:"text,omitempty"`
	// Thought is the RFC's AgentThought of a thought event.
	Thought *Thought `json:"thought,omitempty"`
	// Tool is the RFC's ToolCall of a tool event.
	Tool *ToolCall `json:"tool,omitempty"`
	// State is the panel state of a state event: "working", "waiting"
	// (a tool call waits for the user), "idle" (the turn ended), "canceled",
	// "failed", "stopped" (the server the sidecar started exited).
	State string `json:"state,omitempty"`
	// TaskState is the A2A task state behind State.
	TaskState string `json:"taskState,omitempty"`
	TaskID    string `json:"taskId,omitempty"`
	ContextID string `json:"contextId,omitempty"`
	// Replay marks events re-sent from the task's history on resubscribe.
	Replay bool `json:"replay,omitempty"`
	// Agent describes the agent on ready events.
	Agent *AgentInfo `json:"agent,omitempty"`
	// Command is the slash command a command event answers, Data its output.
	Command string `json:"command,omitempty"`
	Data    any    `json:"data,omitempty"`
}

// AgentInfo is what a ready event says about the agent the panel talks to.
type AgentInfo struct {
	Name string `json:"name"`
	URL  string `json:"url"`
	// PID is the server's process id when this sidecar started (or adopted)
	// it; the plugin hands it back after a sidecar restart.
	PID int `json:"pid,omitempty"`
	// Started is set when the sidecar started the server and will stop it.
	Started bool `json:"started"`
	// Context says how the editor's context reaches the agent ("prompt":
	// sent with each prompt).
	Context string `json:"context"`
}

// Thought is the RFC's AgentThought.
type Thought struct {
	Subject     string `json:"subject"`
	Description string `json:"description"`
}

// ToolCall is the RFC's ToolCall (development-tool extension), in the
// proto3 JSON form, built from the server's own tool-call events.
type ToolCall struct {
	ToolCallID      string         `json:"toolCallId"`
	Status          string         `json:"status"`
	ToolName        string         `json:"toolName"`
	Description     string         `json:"description,omitempty"`
	InputParameters map[string]any `json:"inputParameters,omitempty"`
	// Output is the result text (the RFC's ToolOutput.text) once it ran.
	Output string `json:"output,omitempty"`
	// ConfirmationRequest is set while the call waits for the user.
	ConfirmationRequest *ConfirmationRequest `json:"confirmationRequest,omitempty"`
	// DiffShown (extension) is set when the sidecar showed the edit as the
	// editor's own diff view (diff/open with DiffID): answer it there.
	DiffShown bool   `json:"diffShown,omitempty"`
	DiffID    uint64 `json:"diffId,omitempty"`
}

// ConfirmationRequest is the RFC's ConfirmationRequest.
type ConfirmationRequest struct {
	Options         []Option        `json:"options"`
	ExecuteDetails  *ExecuteDetails `json:"executeDetails,omitempty"`
	FileEditDetails *FileDiff       `json:"fileEditDetails,omitempty"`
	McpDetails      *McpDetails     `json:"mcpDetails,omitempty"`
	GenericDetails  *GenericDetails `json:"genericDetails,omitempty"`
}

// Option is the RFC's ConfirmationOption; ID is the outcome agent/confirm
// takes.
type Option struct {
	ID   string `json:"id"`
	Name string `json:"name"`
}

// ExecuteDetails is the RFC's ExecuteDetails (a shell command).
type ExecuteDetails struct {
	Command string `json:"command"`
}

// FileDiff is the RFC's FileDiff (a file edit).
type FileDiff struct {
	FileName      string  `json:"fileName"`
	FilePath      string  `json:"filePath"`
	OldContent    *string `json:"oldContent,omitempty"`
	NewContent    string  `json:"newContent"`
	FormattedDiff string  `json:"formattedDiff,omitempty"`
	// Note (extension) says what the sidecar changed in the agent's
	// proposal: the file's final newline, which the server trims, is kept.
	Note string `json:"note,omitempty"`
}

// McpDetails is the RFC's McpDetails: the MCP server (its name in the
// agent's settings) and the tool's own name on it.
type McpDetails struct {
	ServerName string `json:"serverName"`
	ToolName   string `json:"toolName"`
	// ToolDisplayName (extension) is how the agent shows the tool, e.g.
	// "append_line (notes MCP Server)".
	ToolDisplayName string `json:"toolDisplayName,omitempty"`
}

// GenericDetails is the RFC's GenericDetails, for the server's "info"
// confirmations (a web fetch, a skill, a remote agent, any other tool).
type GenericDetails struct {
	// Description is the confirmation's title and prompt.
	Description string `json:"description"`
	// Urls (extension) are the addresses a web fetch would reach.
	Urls []string `json:"urls,omitempty"`
}

// Outcomes the server takes for a confirmation.
const (
	OutcomeOnce       = "proceed_once"
	OutcomeAlways     = "proceed_always"
	OutcomeAlwaysTool = "proceed_always_tool"
	OutcomeAlwaysSrv  = "proceed_always_server"
	OutcomeCancel     = "cancel"
)

var validOutcomes = map[string]bool{OutcomeOnce: true, OutcomeAlways: true, OutcomeAlwaysTool: true, OutcomeAlwaysSrv: true, OutcomeCancel: true}

// rfcStatus maps the server's tool status to the RFC's ToolCallStatus.
func rfcStatus(s string) string {
	switch s {
	case "executing":
		return "EXECUTING"
	case "success":
		return "SUCCEEDED"
	case "error":
		return "FAILED"
	case "cancelled":
		return "CANCELLED"
	default: // validating, scheduled, awaiting_approval
		return "PENDING"
	}
}

// toolCall converts a parsed tool call into the RFC's shape. original is
// the file's content before an edit, when known.
func toolCall(tc *agent.ToolCall, original *string) *ToolCall {
	out := &ToolCall{
		ToolCallID: tc.CallID, Status: rfcStatus(tc.Status), ToolName: tc.Name,
		InputParameters: tc.Args, Output: tc.Output,
	}
	if d, ok := tc.Args["description"].(string); ok {
		out.Description = d
	}
	c := tc.Confirmation
	if tc.Status != "awaiting_approval" || c == nil {
		return out
	}
	cr := &ConfirmationRequest{}
	switch c.Type {
	case "edit":
		cr.FileEditDetails = &FileDiff{FileName: c.FileName, FilePath: c.FilePath, OldContent: original, NewContent: c.NewContent, FormattedDiff: c.FileDiff}
		cr.Options = []Option{{OutcomeOnce, "Allow once"}, {OutcomeAlways, "Allow always"}, {OutcomeCancel, "Deny"}}
	case "exec":
		cr.ExecuteDetails = &ExecuteDetails{Command: c.Command}
		cr.Options = []Option{{OutcomeOnce, "Allow once"}, {OutcomeAlways, "Allow always"}, {OutcomeCancel, "Deny"}}
	case "mcp":
		// The server and the tool's own name are in the confirmation
		// details; the call's name is the agent's (maybe "server__tool").
		tool := c.ToolName
		if tool == "" {
			tool = tc.Name
		}
		cr.McpDetails = &McpDetails{ServerName: c.ServerName, ToolName: tool, ToolDisplayName: c.ToolDisplayName}
		cr.Options = []Option{{OutcomeOnce, "Allow once"}, {OutcomeAlwaysTool, "Allow this tool always"}, {OutcomeAlwaysSrv, "Allow this server always"}, {OutcomeCancel, "Deny"}}
	default:
		desc := strings.TrimSpace(strings.Join([]string{c.Title, c.Prompt}, "\n"))
		if desc == "" {
			desc = tc.Name
		}
		cr.GenericDetails = &GenericDetails{Description: desc, Urls: c.URLs}
		always := "Allow always"
		if tc.Name == "web_fetch" {
			// Server 0.25.2 takes "always" on a web fetch as switching the
			// task to auto-edit: its later file edits are not asked either.
			always = "Allow always (this conversation's file edits will no longer be asked either)"
		}
		cr.Options = []Option{{OutcomeOnce, "Allow once"}, {OutcomeAlways, always}, {OutcomeCancel, "Deny"}}
	}
	out.ConfirmationRequest = cr
	return out
}

// historyEvents turns a task's history (as tasks/get or tasks/resubscribe
// return it) into the events a panel shows, marked as replayed. The
// server's history keeps every status message, so thoughts, text chunks and
// every tool-call update are there; only the last update of each call is
// kept. last holds the last update of each tool call, in order.
func historyEvents(t *a2a.Task) (out []Event, last []*agent.ToolCall) {
	lastTool := map[string]int{}
	lastCall := map[string]int{}
	for _, m := range t.History {
		if m == nil {
			continue
		}
		if m.Role == a2a.MessageRoleUser {
			// The user's own prompt is its first text part; the editor
			// context and confirmations are not repeated.
			for _, p := range m.Parts {
				if tp, ok := p.(a2a.TextPart); ok {
					out = append(out, Event{Type: "user", Text: tp.Text, Replay: true})
					break
				}
			}
			continue
		}
		u := agent.Parse(m)
		switch {
		case u.Tool != nil:
			ev := Event{Type: "tool", Tool: toolCall(u.Tool, nil), Replay: true}
			if i, ok := lastTool[u.Tool.CallID]; ok {
				out[i] = ev
				last[lastCall[u.Tool.CallID]] = u.Tool
			} else {
				lastTool[u.Tool.CallID] = len(out)
				out = append(out, ev)
				lastCall[u.Tool.CallID] = len(last)
				last = append(last, u.Tool)
			}
		case thoughtOf(m) != nil:
			out = append(out, Event{Type: "thought", Thought: thoughtOf(m), Replay: true})
		case u.Text != "":
			out = append(out, Event{Type: "text", Text: u.Text, Replay: true})
		}
	}
	return out, last
}

// thoughtOf returns the thought a message carries (a data part with a
// subject and a description), or nil.
func thoughtOf(m *a2a.Message) *Thought {
	for _, p := range m.Parts {
		var d map[string]any
		switch x := p.(type) {
		case a2a.DataPart:
			d = x.Data
		case *a2a.DataPart:
			d = x.Data
		}
		s, ok1 := d["subject"].(string)
		desc, ok2 := d["description"].(string)
		if ok1 || ok2 {
			return &Thought{Subject: s, Description: desc}
		}
	}
	return nil
}
