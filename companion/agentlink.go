package companion

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/gemini-ide-companion/gemini-ide-companion/companion/agentpanel"
	"github.com/gemini-ide-companion/gemini-ide-companion/companion/link"
	idectx "github.com/gemini-ide-companion/gemini-ide-companion/context"
)

// newAgentPanel wires the agent panel (issue 16, docs/agent-panel.md) to
// this editor link: its events and diff views go to this plugin, its
// prompts carry this editor's context, and an edit is asked in the panel
// when the plugin shows no diffs or an IDE-mode proposal already shows that
// file.
func (el *EditorLink) newAgentPanel() *agentpanel.Panel {
	return agentpanel.New(agentpanel.Options{
		Conn:      el.conn,
		Context:   func() idectx.IdeContext { return el.s.Engine().Snapshot() },
		Workspace: func() []string { return el.s.Status().WorkspaceFolders },
		DiffBusy: func(path string) bool {
			el.mu.Lock()
			noDiffs := el.noDiffs
			el.mu.Unlock()
			_, shown := el.s.diffs.Get(path)
			return noDiffs || shown
		},
		Logf: func(format string, args ...any) { el.s.log.Info().Msg(fmt.Sprintf(format, args...)) },
	})
}

// agentRequest serves the agent/* requests once the link is initialized.
func (el *EditorLink) agentRequest(ctx context.Context, method string, params json.RawMessage) (any, error) {
	if !el.isStarted() {
		return nil, link.Errorf(link.CodeInvalidRequest, "not initialized")
	}
	return el.agent.Handle(ctx, method, params)
}
