//go:build wine && linux

package windows

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/gemini-ide-companion/gemini-ide-companion/cmd/gemini-ide-companion/doctor"
	"github.com/gemini-ide-companion/gemini-ide-companion/link/protocol"
)

// TestListEnvAndDoctorOnWindowsPaths: with an editor's sidecar serving a
// folder it named c:\Work\Projet été … (a space, non-ASCII letters, a
// lower-case drive letter), the Windows commands run from a Windows shell
// in that folder (which Windows names C:\Work\…) list it, point the CLI
// at it and say a CLI would connect; a --workspace written with "/" and
// in another case is the same folder; outside it, doctor says why not.
func TestListEnvAndDoctorOnWindowsPaths(t *testing.T) {
	w := setup(t)
	ws, wsWin := w.workspace(t)
	given := strings.ToLower(wsWin[:1]) + wsWin[1:]
	env := w.env("")
	ed, pane, _ := w.editorHost(t, ws, env, false, "cmd.exe", "/d", "/c", "echo terminal opened")
	var res protocol.InitializeResult
	if err := callTimeout(ed, "initialize", map[string]any{
		"protocolVersion":  1,
		"ide":              map[string]string{"name": "neovim", "displayName": "Neovim"},
		"workspaceFolders": []string{given},
	}, &res, 60*time.Second); err != nil {
		t.Fatalf("initialize: %v\n%s", err, pane.Screen())
	}
	gic := w.winPath(w.exe("gemini-ide-companion"))

	code, out, errOut := w.run(t, ws, env, gic, "list")
	if code != 0 || !regexp.MustCompile(`Neovim\s+`+regexp.QuoteMeta(given)+`\s+\d+\s+\d+\s+`+fmt.Sprint(res.Port)+`\s`).MatchString(out) {
		t.Fatalf("list: exit %d, stderr %q:\n%s", code, errOut, out)
	}

	code, out, errOut = w.run(t, ws, env, gic, "env")
	if code != 0 || exportedPort(t, out) != res.Port {
		t.Fatalf("env in %s: exit %d, stderr %q:\n%s", wsWin, code, errOut, out)
	}
	other := strings.ReplaceAll(strings.ToUpper(wsWin[:1])+strings.ToUpper(wsWin[1:8])+wsWin[8:], `\`, "/")
	code, out, errOut = w.run(t, w.driveC(), env, gic, "env", "--workspace", other)
	if code != 0 || exportedPort(t, out) != res.Port {
		t.Fatalf("env --workspace %s: exit %d, stderr %q:\n%s", other, code, errOut, out)
	}

	code, out, _ = w.run(t, ws, env, gic, "doctor", "--json")
	var rep doctor.Report
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("doctor --json: %v\n%s", err, out)
	}
	if code != 0 || !rep.WouldConnect || !strings.Contains(out, fmt.Sprintf("MCP initialize on 127.0.0.1:%d with the file's token succeeded", res.Port)) {
		t.Fatalf("doctor in %s: exit %d:\n%s", wsWin, code, out)
	}

	outside := filepath.Join(w.driveC(), "Elsewhere")
	if err := os.MkdirAll(outside, 0o755); err != nil {
		t.Fatal(err)
	}
	code, out, _ = w.run(t, outside, env, gic, "doctor")
	if code != 1 || !strings.Contains(out, "Directory mismatch") {
		t.Fatalf("doctor outside the workspace: exit %d:\n%s", code, out)
	}
}
