package agentpanel

import (
	"context"

	"github.com/gemini-ide-companion/gemini-ide-companion/link"
	"github.com/gemini-ide-companion/gemini-ide-companion/link/protocol"
	"github.com/gemini-ide-companion/gemini-ide-companion/link/protocol/rpc"
)

// Register routes the editor link's agent/* requests on m to the panel
// (editorlink.ExtensionHandler). None waits on the agent: what takes time
// (starting the server, a turn, a command) runs in the background and
// reports through agent/event.
func (p *Panel) Register(m *link.Mux) {
	rpc.RegisterAgent(m, methods{p}, func(method string, err error) {
		p.opts.Logf("agent panel: %s dropped: %v", method, err)
	})
}

// methods serve the agent panel's plugin → sidecar methods
// (rpc.AgentHandler).
type methods struct{ p *Panel }

var done = protocol.Empty{}

// AgentStart attaches to a server or starts one.
func (m methods) AgentStart(_ context.Context, a protocol.AgentStartParams) (protocol.AgentStartResult, error) {
	return m.p.start(a)
}

// AgentPrompt sends the user's message.
func (m methods) AgentPrompt(_ context.Context, a protocol.AgentPromptParams) (protocol.Empty, error) {
	return done, m.p.prompt(a.Text, a.Context == nil || *a.Context)
}

// AgentConfirm answers a pending tool call.
func (m methods) AgentConfirm(_ context.Context, a protocol.AgentConfirmParams) (protocol.Empty, error) {
	return done, m.p.confirm(a.CallID, a.Outcome, a.Content)
}

// AgentCancel stops the turn.
func (m methods) AgentCancel(context.Context) (protocol.Empty, error) {
	return done, m.p.cancel()
}

// AgentListCommands lists the agent's slash commands.
func (m methods) AgentListCommands(ctx context.Context) (protocol.AgentListCommandsResult, error) {
	return m.p.listCommands(ctx)
}

// AgentRunCommand runs a slash command.
func (m methods) AgentRunCommand(_ context.Context, a protocol.AgentRunCommandParams) (protocol.Empty, error) {
	return done, m.p.runCommand(a.Command, a.Args)
}

// AgentResubscribe follows a task again.
func (m methods) AgentResubscribe(_ context.Context, a protocol.AgentResubscribeParams) (protocol.Empty, error) {
	return done, m.p.resubscribe(a.TaskID, a.ContextID)
}

// AgentStatus reports the panel's state.
func (m methods) AgentStatus(context.Context) (protocol.AgentStatus, error) {
	return m.p.status(), nil
}

// AgentStop forgets the agent.
func (m methods) AgentStop(context.Context) (protocol.Empty, error) {
	m.p.detach()
	return done, nil
}
