package agentpanel

import (
	"context"
	"strings"
	"time"

	"github.com/gemini-ide-companion/gemini-ide-companion/a2a/agent"
	"github.com/gemini-ide-companion/gemini-ide-companion/a2a/rfc"
	"github.com/gemini-ide-companion/gemini-ide-companion/link/protocol"
)

// SlashCommand is the RFC's SlashCommand (see rfc.ListCommands).
type SlashCommand = rfc.SlashCommand

// CommandArgument is the RFC's SlashCommandArgument.
type CommandArgument = rfc.CommandArgument

const commandTimeout = 5 * time.Second

func (p *Panel) listCommands(ctx context.Context) (protocol.AgentListCommandsResult, error) {
	ag, err := p.agentOrErr()
	if err != nil {
		return protocol.AgentListCommandsResult{}, err
	}
	ctx, cancel := context.WithTimeout(ctx, commandTimeout)
	defer cancel()
	cmds, err := rfc.ListCommands(ctx, ag)
	if err != nil {
		return protocol.AgentListCommandsResult{}, err
	}
	return protocol.AgentListCommandsResult{Commands: cmds}, nil
}

// runCommand runs a slash command (POST /executeCommand) in the background
// and reports its output as a command event; a streaming command's events
// are shown as they come.
func (p *Panel) runCommand(command, args string) error {
	command = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(command), "/"))
	if command == "" {
		return invalid("command is required")
	}
	ag, err := p.agentOrErr()
	if err != nil {
		return err
	}
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		ctx, cancel := context.WithTimeout(p.base, 5*time.Minute)
		defer cancel()
		if err := p.execute(ctx, ag, command, strings.Fields(args)); err != nil {
			p.emitError("/%s: %v", command, err)
		}
	}()
	return nil
}

func (p *Panel) execute(ctx context.Context, ag *agent.Agent, command string, args []string) error {
	data, streamed, err := rfc.ExecuteCommand(ctx, ag, command, args, func(text string) {
		p.emit(Event{Type: "command", Command: command, Data: text})
	})
	if err != nil || streamed {
		return err
	}
	p.emit(Event{Type: "command", Command: command, Data: data})
	return nil
}
