package nvim

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/gemini-ide-companion/gemini-ide-companion/tests/fakegemini"
	"github.com/gemini-ide-companion/gemini-ide-companion/tests/testkit"
	"github.com/gemini-ide-companion/gemini-ide-companion/tests/tmuxdrive"
)

// readmeInstallLine is the README's line that installs the Gemini CLI
// extension, with this clone's path in it, as fields.
func readmeInstallLine(t testing.TB) []string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(testkit.ModuleRoot(t), "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	text := string(data)
	const heading = "\n## Editor tools: what the editor knows, for the model\n"
	i := strings.Index(text, heading)
	if i < 0 {
		t.Fatalf("README.md has no section %q", strings.TrimSpace(heading))
	}
	text = text[i+len(heading):]
	if j := strings.Index(text, "\n## "); j >= 0 {
		text = text[:j]
	}
	for _, m := range regexp.MustCompile("(?s)```sh\n(.*?)```").FindAllStringSubmatch(text, -1) {
		for _, line := range strings.Split(m[1], "\n") {
			if strings.HasPrefix(line, "gemini extensions install ") {
				args := strings.Fields(strings.Replace(line, "/path/to/gemini-ide-companion", testkit.ModuleRoot(t), 1))
				if len(args) != 4 {
					t.Fatalf("README's install line %q is not `gemini extensions install PATH`", line)
				}
				return args
			}
		}
	}
	t.Fatal("README.md's editor tools section has no `gemini extensions install` line")
	return nil
}

// The real Gemini CLI, with the repository's extension installed as the
// README says, in Neovim's terminal opened with :GeminiCli, on a Go
// workspace that gopls checks through Neovim's built-in LSP client. The
// model calls getDiagnostics, then getDefinition; the user allows each
// call at the CLI's question; the model's next requests carry gopls' type
// error and the file and line where Add is declared, as Neovim knows them.
func TestGeminiCLIInNeovimCallsTheEditorTools(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the real Gemini CLI; skipped with -short")
	}
	requireNvim(t)
	tmuxdrive.Require(t)
	gemini := tmuxdrive.GeminiBin(t)
	sb := testkit.NewSandbox(t)
	ws := testkit.WriteGoWorkspace(t, sb.Workspace)
	gopls, _ := json.Marshal(testkit.GoplsCommand(t, sb.TmpDir))
	api := fakegemini.Start(t)

	// gemini-ide-companion on PATH, as the README installs it, for the
	// extension's stdio server.
	bin := t.TempDir()
	if err := os.Symlink(testkit.Binary(t), filepath.Join(bin, "gemini-ide-companion")); err != nil {
		t.Fatal(err)
	}
	env := tmuxdrive.EditorEnv(t, sb.Env(), sb.Home, sb.TmpDir, api.URL)
	for _, kv := range env {
		if p, ok := strings.CutPrefix(kv, "PATH="); ok {
			env = tmuxdrive.MergeEnv(env, "PATH="+bin+string(os.PathListSeparator)+p)
		}
	}
	env = tmuxdrive.MergeEnv(env, "NVIM_LOG_FILE="+filepath.Join(sb.TmpDir, "nvim.log"),
		"GOTOOLCHAIN=local", "GOFLAGS=-mod=mod")

	// The README's install line; --consent answers the CLI's question about
	// third-party extensions, which a user answers at the prompt.
	args := readmeInstallLine(t)
	ctx, cancel := context.WithTimeout(context.Background(), cliTimeout)
	defer cancel()
	install := exec.CommandContext(ctx, gemini, append(args[1:], "--consent")...)
	install.Dir, install.Env = sb.Workspace, env
	if out, err := install.CombinedOutput(); err != nil || !strings.Contains(string(out), "editor-tools") {
		t.Fatalf("%s: %v\n%s", strings.Join(args, " "), err, out)
	}

	// The plugin with default settings (the harness only points it at the
	// test's sidecar and log); the terminal runs `gemini` from PATH.
	nv := startNvim(t, sb, Options{
		UI:      true,
		Env:     env,
		Args:    []string{"main.go"},
		InitLua: fmt.Sprintf(goplsInit, gopls),
	})
	t.Cleanup(func() { // before the sandbox goes: gopls writes its cache there
		nv.Quit(t)
		testkit.AwaitGoplsExit(t, sb.TmpDir)
	})
	nv.WaitRunning(t)
	nv.WaitLua(t, "gopls' diagnostics for main.go", `
for _, d in ipairs(vim.diagnostic.get(0)) do
  if d.message:find("cannot use", 1, true) then return true end
end
return false`, cliTimeout)

	api.Reply(fakegemini.Call("mcp_editor_getDiagnostics", map[string]any{"path": ws.Main}))
	api.Reply(fakegemini.Call("mcp_editor_getDefinition", map[string]any{"path": ws.Main, "line": ws.UseLine, "character": ws.UseColumn}))
	api.Reply(fakegemini.Text("Add is declared in helper.go."))

	nv.Cmd(t, "GeminiCli")
	s := &cliSession{nv: nv}
	s.waitTerm(t, "Type your message")
	s.prompt(t, "Why does main.go not build?")

	// The CLI asks before each call of a tool of the extension's server;
	// the user allows it once (the highlighted choice).
	allow := func(tool string) {
		t.Helper()
		waitScreen(t, nv, tool, func(screen string) bool {
			return strings.Contains(screen, tool) && strings.Contains(screen, "Allow once")
		})
		nv.pane.Keys(t, "Enter")
	}
	allow("getDiagnostics")
	api.WaitRequests(t, 2, cliTimeout)
	allow("getDefinition")
	reqs := api.WaitRequests(t, 3, cliTimeout)
	s.waitTerm(t, "Add is declared in helper.go.")

	// What the model got back: the text the tools server answered.
	response := func(r fakegemini.Request, name string) string {
		t.Helper()
		for _, fr := range r.FunctionResponses() {
			if fr.Name == name {
				// The CLI hands the model an MCP tool's text inside
				// <untrusted_context>…</untrusted_context>.
				out, _ := fr.Response["output"].(string)
				out = strings.TrimSpace(out)
				out = strings.TrimPrefix(out, "<untrusted_context>")
				out = strings.TrimSuffix(out, "</untrusted_context>")
				return out
			}
		}
		t.Fatalf("no %s result in the model's request: %+v\nthe terminal shows:\n%s", name, r.FunctionResponses(), termText(t, nv))
		return ""
	}
	type location struct {
		Path  string `json:"path"`
		Text  string `json:"text"`
		Range struct {
			Start struct {
				Line int `json:"line"`
			} `json:"start"`
		} `json:"range"`
	}
	diags := response(reqs[1], "mcp_editor_getDiagnostics")
	var gotDiags struct {
		Diagnostics []struct {
			location
			Message string `json:"message"`
		} `json:"diagnostics"`
	}
	if err := json.Unmarshal([]byte(diags), &gotDiags); err != nil {
		t.Fatalf("getDiagnostics answered %q: %v", diags, err)
	}
	found := false
	for _, d := range gotDiags.Diagnostics {
		if d.Path == ws.Main && d.Range.Start.Line == ws.ErrLine && strings.Contains(d.Message, ws.ErrMessage) {
			found = true
		}
	}
	if !found {
		t.Errorf("the model did not get gopls' error %q at main.go:%d; getDiagnostics answered:\n%s", ws.ErrMessage, ws.ErrLine, diags)
	}
	def := response(reqs[2], "mcp_editor_getDefinition")
	var gotDef struct {
		Locations []location `json:"locations"`
	}
	if err := json.Unmarshal([]byte(def), &gotDef); err != nil {
		t.Fatalf("getDefinition answered %q: %v", def, err)
	}
	if len(gotDef.Locations) != 1 || gotDef.Locations[0].Path != ws.Helper || gotDef.Locations[0].Range.Start.Line != ws.DefLine ||
		!strings.Contains(gotDef.Locations[0].Text, "func Add(a, b int) int") {
		t.Errorf("the model did not get Add's declaration at helper.go:%d; getDefinition answered:\n%s", ws.DefLine, def)
	}
}

// waitScreen waits until Neovim's screen (the tmux pane, as the user sees
// it) satisfies ok.
func waitScreen(t testing.TB, nv *Nvim, what string, ok func(string) bool) {
	t.Helper()
	nv.pane.WaitUntil(t, what, cliTimeout, ok)
}
