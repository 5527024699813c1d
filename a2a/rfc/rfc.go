// Package rfc is the development-tool extension RFC's view of what Gemini
// CLI's A2A server (0.25.x) sends: its tool-call events as the RFC's
// ToolCall with a ConfirmationRequest and the options a user answers with,
// its thoughts as AgentThought, a task's history as the items a client
// replays, and its slash commands (SlashCommand, listed and run over the
// server's own HTTP endpoints). Every A2A front of the project (the editor's
// agent panel, the ACP agent) shows a turn through this one model, so that
// a tool call, a confirmation or a command means the same in each.
package rfc

import (
	"strings"

	"github.com/gemini-ide-companion/gemini-ide-companion/a2a/agent"
	"github.com/gemini-ide-companion/gemini-ide-companion/link/protocol"
)

// The RFC's shapes are the agent panel's wire types (agent/event), defined
// once with the editor link in package protocol and its JSON Schema; every
// front uses them through these names.
type (
	// Thought is the RFC's AgentThought.
	Thought = protocol.AgentThought
	// ToolCall is the RFC's ToolCall (development-tool extension), in the
	// proto3 JSON form, built from the server's own tool-call events.
	ToolCall = protocol.AgentToolCall
	// ConfirmationRequest is the RFC's ConfirmationRequest.
	ConfirmationRequest = protocol.ConfirmationRequest
	// Option is the RFC's ConfirmationOption; ID is the outcome the server
	// takes (one of the Outcome constants).
	Option = protocol.ConfirmationOption
	// ExecuteDetails is the RFC's ExecuteDetails (a shell command).
	ExecuteDetails = protocol.ExecuteDetails
	// FileDiff is the RFC's FileDiff (a file edit).
	FileDiff = protocol.FileDiff
	// McpDetails is the RFC's McpDetails.
	McpDetails = protocol.McpDetails
	// GenericDetails is the RFC's GenericDetails.
	GenericDetails = protocol.GenericDetails
)

// Outcomes the server takes for a confirmation.
const (
	OutcomeOnce       = "proceed_once"
	OutcomeAlways     = "proceed_always"
	OutcomeAlwaysTool = "proceed_always_tool"
	OutcomeAlwaysSrv  = "proceed_always_server"
	OutcomeCancel     = "cancel"
)

// IsOutcome reports whether s is an outcome the server takes.
func IsOutcome(s string) bool {
	switch s {
	case OutcomeOnce, OutcomeAlways, OutcomeAlwaysTool, OutcomeAlwaysSrv, OutcomeCancel:
		return true
	}
	return false
}

// Status maps the server's tool status to the RFC's ToolCallStatus.
func Status(s string) string {
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

// NewToolCall converts a parsed tool call into the RFC's shape. original is
// the file's content before an edit, when known. A call that awaits
// approval gets its ConfirmationRequest, with the options the server takes
// for its kind of confirmation.
func NewToolCall(tc *agent.ToolCall, original *string) *ToolCall {
	out := &ToolCall{
		ToolCallID: tc.CallID, Status: Status(tc.Status), ToolName: tc.Name,
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

// ThoughtOf splits a thought update's text ("subject: description", as
// agent.Parse gives it) into the RFC's AgentThought.
func ThoughtOf(u agent.Update) Thought {
	subject, desc, _ := strings.Cut(u.Text, ": ")
	return Thought{Subject: subject, Description: desc}
}
