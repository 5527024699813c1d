package rfc

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/a2aproject/a2a-go/a2a"

	"github.com/gemini-ide-companion/gemini-ide-companion/a2a/agent"
	"github.com/gemini-ide-companion/gemini-ide-companion/link/protocol"
)

// SlashCommand is the RFC's SlashCommand. Gemini CLI's A2A server 0.25.2
// serves it at GET /listCommands (not the RFC's commands/get method), with
// subcommands named by their full path ("memory show"). Like the turn's
// shapes, it is defined with the editor link (protocol.SlashCommand).
type SlashCommand = protocol.SlashCommand

// CommandArgument is the RFC's SlashCommandArgument.
type CommandArgument = protocol.SlashCommandArgument

// ListCommands asks the agent for its slash commands (GET /listCommands),
// with the agent's headers (a server we started wants its secret). It
// never returns a nil slice on success.
func ListCommands(ctx context.Context, ag *agent.Agent) ([]SlashCommand, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, ag.URL+"/listCommands", nil)
	if err != nil {
		return nil, fmt.Errorf("listCommands: %w", err)
	}
	resp, err := ag.Do(req)
	if err != nil {
		return nil, fmt.Errorf("listCommands: %w", err)
	}
	defer resp.Body.Close()
	var out struct {
		Commands []SlashCommand `json:"commands"`
		Error    string         `json:"error"`
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, 4<<20)).Decode(&out); err != nil {
		return nil, fmt.Errorf("listCommands: HTTP %s: %w", resp.Status, err)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("listCommands: HTTP %s: %s", resp.Status, out.Error)
	}
	if out.Commands == nil {
		out.Commands = []SlashCommand{}
	}
	return out.Commands, nil
}

// Flatten lists every command and subcommand by its full name ("memory
// show"), parents before their subcommands.
func Flatten(cmds []SlashCommand) []SlashCommand {
	var out []SlashCommand
	var walk func(prefix string, cs []SlashCommand)
	walk = func(prefix string, cs []SlashCommand) {
		for _, c := range cs {
			name := c.Name
			if prefix != "" && !strings.HasPrefix(name, prefix+" ") {
				name = prefix + " " + name
			}
			flat := c
			flat.Name, flat.SubCommands = name, nil
			out = append(out, flat)
			walk(name, c.SubCommands)
		}
	}
	walk("", cmds)
	return out
}

// ExecuteCommand runs a slash command (POST /executeCommand) with its
// arguments. A command that streams (the server answers with events)
// reports the text of each event to onText as it comes and returns
// streamed; any other returns the command's data. The request carries the
// agent's headers.
func ExecuteCommand(ctx context.Context, ag *agent.Agent, command string, args []string, onText func(string)) (data any, streamed bool, err error) {
	if args == nil {
		args = []string{}
	}
	body, err := json.Marshal(map[string]any{"command": command, "args": args})
	if err != nil {
		return nil, false, fmt.Errorf("args: %w", err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, ag.URL+"/executeCommand", bytes.NewReader(body))
	if err != nil {
		return nil, false, err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := ag.Do(req)
	if err != nil {
		return nil, false, err
	}
	defer resp.Body.Close()
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		// 0.25.2 writes one "data:" line per event with no blank line
		// between them, so each line is an event.
		br := bufio.NewReaderSize(resp.Body, 64<<10)
		for {
			line, err := br.ReadBytes('\n')
			if data, ok := bytes.CutPrefix(bytes.TrimSpace(line), []byte("data:")); ok {
				var msg struct {
					Result json.RawMessage `json:"result"`
				}
				if json.Unmarshal(data, &msg) == nil {
					if ev, perr := a2a.UnmarshalEventJSON(msg.Result); perr == nil {
						u := agent.Parse(ev)
						if u.Text != "" && u.Tool == nil {
							onText(u.Text)
						}
					}
				}
			}
			if err != nil {
				return nil, true, nil
			}
		}
	}
	var out struct {
		Name  string `json:"name"`
		Data  any    `json:"data"`
		Error string `json:"error"`
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, 16<<20)).Decode(&out); err != nil {
		return nil, false, fmt.Errorf("HTTP %s: %w", resp.Status, err)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, false, fmt.Errorf("%s", strings.TrimSpace(out.Error+" (HTTP "+resp.Status+")"))
	}
	return out.Data, false, nil
}
