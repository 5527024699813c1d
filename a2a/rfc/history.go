package rfc

import (
	"github.com/a2aproject/a2a-go/a2a"

	"github.com/gemini-ide-companion/gemini-ide-companion/a2a/agent"
)

// Item is one thing of a task's history, for a client to replay: exactly
// one field is set.
type Item struct {
	// User is the text of one of the user's prompts.
	User string
	// Thought is one of the agent's thoughts.
	Thought *Thought
	// Text is a chunk of the agent's answer.
	Text string
	// Tool is a tool call, as its last update in the history left it, at
	// the place of its first.
	Tool *agent.ToolCall
}

// History turns a task's history (as tasks/get or tasks/resubscribe return
// it) into the items a client replays. The server's history keeps every
// status message, so thoughts, text chunks and every tool-call update are
// there; a tool call is one item, with its last update. The user's prompt
// is its message's first text part; what a client sent along with it (the
// editor's context) and the answers to confirmations are not repeated.
func History(t *a2a.Task) []Item {
	var out []Item
	at := map[string]int{}
	for _, m := range t.History {
		if m == nil {
			continue
		}
		if m.Role == a2a.MessageRoleUser {
			for _, p := range m.Parts {
				if tp, ok := p.(a2a.TextPart); ok {
					out = append(out, Item{User: tp.Text})
					break
				}
			}
			continue
		}
		u := agent.Parse(m)
		switch {
		case u.Tool != nil:
			if i, ok := at[u.Tool.CallID]; ok {
				out[i].Tool = u.Tool
			} else {
				at[u.Tool.CallID] = len(out)
				out = append(out, Item{Tool: u.Tool})
			}
		case thoughtOf(m) != nil:
			out = append(out, Item{Thought: thoughtOf(m)})
		case u.Text != "":
			out = append(out, Item{Text: u.Text})
		}
	}
	return out
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
