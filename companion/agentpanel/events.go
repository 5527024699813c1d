package agentpanel

import (
	"github.com/a2aproject/a2a-go/a2a"

	"github.com/gemini-ide-companion/gemini-ide-companion/a2a/agent"
	"github.com/gemini-ide-companion/gemini-ide-companion/a2a/rfc"
	"github.com/gemini-ide-companion/gemini-ide-companion/link/protocol"
)

// Event and AgentInfo are the params of agent/event and what a ready
// event says of the agent: types of the editor link (package protocol).
type (
	Event     = protocol.AgentEvent
	AgentInfo = protocol.AgentInfo
)

// toolCall converts a parsed tool call into the RFC's shape (rfc.NewToolCall).
func toolCall(tc *agent.ToolCall, original *string) *rfc.ToolCall {
	return rfc.NewToolCall(tc, original)
}

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
