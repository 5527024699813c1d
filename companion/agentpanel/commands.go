package agentpanel

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/a2aproject/a2a-go/a2a"

	"github.com/gemini-ide-companion/gemini-ide-companion/a2a/agent"
)

// SlashCommand is the RFC's SlashCommand. Gemini CLI's A2A server 0.25.2
// serves it at GET /listCommands (not the RFC's commands/get method), with
// subcommands named by their full path ("memory show").
type SlashCommand struct {
	Name        string            `json:"name"`
	Description string            `json:"description"`
	Arguments   []CommandArgument `json:"arguments"`
	SubCommands []SlashCommand    `json:"subCommands"`
}

// CommandArgument is the RFC's SlashCommandArgument.
type CommandArgument struct {
	Name        string `json:"name"`
	Description string `json:"description"`
	IsRequired  bool   `json:"isRequired"`
}

const commandTimeout = 5 * time.Second

func (p *Panel) listCommands(ctx context.Context) (any, error) {
	ag, err := p.agentOrErr()
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, commandTimeout)
	defer cancel()
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
	return out, nil
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
	body, err := json.Marshal(map[string]any{"command": command, "args": strings.Fields(args)})
	if err != nil {
		return invalid("args: %v", err)
	}
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		ctx, cancel := context.WithTimeout(p.base, 5*time.Minute)
		defer cancel()
		if err := p.execute(ctx, ag, command, body); err != nil {
			p.emitError("/%s: %v", command, err)
		}
	}()
	return nil
}

func (p *Panel) execute(ctx context.Context, ag *agent.Agent, command string, body []byte) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, ag.URL+"/executeCommand", bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := ag.Do(req)
	if err != nil {
		return err
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
							p.emit(Event{Type: "command", Command: command, Data: u.Text})
						}
					}
				}
			}
			if err != nil {
				return nil
			}
		}
	}
	var out struct {
		Name  string `json:"name"`
		Data  any    `json:"data"`
		Error string `json:"error"`
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, 16<<20)).Decode(&out); err != nil {
		return fmt.Errorf("HTTP %s: %w", resp.Status, err)
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s", strings.TrimSpace(out.Error+" (HTTP "+resp.Status+")"))
	}
	p.emit(Event{Type: "command", Command: command, Data: out.Data})
	return nil
}
