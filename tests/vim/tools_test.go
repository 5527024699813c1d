package vim

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gemini-ide-companion/gemini-ide-companion/link/protocol"
	"github.com/gemini-ide-companion/gemini-ide-companion/tests/testkit"
	"github.com/gemini-ide-companion/gemini-ide-companion/tests/tmuxdrive"
)

// The editor tools (docs/editor-tools.md) answered by Vim 9 from ALE
// (Debian's vim-ale, as a user enables it) with gopls as its language
// server, on the Go workspace with multi-byte characters before the
// symbol; asked by an agent through `gemini-ide-companion tools`.

// aleVimrc is how a user of Debian's vim-ale sets it up for Go with gopls.
const aleVimrc = `let g:ale_linters = {'go': ['gopls']}
let g:ale_linters_explicit = 1
let g:ale_go_gopls_executable = %s
let g:ale_go_gopls_options = %s
packadd! ale
`

func startVimWithALE(t *testing.T, sb *testkit.Sandbox) *Vim {
	t.Helper()
	cmd := testkit.GoplsCommand(t, sb.TmpDir)
	v := startVim(t, sb, Options{
		Config: map[string]any{"auto_start": true},
		Vimrc:  fmt.Sprintf(aleVimrc, vimString(cmd[0]), vimString(strings.Join(cmd[1:], " "))),
		Env:    testkit.GoplsEnv(sb),
	})
	t.Cleanup(func() { // before the sandbox goes: gopls writes its cache there
		v.Quit(t)
		testkit.AwaitGoplsExit(t, sb.TmpDir)
	})
	v.WaitRunning(t)
	if !v.Bool(t, "exists('g:loaded_ale')") {
		tmuxdrive.Missing(t, "ALE is not installed (apt-get install vim-ale)")
	}
	return v
}

// terminalEnv is what gemini_companion#TerminalEnv() gives, called as a
// user's mapping calls it (from the main loop, not from a callback). It
// waits for the sidecar's answer, so the test reads it from a file.
func (v *Vim) terminalEnv(t *testing.T) map[string]string {
	t.Helper()
	out := filepath.Join(v.sb.TmpDir, "terminal-env.json")
	v.Ex(t, fmt.Sprintf("call timer_start(0, {-> writefile([json_encode(gemini_companion#TerminalEnv())], %s)})", vimString(out)))
	var env map[string]string
	if !testkit.Poll(waitTimeout, func() bool {
		raw, err := os.ReadFile(out)
		return err == nil && json.Unmarshal(raw, &env) == nil
	}) {
		t.Fatalf("TerminalEnv() wrote nothing to %s\n%s", out, v.diagnostics())
	}
	return env
}

func TestToolsAnswerFromALE(t *testing.T) {
	sb := testkit.NewSandbox(t)
	ws := testkit.WriteGoWorkspace(t, sb.Workspace)
	notes := sb.WriteFile(t, "notes.txt", "no language server here\n")
	v := startVimWithALE(t, sb)
	v.Ex(t, "edit main.go")
	v.WaitFor(t, "ALE's diagnostics from gopls for main.go",
		`len(filter(copy(ale#engine#GetLoclist(bufnr('main.go'))), {_, i -> i.text =~# 'cannot use'})) > 0`, 3*waitTimeout)

	env := v.terminalEnv(t)
	if env["GEMINI_CLI_IDE_SERVER_PORT"] == "" {
		t.Fatalf("TerminalEnv() = %v", env)
	}
	tc := testkit.StartTools(t, sb.Workspace, testkit.EditorEnv(sb.Env(), env))
	testkit.CheckGoTools(t, tc, ws, "Vim", notes, true, v.diagnostics)

	t.Run("getOpenEditors", func(t *testing.T) {
		v.Ex(t, "edit helper.go | call append(0, '// unsaved') | hide edit main.go")
		v.Ex(t, fmt.Sprintf("call cursor(%d, stridx(getline(%d), 'Add(') + 1)", ws.UseLine, ws.UseLine))
		testkit.CheckOpenEditors(t, tc, ws, v.diagnostics)
		v.Ex(t, "buffer helper.go | undo | write | buffer main.go")
	})

	t.Run("openFile", func(t *testing.T) {
		tc.MustCall(t, "openFile", map[string]any{"path": ws.Helper, "line": 9, "endLine": 11}, nil, v.diagnostics)
		var shown struct {
			Name    string `json:"name"`
			Line    int    `json:"line"`
			Matches []map[string]any
		}
		v.EvalJSON(t, &shown, "{'name': expand('%:p'), 'line': line('.'), 'matches': getmatches()}")
		if shown.Name != ws.Helper || shown.Line != 9 {
			t.Errorf("after openFile the window shows %s at line %d, want helper.go at 9", shown.Name, shown.Line)
		}
		raw, _ := json.Marshal(shown.Matches)
		if len(shown.Matches) != 1 || !strings.Contains(string(raw), `"pos1":[9]`) || !strings.Contains(string(raw), `"pos3":[11]`) {
			t.Errorf("openFile highlighted %s, want lines 9..11", raw)
		}
	})
}

func pos(line, char int) protocol.Position { return protocol.Position{Line: line, Character: char} }

// Without ALE, Vim answers from what it has: the quickfix list (as :make
// fills it) for diagnostics, a tags file for definitions and outlines; a
// tool that needs a language server says to install ALE.
func TestToolsAnswerFromQuickfixAndTags(t *testing.T) {
	sb := testkit.NewSandbox(t)
	ws := testkit.WriteGoWorkspace(t, sb.Workspace)
	// A tags file as ctags writes it.
	sb.WriteFile(t, "tags", "!_TAG_FILE_SORTED\t1\t/0=unsorted, 1=sorted/\n"+
		"Add\thelper.go\t/^func Add(a, b int) int {$/;\"\tf\n"+
		"Counter\thelper.go\t/^type Counter struct {$/;\"\ts\n")
	v := startVim(t, sb, Options{Config: map[string]any{"auto_start": true}})
	v.WaitRunning(t)
	env := v.terminalEnv(t)
	tc := testkit.StartTools(t, sb.Workspace, testkit.EditorEnv(sb.Env(), env))

	// Before anything fills the quickfix list, Vim has no diagnostics.
	text, isErr := tc.Call(t, "getDiagnostics", map[string]any{"path": ws.Main})
	if !isErr || !strings.HasPrefix(text, "Vim has no diagnostics for main.go: install ALE") {
		t.Errorf("getDiagnostics with an empty quickfix list: %q (error %v)", text, isErr)
	}

	// A compiler's message about Add, in bytes as compilers count them:
	// after the tab and the multi-byte string.
	src, err := os.ReadFile(ws.Main)
	if err != nil {
		t.Fatal(err)
	}
	line := strings.Split(string(src), "\n")[ws.UseLine-1]
	byteCol := strings.Index(line, "Add(") + 1
	v.Ex(t, fmt.Sprintf("edit main.go | cgetexpr %s", vimString(fmt.Sprintf("main.go:%d:%d: undefined: Add", ws.UseLine, byteCol))))
	var diags protocol.DiagnosticsResult
	tc.MustCall(t, "getDiagnostics", map[string]any{"path": ws.Main}, &diags, v.diagnostics)
	if len(diags.Diagnostics) != 1 || diags.Diagnostics[0].Message != "undefined: Add" ||
		diags.Diagnostics[0].Range.Start != pos(ws.UseLine, ws.UseColumn) || diags.Diagnostics[0].Severity != "error" {
		t.Errorf("diagnostics from the quickfix list = %#v, want undefined: Add at %d:%d", diags.Diagnostics, ws.UseLine, ws.UseColumn)
	}

	var locs protocol.LocationsResult
	tc.MustCall(t, "getDefinition", map[string]any{"path": ws.Main, "line": ws.UseLine, "character": ws.UseColumn + 1}, &locs, v.diagnostics)
	want := protocol.Location{Path: ws.Helper, Range: protocol.Range{Start: pos(ws.DefLine, ws.DefColumn), End: pos(ws.DefLine, ws.DefColumn+3)},
		Text: "func Add(a, b int) int {"}
	if len(locs.Locations) != 1 || locs.Locations[0] != want {
		t.Errorf("definition from tags = %+v, want %+v", locs.Locations, want)
	}

	var syms protocol.DocumentSymbolsResult
	tc.MustCall(t, "getDocumentSymbols", map[string]any{"path": ws.Helper}, &syms, v.diagnostics)
	if len(syms.Symbols) != 2 || syms.Symbols[0].Name != "Add" || syms.Symbols[0].Kind != "function" ||
		syms.Symbols[1].Name != "Counter" || syms.Symbols[1].Kind != "struct" || syms.Symbols[1].Range.Start.Line != 9 {
		t.Errorf("outline from tags = %+v, want Add (function) and Counter (struct, line 9)", syms.Symbols)
	}

	text, isErr = tc.Call(t, "getHover", map[string]any{"path": ws.Main, "line": ws.UseLine, "character": ws.UseColumn})
	if !isErr || !strings.HasPrefix(text, "Vim has no language server for main.go: install ALE") {
		t.Errorf("getHover without ALE: %q (error %v)", text, isErr)
	}
}
