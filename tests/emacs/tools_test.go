package emacs

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/gemini-ide-companion/gemini-ide-companion/link/protocol"
	"github.com/gemini-ide-companion/gemini-ide-companion/tests/testkit"
	"github.com/gemini-ide-companion/gemini-ide-companion/tests/tmuxdrive"
)

// The editor tools (docs/editor-tools.md) answered by Emacs 28 from
// Flymake and eglot (Debian's elpa-eglot, elpa-go-mode) with gopls, on the
// Go workspace with multi-byte characters before the symbol; asked by an
// agent through `gemini-ide-companion tools`.

// eglotInit is how a user sets up eglot for Go with gopls.
const eglotInit = `
(require 'go-mode)
(require 'eglot)
(add-to-list 'eglot-server-programs '(go-mode . %s))
(add-hook 'go-mode-hook #'eglot-ensure)
`

func TestToolsAnswerFromEglotAndFlymake(t *testing.T) {
	requireEmacs(t)
	tmuxdrive.Require(t)
	requireElpa(t, "eglot", "go-mode")
	sb := testkit.NewSandbox(t)
	ws := testkit.WriteGoWorkspace(t, sb.Workspace)
	notes := sb.WriteFile(t, "notes.txt", "no language server here\n")
	cmd := testkit.GoplsCommand(t, sb.TmpDir)
	list := "("
	for _, c := range cmd {
		list += quote(c) + " "
	}
	list += ")"
	env := testkit.GoplsEnv(sb, "TERM=xterm-256color")
	em := startEmacsWith(t, sb, env, fmt.Sprintf(eglotInit, list), "gemini", "auto", "main.go")
	t.Cleanup(func() { // before the sandbox goes: gopls writes its cache there
		em.pane.Keys(t, "C-x", "C-c")
		em.pane.AwaitExit(waitTimeout)
		testkit.AwaitGoplsExit(t, sb.TmpDir)
	})
	em.WaitEval(t, "the sidecar to run", "(gemini-companion-link-running-p)", waitTimeout)
	em.WaitEval(t, "Flymake's diagnostics from eglot for main.go",
		`(with-current-buffer "main.go" (and (cl-some (lambda (d) (string-match-p "cannot use" (flymake-diagnostic-text d))) (flymake-diagnostics)) t))`, 3*waitTimeout)

	var vars []string
	printed := em.Eval(t, `(json-encode (vconcat (gemini-companion-terminal-env)))`)
	text, err := strconv.Unquote(printed) // the printed Lisp string
	if err != nil || json.Unmarshal([]byte(text), &vars) != nil {
		t.Fatalf("gemini-companion-terminal-env printed %s (%v)", printed, err)
	}
	envVars := map[string]string{}
	for _, kv := range vars {
		k, v, _ := strings.Cut(kv, "=")
		envVars[k] = v
	}
	if envVars["GEMINI_CLI_IDE_SERVER_PORT"] == "" {
		t.Fatalf("gemini-companion-terminal-env = %q", vars)
	}
	tc := testkit.StartTools(t, sb.Workspace, testkit.EditorEnv(sb.Env(), envVars))
	more := func() string { return em.pane.Screen() + testkit.SidecarLogTail(em.log) }
	testkit.CheckGoTools(t, tc, ws, "Emacs", notes, false, more)

	t.Run("getOpenEditors", func(t *testing.T) {
		em.Eval(t, fmt.Sprintf(`(with-current-buffer (find-file-noselect %s) (goto-char (point-min)) (insert "// unsaved\n"))`, quote(ws.Helper)))
		em.Eval(t, fmt.Sprintf(`(with-selected-window (selected-window) (switch-to-buffer "main.go") (goto-char (point-min)) (forward-line %d) (search-forward "Add(") (backward-char 4))`, ws.UseLine-1))
		testkit.CheckOpenEditors(t, tc, ws, more)
		em.Eval(t, fmt.Sprintf(`(with-current-buffer (find-buffer-visiting %s) (revert-buffer t t))`, quote(ws.Helper)))
	})

	// The user types two lines and the agent asks at once, before eglot
	// has told the language server (it waits for half a second without a
	// key): the plugin tells it first, and the answer is for the text on
	// screen.
	t.Run("getDefinition just after typing", func(t *testing.T) {
		em.Eval(t, `(progn (switch-to-buffer "main.go") (goto-char (point-min)))`)
		em.pane.Keys(t, keyNames("// typed\n// just now\n")...)
		defer em.Eval(t, `(with-current-buffer "main.go" (revert-buffer t t))`)
		em.WaitEval(t, "the typed lines in main.go", `(with-current-buffer "main.go" (save-excursion (goto-char (point-min)) (and (looking-at "// typed\n// just now\npackage main") t)))`, waitTimeout)
		var res protocol.LocationsResult
		tc.MustCall(t, "getDefinition", map[string]any{"path": ws.Main, "line": ws.UseLine + 2, "character": ws.UseColumn}, &res, more)
		if len(res.Locations) != 1 || res.Locations[0].Path != ws.Helper || res.Locations[0].Range.Start.Line != ws.DefLine {
			t.Fatalf("definition of Add two lines lower, just typed = %+v, want helper.go line %d", res.Locations, ws.DefLine)
		}
	})

	t.Run("openFile", func(t *testing.T) {
		tc.MustCall(t, "openFile", map[string]any{"path": ws.Helper, "line": 9, "endLine": 11}, nil, more)
		got := em.Eval(t, fmt.Sprintf(`(let ((w (get-buffer-window (find-buffer-visiting %s)))) (list (and w t) (and w (with-current-buffer (window-buffer w) (line-number-at-pos (window-point w)))) (with-current-buffer (find-buffer-visiting %s) (mapcar (lambda (o) (list (line-number-at-pos (overlay-start o)) (line-number-at-pos (overlay-end o)))) (cl-remove-if-not (lambda (o) (overlay-get o 'gemini-companion-open)) (overlays-in (point-min) (point-max)))))))`, quote(ws.Helper), quote(ws.Helper)))
		if got = strings.Join(strings.Fields(got), " "); got != "(t 9 ((9 11)))" {
			t.Errorf("after openFile: %s, want helper.go shown at line 9 with lines 9..11 marked", got)
		}
	})
}

// Without eglot, Emacs answers outlines from imenu (go-mode's) and says
// what to start for what needs a language server or diagnostics.
func TestToolsAnswerFromImenuWithoutEglot(t *testing.T) {
	requireEmacs(t)
	tmuxdrive.Require(t)
	requireElpa(t, "go-mode")
	sb := testkit.NewSandbox(t)
	ws := testkit.WriteGoWorkspace(t, sb.Workspace)
	env := testkit.WithEnv(sb.Env(), "HOME="+sb.Home, "TERM=xterm-256color")
	em := startEmacsWith(t, sb, env, "(require 'go-mode)", "gemini", "auto", "main.go")
	em.WaitEval(t, "the sidecar to run", "(gemini-companion-link-running-p)", waitTimeout)
	tc := em.startTools(t, sb)
	more := func() string { return em.pane.Screen() + testkit.SidecarLogTail(em.log) }

	var syms protocol.DocumentSymbolsResult
	tc.MustCall(t, "getDocumentSymbols", map[string]any{"path": ws.Helper}, &syms, more)
	// go-mode's imenu names functions with their signature.
	var add *protocol.DocumentSymbol
	for i, s := range syms.Symbols {
		if strings.HasPrefix(s.Name, "Add(") {
			add = &syms.Symbols[i]
		}
	}
	if add == nil || add.Kind != "function" || add.Range.Start.Line != ws.DefLine {
		t.Errorf("outline from imenu = %+v, want the function Add on line %d", syms.Symbols, ws.DefLine)
	}
	for _, c := range []struct {
		tool string
		args map[string]any
		want string
	}{
		{"getDefinition", map[string]any{"path": ws.Main, "line": ws.UseLine, "character": ws.UseColumn}, "Emacs has no language server for main.go that answers textDocument/definition: start eglot"},
		{"getDiagnostics", map[string]any{"path": ws.Main}, "Emacs has no diagnostics for main.go: turn on flymake-mode"},
	} {
		text, isErr := tc.Call(t, c.tool, c.args)
		if !isErr || !strings.HasPrefix(text, c.want) {
			t.Errorf("%s: %q (error %v), want an error saying %q", c.tool, text, isErr, c.want)
		}
	}
}
