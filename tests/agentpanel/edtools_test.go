package agentpanel

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/gemini-ide-companion/gemini-ide-companion/companion/link"
	"github.com/gemini-ide-companion/gemini-ide-companion/companion/protocol"
	"github.com/gemini-ide-companion/gemini-ide-companion/tests/fakegemini"
	"github.com/gemini-ide-companion/gemini-ide-companion/tests/testkit"
)

// TestLinkAgentCallsTheEditorTools: the A2A server the panel starts has
// the editor tools among its MCP servers; its model calls getDiagnostics,
// the user allows it in the panel, and the model's next request carries
// the editor's diagnostic.
func TestLinkAgentCallsTheEditorTools(t *testing.T) {
	w := newWorld(t)
	file := w.write(t, "main.go", "package main\n\nfunc main() { é := answer(); _ = é }\n")
	ed := testkit.StartEditor(t, w.sb, testkit.EditorOptions{Env: w.env()})
	ed.SetHandler(func(method string, params json.RawMessage) (any, error) {
		if method != protocol.MethodEditorGetDiagnostics {
			return nil, link.Errorf(link.CodeMethodNotFound, "stand-in does not know %s", method)
		}
		return protocol.DiagnosticsResult{Diagnostics: []protocol.Diagnostic{{Path: file, Severity: "error", Source: "compiler",
			Range:   protocol.Range{Start: protocol.Position{Line: 3, Character: 20}, End: protocol.Position{Line: 3, Character: 26}},
			Message: "undefined: answer"}}}, nil
	})
	ed.Initialize(t, w.sb, map[string]any{"protocolVersion": 2, "capabilities": map[string]bool{"diagnostics": true, "agent": true}})
	lp := &linkPanel{w: w, ed: ed}
	var res map[string]any
	if err := ed.Call(10*time.Second, "agent/start", map[string]any{}, &res); err != nil {
		t.Fatalf("agent/start: %v", err)
	}
	lp.wait(t, 0, "ready", nil)

	w.fake.Reply(fakegemini.Call("getDiagnostics", map[string]any{"path": file}))
	w.fake.Reply(fakegemini.Text("main.go calls answer, which is not declared."))
	from := lp.ed.Len()
	if err := lp.call(t, "agent/prompt", map[string]any{"text": "why does main.go not build?"}); err != nil {
		t.Fatal(err)
	}
	c := lp.waitConfirmation(t, from)
	if md := c.Request.McpDetails; md == nil || md.ServerName != "editor" || md.ToolName != "getDiagnostics" {
		t.Fatalf("confirmation = %+v; want the editor server's getDiagnostics", c.Request)
	}
	lp.wait(t, from, "state", stateIs("waiting"))
	if err := lp.call(t, "agent/confirm", map[string]any{"callId": c.ToolCallID, "outcome": "proceed_once"}); err != nil {
		t.Fatal(err)
	}
	_, after := lp.wait(t, from, "text", func(e event) bool { return strings.Contains(e.Text, "not declared") })
	lp.wait(t, after, "state", stateIs("idle"))

	reqs := w.fake.Requests()
	if len(reqs) < 2 {
		t.Fatalf("%d model requests", len(reqs))
	}
	var got []string
	for _, fr := range reqs[len(reqs)-1].FunctionResponses() {
		data, _ := json.Marshal(fr.Response)
		got = append(got, fr.Name+" "+string(data))
	}
	if all := strings.Join(got, "\n"); !strings.Contains(all, "getDiagnostics") || !strings.Contains(all, "undefined: answer") {
		t.Fatalf("the model's request after the call carries %s; want getDiagnostics' answer with the editor's diagnostic", all)
	}
}
