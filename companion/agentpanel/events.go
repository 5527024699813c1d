package agentpanel

import (
	"strings"

	"github.com/a2aproject/a2a-go/a2a"

	"github.com/gemini-ide-companion/gemini-ide-companion/a2a/agent"
	"github.com/gemini-ide-companion/gemini-ide-companion/companion/protocol"
)

// The panel's messages are the types of package protocol (agent.go there);
// the panel calls them by the names it has always used.
type (
	Event               = protocol.AgentEvent
	AgentInfo           = protocol.AgentInfo
	Thought             = protocol.AgentThought
	ToolCall            = protocol.AgentToolCall
	ConfirmationRequest = protocol.ConfirmationRequest
	Option              = protocol.ConfirmationOption
	ExecuteDetails      = protocol.ExecuteDetails
	FileDiff            = protocol.FileDiff
	McpDetails          = protocol.McpDetails
	GenericDetails      = protocol.GenericDetails
)

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
		cr.Options = []Option{{ID: OutcomeOnce, Name: "Allow once"}, {ID: OutcomeAlways, Name: "Allow always"}, {ID: OutcomeCancel, Name: "Deny"}}
	case "exec":
		cr.ExecuteDetails = &ExecuteDetails{Command: c.Command}
		cr.Options = []Option{{ID: OutcomeOnce, Name: "Allow once"}, {ID: OutcomeAlways, Name: "Allow always"}, {ID: OutcomeCancel, Name: "Deny"}}
	case "mcp":
		// The server and the tool's own name are in the confirmation
		// details; the call's name is the agent's (maybe "server__tool").
		tool := c.ToolName
		if tool == "" {
			tool = tc.Name
		}
		cr.McpDetails = &McpDetails{ServerName: c.ServerName, ToolName: tool, ToolDisplayName: c.ToolDisplayName}
		cr.Options = []Option{{ID: OutcomeOnce, Name: "Allow once"}, {ID: OutcomeAlwaysTool, Name: "Allow this tool always"}, {ID: OutcomeAlwaysSrv, Name: "Allow this server always"}, {ID: OutcomeCancel, Name: "Deny"}}
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
		cr.Options = []Option{{ID: OutcomeOnce, Name: "Allow once"}, {ID: OutcomeAlways, Name: always}, {ID: OutcomeCancel, Name: "Deny"}}
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
