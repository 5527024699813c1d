// Package edtools tests the editor tools end to end with real processes:
// the sidecar (--stdio) linked to a stand-in editor plugin, and
// `gemini-ide-companion tools`, the stdio MCP server an agent starts,
// driven by an MCP client as Gemini CLI or Claude Code drive it.
package edtools

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/gemini-ide-companion/gemini-ide-companion/companion/link"
	"github.com/gemini-ide-companion/gemini-ide-companion/companion/protocol"
	"github.com/gemini-ide-companion/gemini-ide-companion/tests/testkit"
)

const wait = 20 * time.Second

// mainGo has a multi-byte character before the symbol on line 3.
const mainGo = "package main\n\nfunc main() { é := answer(); _ = é }\n"

// standIn answers the editor/* requests as a plugin would, from a table;
// getReferences blocks until release is closed (a plugin that never
// answers in time).
type standIn struct {
	release chan struct{}
	mu      sync.Mutex
	asked   []string
}

func (s *standIn) handle(method string, params json.RawMessage) (any, error) {
	s.mu.Lock()
	s.asked = append(s.asked, method+" "+string(params))
	s.mu.Unlock()
	var p struct {
		Path string `json:"path"`
	}
	_ = json.Unmarshal(params, &p)
	rng := func(l, c1, c2 int) protocol.Range {
		return protocol.Range{Start: protocol.Position{Line: l, Character: c1}, End: protocol.Position{Line: l, Character: c2}}
	}
	switch method {
	case protocol.MethodEditorGetDiagnostics:
		return protocol.DiagnosticsResult{Diagnostics: []protocol.Diagnostic{
			{Path: p.Path, Range: rng(3, 1, 5), Severity: "warning", Source: "vet", Message: "a warning"},
			{Path: p.Path, Range: rng(3, 18, 24), Severity: "error", Source: "compiler", Code: "UndeclaredName", Message: "undefined: answer"},
		}}, nil
	case protocol.MethodEditorGetDefinition:
		// No text: the sidecar reads the line from disk.
		return protocol.LocationsResult{Locations: []protocol.Location{{Path: p.Path, Range: rng(3, 6, 10)}}}, nil
	case protocol.MethodEditorGetReferences:
		<-s.release
		return protocol.LocationsResult{Locations: []protocol.Location{}}, nil
	case protocol.MethodEditorGetDocumentSymbols:
		return nil, link.Errorf(protocol.CodeNotAvailable, "Vim has no language server for main.go: install ALE")
	}
	return nil, link.Errorf(link.CodeMethodNotFound, "stand-in does not know %s", method)
}

func (s *standIn) requests() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.asked...)
}

// startTools starts `gemini-ide-companion tools` with env and connects an
// MCP client to it over its stdin and stdout, as an agent does.
func startTools(t *testing.T, sb *testkit.Sandbox, env []string) *mcp.ClientSession {
	t.Helper()
	cmd := exec.Command(testkit.Binary(t), "tools")
	cmd.Dir = sb.Workspace
	cmd.Env = env
	client := mcp.NewClient(&mcp.Implementation{Name: "agent", Version: "1"}, nil)
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatalf("connect to gemini-ide-companion tools: %v", err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	return cs
}

// call calls a tool and returns its text and whether it is an error.
func call(t *testing.T, cs *mcp.ClientSession, name string, args map[string]any) (string, bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	if len(res.Content) != 1 {
		t.Fatalf("%s: %d contents", name, len(res.Content))
	}
	return res.Content[0].(*mcp.TextContent).Text, res.IsError
}

// noCLIEnv is the sandbox's environment without the variables of an
// editor terminal the tests may run in.
func noCLIEnv(sb *testkit.Sandbox, set ...string) []string {
	return testkit.WithEnv(sb.Env(), append([]string{"GEMINI_CLI_IDE_SERVER_PORT=", "GEMINI_CLI_IDE_AUTH_TOKEN=",
		"GEMINI_CLI_IDE_WORKSPACE_PATH=", "GEMINI_CLI_IDE_PID="}, set...)...)
}

// An agent's calls reach the editor through `gemini-ide-companion tools`
// and the sidecar: answers sorted, filtered and completed; a feature the
// plugin has no source for, a feature it does not declare, a plugin that
// does not answer in time and bad arguments each give the model a clear
// error, and nothing hangs.
func TestEditorToolsThroughTheStdioServer(t *testing.T) {
	sb := testkit.NewSandbox(t)
	file := sb.WriteFile(t, "main.go", mainGo)
	ed := testkit.StartEditor(t, sb, testkit.EditorOptions{Args: []string{"--editor-timeout", "1s"}})
	si := &standIn{release: make(chan struct{})}
	defer close(si.release)
	ed.SetHandler(si.handle)
	res := ed.Initialize(t, sb, map[string]any{
		"protocolVersion": 2,
		"ide":             map[string]string{"name": "vim", "displayName": "Vim"},
		"capabilities": map[string]bool{"diagnostics": true, "definition": true, "references": true,
			"documentSymbols": true},
	})
	if res.Capabilities == nil || !res.Capabilities.EditorTools || res.Policy.Limits.EditorRequestTimeoutMs != 1000 ||
		res.Policy.Limits.MaxToolResults != protocol.MaxToolResults {
		t.Fatalf("initialize: capabilities %+v limits %+v: want editorTools and the 1 s deadline", res.Capabilities, res.Policy.Limits)
	}

	// The agent runs in the editor's terminal: it has the terminal's
	// variables, as Gemini CLI passes them on.
	env := noCLIEnv(sb)
	for k, v := range res.Env {
		env = testkit.WithEnv(env, k+"="+v)
	}
	cs := startTools(t, sb, env)

	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	list, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range list.Tools {
		names = append(names, tl.Name)
	}
	sort.Strings(names)
	if got := strings.Join(names, ","); got != "getDefinition,getDiagnostics,getDocumentSymbols,getHover,getOpenEditors,getReferences,openFile,searchWorkspaceSymbols" {
		t.Fatalf("tools %s", got)
	}

	// Diagnostics: errors first; the severity filter is the sidecar's too.
	text, isErr := call(t, cs, "getDiagnostics", map[string]any{"path": file})
	var diags protocol.DiagnosticsResult
	if isErr || json.Unmarshal([]byte(text), &diags) != nil || len(diags.Diagnostics) != 2 ||
		diags.Diagnostics[0].Message != "undefined: answer" || diags.Diagnostics[0].Range.Start.Character != 18 {
		t.Fatalf("getDiagnostics: %s (error %v)", text, isErr)
	}
	text, _ = call(t, cs, "getDiagnostics", map[string]any{"severity": "error"})
	if !strings.Contains(text, "undefined: answer") || strings.Contains(text, "a warning") {
		t.Fatalf("getDiagnostics severity error: %s", text)
	}

	// A definition without text gets its line from the file.
	text, isErr = call(t, cs, "getDefinition", map[string]any{"path": file, "line": 3, "character": 18})
	var locs protocol.LocationsResult
	if isErr || json.Unmarshal([]byte(text), &locs) != nil || len(locs.Locations) != 1 || locs.Locations[0].Text != "func main() { é := answer(); _ = é }" {
		t.Fatalf("getDefinition: %s (error %v)", text, isErr)
	}

	for _, c := range []struct {
		tool string
		args map[string]any
		want string
	}{
		{"getDocumentSymbols", map[string]any{"path": file}, "Vim has no language server for main.go: install ALE"},
		{"getHover", map[string]any{"path": file, "line": 3, "character": 18}, "Vim does not answer getHover: its plugin does not offer it (capability hover)"},
		{"getDefinition", map[string]any{"path": "main.go", "line": 3, "character": 18}, "path must be absolute: main.go (the workspace is " + sb.Workspace + ")"},
		{"getDefinition", map[string]any{"path": file, "line": 0, "character": 1}, "line must be 1 or more"},
		{"getDefinition", map[string]any{"path": file, "line": 9, "character": 1}, "line 9 is past the end of main.go (3 lines)"},
		{"getDefinition", map[string]any{"path": file, "line": "three", "character": 1}, "line must be a whole number"},
		{"getDefinition", map[string]any{"path": file}, "line, character are required"},
		{"getDefinition", map[string]any{"path": filepath.Join(sb.Home, "secret.go"), "line": 1, "character": 1}, "is outside the workspace folders (" + sb.Workspace + ") and not open in Vim"},
		{"searchWorkspaceSymbols", map[string]any{"query": strings.Repeat("x", 100000)}, "query is 100000 characters long; the most is 256"},
		{"getReferences", map[string]any{"path": file, "line": 3, "character": 18}, "Vim did not answer getReferences within 1s"},
	} {
		text, isErr := call(t, cs, c.tool, c.args)
		if !isErr || !strings.Contains(text, c.want) {
			t.Errorf("%s %v: %q (error %v), want an error saying %q", c.tool, c.args, text, isErr, c.want)
		}
	}

	// The late answer is ignored, and the link still serves.
	si.release <- struct{}{}
	text, isErr = call(t, cs, "getDiagnostics", map[string]any{"path": file, "severity": "warning"})
	if isErr || !strings.Contains(text, "undefined: answer") {
		t.Fatalf("getDiagnostics after a late answer: %s (error %v)", text, isErr)
	}
	// getOpenEditors: this plugin does not answer it, so the companion
	// answers from the context the plugin reported, the cursor converted
	// from UTF-16 units to characters ("// 😀 x": x is UTF-16 column 7,
	// character 6).
	emoji := sb.WriteFile(t, "emoji.go", "// 😀 x\n")
	ed.Notify(t, "context/fileFocused", map[string]any{"path": emoji, "cursor": map[string]int{"line": 1, "character": 7}})
	var eds protocol.OpenEditorsResult
	ok := testkit.Poll(wait, func() bool {
		text, isErr := call(t, cs, "getOpenEditors", nil)
		eds = protocol.OpenEditorsResult{}
		return !isErr && json.Unmarshal([]byte(text), &eds) == nil && len(eds.Editors) == 1
	})
	if !ok || eds.Editors[0].Path != emoji || !eds.Editors[0].Active || eds.Editors[0].Cursor == nil || *eds.Editors[0].Cursor != (protocol.Position{Line: 1, Character: 6}) {
		t.Errorf("getOpenEditors: %+v", eds)
	}
	// Bad arguments never reached the editor.
	for _, r := range si.requests() {
		if strings.Contains(r, `"line":0`) || strings.Contains(r, "secret.go") || strings.Contains(r, `"path":"main.go"`) {
			t.Errorf("the editor was asked %s", r)
		}
	}
}

// Without a running companion, the tools server still starts and lists
// the tools, and each call says what to start.
func TestToolsServerWithoutACompanion(t *testing.T) {
	sb := testkit.NewSandbox(t)
	cs := startTools(t, sb, noCLIEnv(sb))
	text, isErr := call(t, cs, "getDiagnostics", nil)
	if !isErr || !strings.Contains(text, "no editor companion is running for "+sb.Workspace) || !strings.Contains(text, "gemini-ide-companion plugin") {
		t.Fatalf("getDiagnostics without a companion: %q (error %v)", text, isErr)
	}
}

// The tools server finds the companion by the discovery file for its
// folder when the agent was not started from the editor's terminal, and
// the companion's /tools endpoint refuses a wrong token.
func TestToolsServerFindsTheCompanionByItsDiscoveryFile(t *testing.T) {
	sb := testkit.NewSandbox(t)
	file := sb.WriteFile(t, "main.go", mainGo)
	ed := testkit.StartEditor(t, sb, testkit.EditorOptions{})
	si := &standIn{release: make(chan struct{})}
	defer close(si.release)
	ed.SetHandler(si.handle)
	res := ed.Initialize(t, sb, map[string]any{"protocolVersion": 2, "capabilities": map[string]bool{"diagnostics": true}})
	if res.DiscoveryFile == "" {
		t.Fatal("no discovery file")
	}
	cs := startTools(t, sb, noCLIEnv(sb))
	text, isErr := call(t, cs, "getDiagnostics", map[string]any{"path": file})
	if isErr || !strings.Contains(text, "undefined: answer") {
		t.Fatalf("getDiagnostics through the discovery file: %q (error %v)", text, isErr)
	}

	wrong := startTools(t, sb, noCLIEnv(sb, "GEMINI_CLI_IDE_SERVER_PORT="+strconv.Itoa(res.Port), "GEMINI_CLI_IDE_AUTH_TOKEN=wrong"))
	// The wrong token is refused; the server then looks for the companion
	// by its folder, as after a restart, and gets through with the right
	// one from the discovery file.
	text, isErr = call(t, wrong, "getDiagnostics", map[string]any{"path": file})
	if isErr || !strings.Contains(text, "undefined: answer") {
		t.Fatalf("getDiagnostics with a stale token: %q (error %v)", text, isErr)
	}
}

// The companion's /tools endpoint is behind the same guard as /mcp: a
// wrong or missing token, a web page's Origin, a rebound Host, another
// method, another content type and an oversized body are refused before
// any tool runs; with the token a call is answered.
func TestToolsEndpointIsGuarded(t *testing.T) {
	sb := testkit.NewSandbox(t)
	file := sb.WriteFile(t, "main.go", mainGo)
	ed := testkit.StartEditor(t, sb, testkit.EditorOptions{})
	si := &standIn{release: make(chan struct{})}
	defer close(si.release)
	ed.SetHandler(si.handle)
	res := ed.Initialize(t, sb, map[string]any{"protocolVersion": 2, "capabilities": map[string]bool{"diagnostics": true}})
	body, _ := json.Marshal(map[string]any{"name": "getDiagnostics", "arguments": map[string]any{"path": file}})
	good := map[string]string{"Authorization": "Bearer " + res.AuthToken, "Content-Type": "application/json"}
	with := func(k, v string) map[string]string {
		h := map[string]string{}
		for a, b := range good {
			h[a] = b
		}
		if v == "" {
			delete(h, k)
		} else {
			h[k] = v
		}
		return h
	}
	host := "127.0.0.1:" + strconv.Itoa(res.Port)
	post := func(method, host string, h map[string]string, body string) (int, string) {
		t.Helper()
		req, err := http.NewRequest(method, "http://127.0.0.1:"+strconv.Itoa(res.Port)+"/tools", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Host = host
		for k, v := range h {
			req.Header.Set(k, v)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		data, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(data)
	}
	for _, c := range []struct {
		name   string
		method string
		host   string
		h      map[string]string
		body   string
		want   int
	}{
		{"no token", "POST", host, with("Authorization", ""), string(body), 401},
		{"wrong token", "POST", host, with("Authorization", "Bearer "+strings.Repeat("0", len(res.AuthToken))), string(body), 401},
		{"a web page", "POST", host, with("Origin", "https://evil.example"), string(body), 403},
		{"a rebound Host", "POST", "evil.example:" + strconv.Itoa(res.Port), good, string(body), 403},
		{"GET", "GET", host, good, "", 405},
		{"not JSON", "POST", host, with("Content-Type", "text/plain"), string(body), 415},
		{"over 1 MiB", "POST", host, good, `{"name":"getDiagnostics","arguments":{"path":"` + strings.Repeat("x", 2<<20) + `"}}`, 413},
		{"not an object", "POST", host, good, `[1,2]`, 400},
	} {
		if got, text := post(c.method, c.host, c.h, c.body); got != c.want {
			t.Errorf("%s: %d %s, want %d", c.name, got, text, c.want)
		}
	}
	for _, r := range si.requests() {
		t.Errorf("a refused request reached the editor: %s", r)
	}
	if got, text := post("POST", host, good, string(body)); got != 200 || !strings.Contains(text, "undefined: answer") {
		t.Fatalf("with the token: %d %s", got, text)
	}
}
