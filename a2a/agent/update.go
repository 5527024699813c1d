package agent

import (
	"strings"

	"github.com/a2aproject/a2a-go/a2a"
)

// Kinds of event Gemini CLI's A2A server sends, from metadata.coderAgent.kind.
const (
	KindStateChange  = "state-change"
	KindThought      = "thought"
	KindText         = "text-content"
	KindToolUpdate   = "tool-call-update"
	KindConfirmation = "tool-call-confirmation"
)

// Update is one agent event, parsed.
type Update struct {
	TaskID    string
	ContextID string
	State     a2a.TaskState
	// Final is set on the event that ends the turn.
	Final bool
	// Kind is the server's own event kind (the Kind* constants), or "" for an
	// agent that sends none.
	Kind string
	// Text is the text of the event's text parts.
	Text string
	// Tool is the tool call the event is about, if any.
	Tool *ToolCall
}

// ToolCall is a tool call of the agent as an event reports it.
type ToolCall struct {
	CallID string
	Name   string
	Args   map[string]any
	// Status: validating, awaiting_approval, scheduled, executing, success,
	// error, cancelled.
	Status string
	// Confirmation is what the user is asked to approve, when awaiting_approval.
	Confirmation *Confirmation
	// Output is the tool's result text when it has one.
	Output string
	// Kind is the tool's kind as the server's tool registry gives it (read,
	// edit, delete, move, search, execute, think, fetch, other, ...), or ""
	// when the event does not say.
	Kind string
	// DisplayName is how the agent shows the tool ("WriteFile", "Shell").
	DisplayName string
	// ResultDiff is the file edit a finished edit tool reports (its
	// resultDisplay), when it reports one.
	ResultDiff *ResultDiff
}

// ResultDiff is the edit a file tool made, as its result reports it.
type ResultDiff struct {
	FileName string
	FilePath string
	FileDiff string
	// OriginalContent is nil for a new file.
	OriginalContent *string
	NewContent      string
}

// Confirmation is what a tool call needs approved: the server's
// confirmationDetails. Which fields are set depends on Type.
type Confirmation struct {
	// Type: edit, exec, mcp, info.
	Type  string
	Title string
	// FileName, FilePath, FileDiff and NewContent describe an edit;
	// NewContent is the file's content after it.
	FileName   string
	FilePath   string
	FileDiff   string
	NewContent string
	// OriginalContent is the file's content the server read for the edit,
	// when it sent it (nil for a new file, or when it did not).
	OriginalContent *string
	// Command is an exec's shell command.
	Command string
	// Prompt is what an info confirmation asks (a web fetch's prompt with
	// its URLs, a skill's description, ...).
	Prompt string
	// URLs are the addresses an info confirmation (a web fetch) would reach.
	URLs []string
	// ServerName is the MCP server (its name in the agent's settings) and
	// ToolName the tool's own name on that server, for an mcp confirmation.
	// The call's ToolCall.Name is the agent's name for the tool, which is
	// "server__tool" when two servers offer the same tool.
	ServerName string
	ToolName   string
	// ToolDisplayName is how the agent shows the tool, e.g.
	// "append_line (notes MCP Server)".
	ToolDisplayName string
}

// Parse reads an A2A event into an Update.
func Parse(ev a2a.Event) Update {
	var u Update
	var msg *a2a.Message
	switch e := ev.(type) {
	case *a2a.TaskStatusUpdateEvent:
		u.TaskID, u.ContextID, u.State, u.Final = string(e.TaskID), e.ContextID, e.Status.State, e.Final
		msg = e.Status.Message
		u.Kind = coderKind(e.Metadata)
	case *a2a.Task:
		u.TaskID, u.ContextID, u.State = string(e.ID), e.ContextID, e.Status.State
		msg = e.Status.Message
		u.Final = e.Status.State.Terminal()
	case *a2a.Message:
		u.TaskID, u.ContextID = string(e.TaskID), e.ContextID
		msg = e
		u.Final = true
	case *a2a.TaskArtifactUpdateEvent:
		u.TaskID, u.ContextID = string(e.TaskID), e.ContextID
		if e.Artifact != nil {
			u.Text = partsText(e.Artifact.Parts)
		}
		return u
	}
	if msg == nil {
		return u
	}
	u.Text = partsText(msg.Parts)
	if u.Kind == KindThought {
		u.Text = thoughtText(msg.Parts)
	}
	for _, p := range msg.Parts {
		if d, ok := asData(p); ok {
			if tc := toolCall(d); tc != nil {
				u.Tool = tc
			}
		}
	}
	return u
}

func coderKind(md map[string]any) string {
	ca, _ := md["coderAgent"].(map[string]any)
	k, _ := ca["kind"].(string)
	return k
}

func asData(p a2a.Part) (map[string]any, bool) {
	switch d := p.(type) {
	case a2a.DataPart:
		return d.Data, true
	case *a2a.DataPart:
		return d.Data, true
	}
	return nil, false
}

func partsText(parts a2a.ContentParts) string {
	var b strings.Builder
	for _, p := range parts {
		switch t := p.(type) {
		case a2a.TextPart:
			b.WriteString(t.Text)
		case *a2a.TextPart:
			b.WriteString(t.Text)
		}
	}
	return b.String()
}

func thoughtText(parts a2a.ContentParts) string {
	for _, p := range parts {
		if d, ok := asData(p); ok {
			s, _ := d["subject"].(string)
			desc, _ := d["description"].(string)
			return strings.TrimSpace(strings.TrimSpace(s) + ": " + desc)
		}
	}
	return partsText(parts)
}

func str(m map[string]any, k string) string { s, _ := m[k].(string); return s }

func toolCall(d map[string]any) *ToolCall {
	req, ok := d["request"].(map[string]any)
	if !ok {
		return nil
	}
	tc := &ToolCall{CallID: str(req, "callId"), Name: str(req, "name"), Status: str(d, "status")}
	tc.Args, _ = req["args"].(map[string]any)
	if cd, ok := d["confirmationDetails"].(map[string]any); ok {
		tc.Confirmation = &Confirmation{
			Type: str(cd, "type"), Title: str(cd, "title"),
			FileName: str(cd, "fileName"), FilePath: str(cd, "filePath"), FileDiff: str(cd, "fileDiff"),
			NewContent: str(cd, "newContent"), Command: str(cd, "command"), Prompt: str(cd, "prompt"),
			ServerName: str(cd, "serverName"), ToolName: str(cd, "toolName"), ToolDisplayName: str(cd, "toolDisplayName"),
		}
		if oc, ok := cd["originalContent"].(string); ok {
			tc.Confirmation.OriginalContent = &oc
		}
		if urls, ok := cd["urls"].([]any); ok {
			for _, u := range urls {
				if s, ok := u.(string); ok {
					tc.Confirmation.URLs = append(tc.Confirmation.URLs, s)
				}
			}
		}
	}
	if t, ok := d["tool"].(map[string]any); ok {
		tc.Kind, tc.DisplayName = str(t, "kind"), str(t, "displayName")
	}
	if r, ok := d["response"].(map[string]any); ok {
		tc.Output = str(r, "resultDisplay")
		if rd, ok := r["resultDisplay"].(map[string]any); ok {
			if _, isEdit := rd["fileDiff"]; isEdit {
				tc.ResultDiff = &ResultDiff{FileName: str(rd, "fileName"), FilePath: str(rd, "filePath"),
					FileDiff: str(rd, "fileDiff"), NewContent: str(rd, "newContent")}
				if oc, ok := rd["originalContent"].(string); ok {
					tc.ResultDiff.OriginalContent = &oc
				}
			}
		}
	}
	return tc
}
