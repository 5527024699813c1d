package nvim

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/gemini-ide-companion/gemini-ide-companion/link/protocol"
	"github.com/gemini-ide-companion/gemini-ide-companion/tests/testkit"
)

// The editor tools (docs/editor-tools.md) answered by Neovim from its own
// tooling: vim.diagnostic and the built-in LSP client with gopls, on a Go
// workspace whose line 6 has "日本語😀" before the symbol asked about, so a
// column counted in bytes or UTF-16 units lands elsewhere.

// goplsInit is how a Neovim 0.7.2 user without plugins starts gopls: one
// client for the folder, attached to every Go buffer.
const goplsInit = `
vim.api.nvim_create_autocmd("FileType", { pattern = "go", callback = function(args)
  _G.gopls_id = _G.gopls_id or vim.lsp.start_client({ name = "gopls", cmd = vim.json.decode(%q), root_dir = vim.fn.getcwd() })
  vim.lsp.buf_attach_client(args.buf, _G.gopls_id)
end })
`

// toolError is an editor/* request's error, as the plugin answers it.
type toolError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

// editorCall sends the plugin one editor/* request as the sidecar does and
// returns its answer: the result decoded into result, or the error.
func (n *Nvim) editorCall(t testing.TB, method string, params, result any) *toolError {
	t.Helper()
	raw, err := json.Marshal(params)
	if err != nil {
		t.Fatal(err)
	}
	var answer struct {
		Err    *toolError      `json:"err"`
		Result json.RawMessage `json:"result"`
	}
	n.LuaJSON(t, &answer, `
local err, result = require("gemini_companion.tools").handle(..., vim.json.decode(select(2, ...)))
return { err = err, result = result }`, method, string(raw))
	if answer.Err != nil {
		return answer.Err
	}
	if result != nil {
		if err := json.Unmarshal(answer.Result, result); err != nil {
			t.Fatalf("%s: result %s: %v", method, answer.Result, err)
		}
	}
	return nil
}

func (n *Nvim) mustCall(t testing.TB, method string, params, result any) {
	t.Helper()
	if e := n.editorCall(t, method, params, result); e != nil {
		t.Fatalf("%s %v: error %d %s\n%s", method, params, e.Code, e.Message, n.diagnostics())
	}
}

func TestToolsAnswerFromVimLspAndVimDiagnostic(t *testing.T) {
	sb := testkit.NewSandbox(t)
	gopls, _ := json.Marshal(testkit.GoplsCommand(t, sb.TmpDir))
	ws := testkit.WriteGoWorkspace(t, sb.Workspace)
	notes := sb.WriteFile(t, "notes.txt", "no language server here\n")
	nv := startNvim(t, sb, Options{
		InitLua: fmt.Sprintf(goplsInit, gopls),
		Env:     testkit.GoplsEnv(sb, "NVIM_LOG_FILE="+filepath.Join(sb.TmpDir, "nvim.log")),
	})
	t.Cleanup(func() { // before the sandbox goes: gopls writes its cache there
		nv.Quit(t)
		testkit.AwaitGoplsExit(t, sb.TmpDir)
	})
	nv.WaitRunning(t)
	nv.Cmd(t, "edit main.go")
	// The agent runs in a terminal with terminal_env()'s variables, as
	// Gemini CLI started there passes them to the tools server.
	var vars map[string]string
	nv.LuaJSON(t, &vars, `return require("gemini_companion").terminal_env()`)
	tc := testkit.StartTools(t, sb.Workspace, testkit.EditorEnv(sb.Env(), vars))
	call := func(t *testing.T, tool string, args map[string]any, result any) {
		t.Helper()
		tc.MustCall(t, tool, args, result, nv.diagnostics)
	}

	// gopls reports the type error once it has loaded the workspace.
	nv.WaitLua(t, "gopls' diagnostics for main.go", `
for _, d in ipairs(vim.diagnostic.get(0)) do
  if d.message:find("cannot use", 1, true) then return true end
end
return false`, 2*waitTimeout)

	testkit.CheckGoTools(t, tc, ws, "Neovim", notes, false, nv.diagnostics)

	t.Run("caps", func(t *testing.T) {
		// The plugin stops at maxResults itself, children included.
		var diags protocol.DiagnosticsResult
		nv.mustCall(t, "editor/getDiagnostics", map[string]any{"maxResults": 1}, &diags)
		if len(diags.Diagnostics) != 1 {
			t.Errorf("maxResults 1 gave %d diagnostics", len(diags.Diagnostics))
		}
		var syms protocol.DocumentSymbolsResult
		nv.mustCall(t, "editor/getDocumentSymbols", map[string]any{"path": ws.Helper, "maxResults": 1}, &syms)
		if len(syms.Symbols) != 1 || !syms.Truncated {
			t.Errorf("maxResults 1 gave %+v", syms)
		}
	})

	t.Run("getOpenEditors", func(t *testing.T) {
		nv.Cmd(t, "edit helper.go")
		nv.Lua(t, `vim.api.nvim_buf_set_lines(0, 0, 0, false, {"// unsaved"})`)
		nv.Cmd(t, "hide edit main.go")
		// The cursor on Add, in bytes as Neovim counts: after the tab and
		// the multi-byte string.
		nv.Lua(t, `local row = ...
local line = vim.api.nvim_buf_get_lines(0, row - 1, row, false)[1]
vim.api.nvim_win_set_cursor(0, { row, (line:find("Add(", 1, true)) - 1 })`, ws.UseLine)
		testkit.CheckOpenEditors(t, tc, ws, nv.diagnostics)
		nv.Cmd(t, "buffer helper.go | undo | write | buffer main.go")
	})

	t.Run("openFile", func(t *testing.T) {
		call(t, "openFile", map[string]any{"path": ws.Helper, "line": 9, "endLine": 11}, nil)
		var shown struct {
			Name  string `json:"name"`
			Line  int    `json:"line"`
			Marks [][]any
		}
		nv.LuaJSON(t, &shown, `
local ns = vim.api.nvim_create_namespace("gemini_companion_open")
return { name = vim.api.nvim_buf_get_name(0), line = vim.api.nvim_win_get_cursor(0)[1],
  marks = vim.api.nvim_buf_get_extmarks(0, ns, 0, -1, {}) }`)
		if shown.Name != ws.Helper || shown.Line != 9 {
			t.Errorf("after openFile the window shows %s at line %d, want helper.go at 9", shown.Name, shown.Line)
		}
		if len(shown.Marks) != 3 {
			t.Errorf("openFile highlighted %d lines, want 3 (9..11)", len(shown.Marks))
		}
	})

	t.Run("line past the end of the buffer", func(t *testing.T) {
		// The plugin's own check, against the buffer (the sidecar checks
		// the file on disk first).
		e := nv.editorCall(t, "editor/getDefinition", map[string]any{"path": ws.Main, "line": 900, "character": 1}, nil)
		if e == nil || e.Code != -32602 || e.Message != "line 900 is past the end of main.go (9 lines)" {
			t.Errorf("line 900 answered %+v", e)
		}
	})
}
