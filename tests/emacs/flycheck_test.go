package emacs

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"

	"github.com/gemini-ide-companion/gemini-ide-companion/link/protocol"
	"github.com/gemini-ide-companion/gemini-ide-companion/tests/testkit"
	"github.com/gemini-ide-companion/gemini-ide-companion/tests/tmuxdrive"
)

// flycheckInit is how a Flycheck user sets it up: on in every buffer, with
// its own checkers (for Go: gofmt, go vet, go build), and no eglot.
const flycheckInit = `
(require 'go-mode)
(require 'flycheck)
(global-flycheck-mode)
`

// An Emacs that checks with Flycheck (Debian's elpa-flycheck) instead of
// Flymake: getDiagnostics answers with what Flycheck shows in the buffer.
func TestDiagnosticsFromFlycheck(t *testing.T) {
	requireEmacs(t)
	tmuxdrive.Require(t)
	requireElpa(t, "flycheck", "go-mode")
	sb := testkit.NewSandbox(t)
	ws := testkit.WriteGoWorkspace(t, sb.Workspace)
	em := startEmacsWith(t, sb, testkit.GoplsEnv(sb, "TERM=xterm-256color"), flycheckInit, "gemini", "auto", "main.go")
	em.WaitEval(t, "the sidecar to run", "(gemini-companion-link-running-p)", waitTimeout)
	// What Flycheck shows: its error list for main.go, as (line column
	// level checker message) of the type error.
	const fcErr = `(with-current-buffer "main.go" (cl-find-if (lambda (e) (string-match-p "cannot use" (flycheck-error-message e))) flycheck-current-errors))`
	em.WaitEval(t, "Flycheck's error for main.go", "(and "+fcErr+" t)", 3*waitTimeout)
	shown := em.Eval(t, `(let ((e `+fcErr+`)) (json-encode (list (flycheck-error-line e) (flycheck-error-column e) (symbol-name (flycheck-error-level e)) (symbol-name (flycheck-error-checker e)) (flycheck-error-message e))))`)
	text, err := strconv.Unquote(shown)
	var fc []any
	if err != nil || json.Unmarshal([]byte(text), &fc) != nil || len(fc) != 5 {
		t.Fatalf("Flycheck's error: %s", shown)
	}
	line, col, checker := int(fc[0].(float64)), int(fc[1].(float64)), fc[3].(string)
	t.Logf("Flycheck shows (line column level checker message): %s", text)

	tc := em.startTools(t, sb)
	more := func() string { return em.pane.Screen() + testkit.SidecarLogTail(em.log) }

	var res protocol.DiagnosticsResult
	tc.MustCall(t, "getDiagnostics", map[string]any{"path": ws.Main}, &res, more)
	var found *protocol.Diagnostic
	for i, d := range res.Diagnostics {
		if strings.Contains(d.Message, ws.ErrMessage) {
			found = &res.Diagnostics[i]
		}
	}
	if found == nil {
		t.Fatalf("no diagnostic %q in %+v (Flycheck shows %s)\n%s", ws.ErrMessage, res.Diagnostics, text, more())
	}
	// Where Flycheck shows it (the type error's line, and its column as
	// the checker counts it).
	if found.Path != ws.Main || found.Severity != "error" || found.Source != checker ||
		found.Range.Start.Line != line || found.Range.Start.Character != col || line != ws.ErrLine {
		t.Errorf("diagnostic = %+v, want main.go line %d character %d, an error from %s, as Flycheck shows", *found, line, col, checker)
	}
}
