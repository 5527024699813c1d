package vim

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gemini-ide-companion/gemini-ide-companion/companion/protocol"
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
		Env:    testkit.WithEnv(sb.Env(), "HOME="+sb.Home, "GOTOOLCHAIN=local", "GOFLAGS=-mod=mod"),
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
		var res protocol.OpenEditorsResult
		tc.MustCall(t, "getOpenEditors", map[string]any{}, &res, v.diagnostics)
		if len(res.Editors) < 2 {
			t.Fatalf("open editors = %+v, want main.go and helper.go", res.Editors)
		}
		first := res.Editors[0]
		if first.Path != ws.Main || !first.Active || first.Cursor == nil || *first.Cursor != pos(ws.UseLine, ws.UseColumn) || first.Dirty {
			t.Errorf("first editor = %+v (cursor %+v), want main.go, active, clean, cursor at %d:%d", first, first.Cursor, ws.UseLine, ws.UseColumn)
		}
		var helper *protocol.OpenEditor
		for i, e := range res.Editors {
			if e.Path == ws.Helper {
				helper = &res.Editors[i]
			}
		}
		if helper == nil || !helper.Dirty || helper.Active {
			t.Errorf("helper.go = %+v, want it open, not active, with unsaved changes", helper)
		}
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
