package mcptools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/gemini-ide-companion/gemini-ide-companion/a2a/agent"
	"github.com/gemini-ide-companion/gemini-ide-companion/a2a/supervisor"
)

// modelNote says plainly what the model argument does: Gemini CLI's A2A
// server (0.25) fixes the model per server (gemini-2.5-pro, or
// gemini-3-pro-preview with previewFeatures); no per-task choice exists.
func modelNote(model string) string {
	switch model {
	case "", "pro", "flash":
	default:
		return fmt.Sprintf("model %q is not one of flash, pro; ignored", model)
	}
	if model == "" {
		return ""
	}
	return "the A2A server fixes its model per server; the requested model " + model + " is not applied to this task"
}

func (b *Bridge) geminiAgent(ctx context.Context) (*agent.Agent, error) {
	if b.gemini == nil {
		return nil, errors.New("no Gemini agent: start the bridge with --agent URL, or without --no-start in a folder where Gemini CLI's A2A server can run")
	}
	ctx, cancel := context.WithTimeout(ctx, b.CallTimeout)
	defer cancel()
	return b.gemini(ctx)
}

func (b *Bridge) geminiSession(id string) (*supervisor.Session, error) {
	if strings.TrimSpace(id) == "" {
		return nil, errors.New("session_id is required")
	}
	return b.sup.Get(id)
}

// TaskStartIn are gemini_task_start's arguments.
type TaskStartIn struct {
	Task    string `json:"task" jsonschema:"what the Gemini agent should do"`
	Context string `json:"context,omitempty" jsonschema:"background the agent should know"`
	Model   string `json:"model,omitempty" jsonschema:"flash or pro (the server's model is fixed; see model_note)"`
	Async   *bool  `json:"async,omitempty" jsonschema:"default true; false waits until the turn ends or needs a decision"`
}

// StatusOut is what gemini_status (and a synchronous gemini_task_start) returns.
type StatusOut struct {
	supervisor.Snapshot
	ModelNote string `json:"model_note,omitempty"`
}

func prompt(task, context string) string {
	if strings.TrimSpace(context) == "" {
		return task
	}
	return task + "\n\nContext:\n" + context
}

func (b *Bridge) taskStart(ctx context.Context, req *mcp.CallToolRequest, in TaskStartIn) (*mcp.CallToolResult, StatusOut, error) {
	if strings.TrimSpace(in.Task) == "" {
		return nil, StatusOut{}, errors.New("task is required")
	}
	a, err := b.geminiAgent(ctx)
	if err != nil {
		return nil, StatusOut{}, err
	}
	ss := b.sup.Start(a, prompt(in.Task, in.Context))
	out := StatusOut{ModelNote: modelNote(in.Model)}
	if in.Async == nil || *in.Async {
		out.Snapshot = supervisor.Snapshot{SessionID: ss.ID(), Status: supervisor.Running, Progress: []supervisor.Progress{}}
		return nil, out, nil
	}
	wctx, cancel := context.WithTimeout(ctx, b.CallTimeout)
	defer cancel()
	out.Snapshot = b.waitSettled(wctx, req, ss, true)
	return nil, out, nil
}

// StatusIn are gemini_status's arguments.
type StatusIn struct {
	SessionID string  `json:"session_id"`
	WaitS     float64 `json:"wait_s,omitempty" jsonschema:"block up to this many seconds for a change"`
}

func (b *Bridge) status(ctx context.Context, req *mcp.CallToolRequest, in StatusIn) (*mcp.CallToolResult, StatusOut, error) {
	ss, err := b.geminiSession(in.SessionID)
	if err != nil {
		return nil, StatusOut{}, err
	}
	if in.WaitS < 0 || in.WaitS > 600 {
		return nil, StatusOut{}, errors.New("wait_s must be between 0 and 600")
	}
	wait := time.Duration(in.WaitS * float64(time.Second))
	if wait > b.CallTimeout {
		wait = b.CallTimeout
	}
	return nil, StatusOut{Snapshot: ss.Status(ctx, wait)}, nil
}

// RespondIn are gemini_respond's arguments.
type RespondIn struct {
	SessionID string `json:"session_id"`
	Decision  any    `json:"decision" jsonschema:"approved, denied, modify: …, only: [patterns], free text; or an object {answer} / {action, content}"`
}

// RespondOut is gemini_respond's result.
type RespondOut struct {
	Acknowledged bool              `json:"acknowledged"`
	Status       supervisor.Status `json:"status"`
	Note         string            `json:"note,omitempty"`
}

// answerText reads a decision given as a JSON string or an object.
func answerText(raw json.RawMessage) (string, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return "", errors.New("decision is required")
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s, nil
	}
	var o map[string]any
	if err := json.Unmarshal(raw, &o); err != nil {
		return "", fmt.Errorf("decision must be a string or an object: %w", err)
	}
	for _, k := range []string{"answer", "decision", "action", "type"} {
		if v, ok := o[k].(string); ok && v != "" {
			if c, ok := o["content"].(string); ok && c != "" {
				return v + ": " + c, nil
			}
			return v, nil
		}
	}
	return "", errors.New(`decision object needs "answer" (or "action" with "content")`)
}

func (b *Bridge) respond(_ context.Context, _ *mcp.CallToolRequest, in RespondIn) (*mcp.CallToolResult, RespondOut, error) {
	ss, err := b.geminiSession(in.SessionID)
	if err != nil {
		return nil, RespondOut{}, err
	}
	raw, err := json.Marshal(in.Decision)
	if err != nil {
		return nil, RespondOut{}, fmt.Errorf("decision: %w", err)
	}
	answer, err := answerText(raw)
	if err != nil {
		return nil, RespondOut{}, err
	}
	note, err := ss.Respond(answer)
	if err != nil {
		return nil, RespondOut{}, err
	}
	return nil, RespondOut{Acknowledged: true, Status: ss.Peek().Status, Note: note}, nil
}

// ConsultIn are gemini_consult's arguments.
type ConsultIn struct {
	Question string `json:"question"`
	Context  string `json:"context,omitempty"`
	Model    string `json:"model,omitempty" jsonschema:"flash or pro (default pro; the server's model is fixed)"`
}

// ConsultOut is gemini_consult's result.
type ConsultOut struct {
	Response  string   `json:"response"`
	Concerns  []string `json:"concerns,omitempty"`
	ModelNote string   `json:"model_note,omitempty"`
}

const consultPreamble = "Answer the question below from what you know and what the context gives. Do not run tools or change files.\n\n"

func (b *Bridge) consult(ctx context.Context, req *mcp.CallToolRequest, in ConsultIn) (*mcp.CallToolResult, ConsultOut, error) {
	if strings.TrimSpace(in.Question) == "" {
		return nil, ConsultOut{}, errors.New("question is required")
	}
	a, err := b.geminiAgent(ctx)
	if err != nil {
		return nil, ConsultOut{}, err
	}
	wctx, cancel := context.WithTimeout(ctx, b.CallTimeout)
	defer cancel()
	ss := b.sup.Start(a, consultPreamble+prompt(in.Question, in.Context))
	defer b.sup.Forget(ss.ID())
	out := ConsultOut{ModelNote: modelNote(in.Model)}
	for {
		snap := b.waitSettled(wctx, req, ss, true)
		switch snap.Status {
		case supervisor.Waiting:
			// A consultation runs no tools: deny and let the agent answer.
			out.Concerns = append(out.Concerns, "the agent tried to use a tool ("+snap.Decision.Description+"); denied")
			if _, err := ss.Respond("denied"); err != nil {
				return nil, out, err
			}
			continue
		case supervisor.Complete:
			out.Response = snap.Result
			return nil, out, nil
		case supervisor.Running:
			cctx, c2 := context.WithTimeout(context.Background(), 5*time.Second)
			_, _, _ = ss.Cancel(cctx)
			c2()
			return nil, out, fmt.Errorf("no answer within %s", b.CallTimeout)
		default:
			return nil, out, fmt.Errorf("consultation %s: %s", snap.Status, snap.Error)
		}
	}
}

// CancelIn are gemini_cancel's arguments.
type CancelIn struct {
	SessionID string `json:"session_id"`
}

// CancelOut is gemini_cancel's result.
type CancelOut struct {
	Status supervisor.Status `json:"status"`
	// Note says which running tools (shell commands) were stopped, and
	// which still run because the agent could no longer stop them.
	Note string `json:"note,omitempty"`
}

func (b *Bridge) cancel(ctx context.Context, _ *mcp.CallToolRequest, in CancelIn) (*mcp.CallToolResult, CancelOut, error) {
	ss, err := b.geminiSession(in.SessionID)
	if err != nil {
		return nil, CancelOut{}, err
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	st, note, err := ss.Cancel(ctx)
	if err != nil {
		return nil, CancelOut{Status: st, Note: note}, fmt.Errorf("cancel: %w", err)
	}
	return nil, CancelOut{Status: st, Note: note}, nil
}
