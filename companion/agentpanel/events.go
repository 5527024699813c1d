package agentpanel

import (
	"github.com/a2aproject/a2a-go/a2a"

	"github.com/gemini-ide-companion/gemini-ide-companion/a2a/agent"
	"github.com/gemini-ide-companion/gemini-ide-companion/a2a/rfc"
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

// The RFC's shapes of a turn, shared with the project's other A2A fronts
// (a2a/rfc); their JSON is what agent/event carries.
type (
	// Thought is the RFC's AgentThought.
	Thought = rfc.Thought
	// ToolCall is the RFC's ToolCall, built from the server's events.
	ToolCall = rfc.ToolCall
	// ConfirmationRequest is the RFC's ConfirmationRequest.
	ConfirmationRequest = rfc.ConfirmationRequest
	// Option is the RFC's ConfirmationOption; ID is the outcome
	// agent/confirm takes.
	Option = rfc.Option
	// ExecuteDetails is the RFC's ExecuteDetails (a shell command).
	ExecuteDetails = rfc.ExecuteDetails
	// FileDiff is the RFC's FileDiff (a file edit).
	FileDiff = rfc.FileDiff
	// McpDetails is the RFC's McpDetails.
	McpDetails = rfc.McpDetails
	// GenericDetails is the RFC's GenericDetails.
	GenericDetails = rfc.GenericDetails
)

// Outcomes the server takes for a confirmation.
const (
	OutcomeOnce       = rfc.OutcomeOnce
	OutcomeAlways     = rfc.OutcomeAlways
	OutcomeAlwaysTool = rfc.OutcomeAlwaysTool
	OutcomeAlwaysSrv  = rfc.OutcomeAlwaysSrv
	OutcomeCancel     = rfc.OutcomeCancel
)

// toolCall converts a parsed tool call into the RFC's shape (rfc.NewToolCall).
func toolCall(tc *agent.ToolCall, original *string) *ToolCall { return rfc.NewToolCall(tc, original) }

// historyEvents turns a task's history (as tasks/get or tasks/resubscribe
// return it) into the events a panel shows, marked as replayed (see
// rfc.History). last holds the last update of each tool call, in order.
func historyEvents(t *a2a.Task) (out []Event, last []*agent.ToolCall) {
	for _, it := range rfc.History(t) {
		switch {
		case it.User != "":
			out = append(out, Event{Type: "user", Text: it.User, Replay: true})
		case it.Tool != nil:
			out = append(out, Event{Type: "tool", Tool: toolCall(it.Tool, nil), Replay: true})
			last = append(last, it.Tool)
		case it.Thought != nil:
			out = append(out, Event{Type: "thought", Thought: it.Thought, Replay: true})
		case it.Text != "":
			out = append(out, Event{Type: "text", Text: it.Text, Replay: true})
		}
	}
	return out, last
}
