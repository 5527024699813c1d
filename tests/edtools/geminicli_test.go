package edtools

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gemini-ide-companion/gemini-ide-companion/tests/fakegemini"
	"github.com/gemini-ide-companion/gemini-ide-companion/tests/testkit"
	"github.com/gemini-ide-companion/gemini-ide-companion/tests/tmuxdrive"
)

// binDir is a folder holding the sidecar under the name the README
// installs it as, gemini-ide-companion, for PATH.
func binDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.Symlink(testkit.Binary(t), filepath.Join(dir, "gemini-ide-companion")); err != nil {
		t.Fatal(err)
	}
	return dir
}

// The real Gemini CLI, run in the editor's terminal with the extension of
// this repository installed as the README says: the model calls
// getDiagnostics, then getDefinition, and its next requests carry the
// diagnostic's message and the definition's file and line, as the editor
// answered them.
func TestGeminiCLIExtensionCallsTheEditorTools(t *testing.T) {
	gemini := tmuxdrive.GeminiBin(t)
	sb := testkit.NewSandbox(t)
	file := sb.WriteFile(t, "main.go", mainGo)
	other := sb.WriteFile(t, "answer.go", "package main\n\nfunc answer() int { return 42 }\n")
	ed := testkit.StartEditor(t, sb, testkit.EditorOptions{})
	si := &standIn{release: make(chan struct{})}
	defer close(si.release)
	ed.SetHandler(func(method string, params json.RawMessage) (any, error) {
		if method == "editor/getDefinition" {
			si.handle(method, params) // recorded
			return map[string]any{"locations": []any{map[string]any{"path": other,
				"range": map[string]any{"start": map[string]int{"line": 3, "character": 6}, "end": map[string]int{"line": 3, "character": 12}}}}}, nil
		}
		return si.handle(method, params)
	})
	res := ed.Initialize(t, sb, map[string]any{"protocolVersion": 2, "ide": map[string]string{"name": "vim", "displayName": "Vim"},
		"capabilities": map[string]bool{"diagnostics": true, "definition": true}})

	api := fakegemini.Start(t)
	api.Reply(fakegemini.Call("mcp_editor_getDiagnostics", map[string]any{"path": file}))
	api.Reply(fakegemini.Call("mcp_editor_getDefinition", map[string]any{"path": file, "line": 3, "character": 20}))
	api.Reply(fakegemini.Text("answer is declared in answer.go."))

	// The editor's terminal: the sandbox, the CLI's settings and the
	// companion's variables, with gemini-ide-companion on PATH.
	env := tmuxdrive.EditorEnv(t, noCLIEnv(sb), sb.Home, sb.TmpDir, api.URL)
	for k, v := range res.Env {
		env = tmuxdrive.MergeEnv(env, k+"="+v)
	}
	path := ""
	for _, kv := range env {
		if p, ok := strings.CutPrefix(kv, "PATH="); ok {
			path = p
		}
	}
	env = tmuxdrive.MergeEnv(env, "PATH="+binDir(t)+string(os.PathListSeparator)+path)

	run := func(timeout time.Duration, args ...string) string {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), timeout)
		defer cancel()
		cmd := exec.CommandContext(ctx, gemini, args...)
		cmd.Dir = sb.Workspace
		cmd.Env = env
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("gemini %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	// The README's line, with the clone's path; --consent answers the
	// CLI's question about third-party extensions, which a user answers
	// at the prompt.
	line := readmeLine(t, "## Editor tools: what the editor knows, for the model", "gemini extensions install")
	args := strings.Fields(strings.Replace(line, "/path/to/gemini-ide-companion", testkit.ModuleRoot(t), 1))
	if len(args) != 4 || args[0] != "gemini" {
		t.Fatalf("README's install line %q is not `gemini extensions install PATH`", line)
	}
	out := run(2*time.Minute, append(args[1:], "--consent")...)
	if !strings.Contains(out, "editor-tools") {
		t.Fatalf("extensions install: %s", out)
	}
	out = run(3*time.Minute, "-p", "Why does main.go not build?", "--approval-mode", "yolo")

	reqs := api.WaitRequests(t, 3, time.Minute)
	if body := string(reqs[0].Body); !strings.Contains(body, `"mcp_editor_getDiagnostics"`) || !strings.Contains(body, `"mcp_editor_getDefinition"`) {
		t.Fatalf("the model was not offered the editor tools under the names scripted; its first request:\n%.4000s\ngemini said:\n%s", body, out)
	}
	if !strings.Contains(reqs[0].SystemInstruction()+reqs[0].Text(), "getDiagnostics`: the errors and warnings the editor shows") {
		t.Errorf("the extension's context file did not reach the model")
	}
	response := func(r fakegemini.Request, name string) string {
		t.Helper()
		for _, fr := range r.FunctionResponses() {
			if fr.Name == name {
				data, _ := json.Marshal(fr.Response)
				return string(data)
			}
		}
		t.Fatalf("no %s result in the model's request: %+v\ngemini said:\n%s", name, r.FunctionResponses(), out)
		return ""
	}
	if got := response(reqs[1], "mcp_editor_getDiagnostics"); !strings.Contains(got, "undefined: answer") || !strings.Contains(got, `\"line\":3`) {
		t.Errorf("getDiagnostics result: %s", got)
	}
	got := response(reqs[2], "mcp_editor_getDefinition")
	if !strings.Contains(got, strings.ReplaceAll(other, `\`, `\\`)) || !strings.Contains(got, `\"line\":3`) || !strings.Contains(got, "func answer() int { return 42 }") {
		t.Errorf("getDefinition result: %s", got)
	}
	// The position reached the editor as the model gave it.
	found := false
	for _, r := range si.requests() {
		if strings.HasPrefix(r, "editor/getDefinition ") && strings.Contains(r, `"line":3,"character":20`) {
			found = true
		}
	}
	if !found {
		t.Errorf("the editor was not asked for the definition at 3:20: %v", si.requests())
	}
}
