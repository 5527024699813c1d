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
)

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

// Option is the RFC's ConfirmationOption; ID is the outcome the server
// takes (one of the Outcome constants).
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
	// Note (extension) says what the front changed in the agent's
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

// ThoughtOf splits a thought update's text ("subject: description", as
// agent.Parse gives it) into the RFC's AgentThought.
func ThoughtOf(u agent.Update) Thought {
	subject, desc, _ := strings.Cut(u.Text, ": ")
	return Thought{Subject: subject, Description: desc}
}
