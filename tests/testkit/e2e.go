package testkit

import (
	"os"
	"testing"
	"time"

	"github.com/gemini-ide-companion/gemini-ide-companion/tests/fakegemini"
	"github.com/gemini-ide-companion/gemini-ide-companion/tests/tmuxdrive"
)

// AppPy is the file an editor's end-to-end test opens: the model is asked
// about its lines 2-3 and proposes changes to it.
const AppPy = "def main():\n    print('hello')\n    return 0\n"

// E2E is what an editor's end-to-end test with the real Gemini CLI starts
// from: a sandbox with app.py, the fake Gemini API, the CLI and the
// environment the editor runs with.
type E2E struct {
	SB  *Sandbox
	API *fakegemini.Server
	// File is app.py in the workspace, holding AppPy.
	File string
	// Gemini is the real CLI's executable.
	Gemini string
	// Env is the editor's environment (tmuxdrive.EditorEnv).
	Env []string
}

// StartE2E prepares an end-to-end test; it needs tmux and the CLI (see
// tmuxdrive.Require and tmuxdrive.GeminiBin).
func StartE2E(t testing.TB) *E2E {
	t.Helper()
	tmuxdrive.Require(t)
	e := &E2E{Gemini: tmuxdrive.GeminiBin(t), SB: NewSandbox(t), API: fakegemini.Start(t)}
	e.File = e.SB.WriteFile(t, "app.py", AppPy)
	e.Env = tmuxdrive.EditorEnv(t, e.SB.Env(), e.SB.Home, e.SB.TmpDir, e.API.URL)
	return e
}

// CheckRequestContext checks the editor context the CLI put in the
// model's request: the active file, the cursor's line and the selection.
func (e *E2E) CheckRequestContext(t testing.TB, req fakegemini.Request, path string, line int, selection string) {
	t.Helper()
	c, ok := req.EditorContext()
	if !ok {
		t.Fatalf("the model request carries no editor context:\n%s", req.Text())
	}
	if c.ActiveFile == nil || c.ActiveFile.Path != path {
		t.Fatalf("editor context %+v does not name %s as the active file", c, path)
	}
	if c.ActiveFile.Cursor == nil || c.ActiveFile.Cursor.Line != line {
		t.Errorf("editor context cursor = %+v, want line %d", c.ActiveFile.Cursor, line)
	}
	if c.ActiveFile.SelectedText != selection {
		t.Errorf("editor context selection = %q", c.ActiveFile.SelectedText)
	}
}

// CheckToolResultSent waits for the model's request after a write_file
// call and checks that it carries the call's result.
func (e *E2E) CheckToolResultSent(t testing.TB, timeout time.Duration) {
	t.Helper()
	reqs := e.API.WaitRequests(t, 2, timeout)
	if fr := reqs[1].FunctionResponses(); len(fr) == 0 || fr[len(fr)-1].Name != "write_file" {
		t.Errorf("the second request carries no write_file result: %+v", fr)
	}
}

// CheckRejected checks what a rejected second change leaves: app.py
// holding what was accepted before, and the turn ended (three model
// requests in all).
func (e *E2E) CheckRejected(t testing.TB, accepted string) {
	t.Helper()
	if data, _ := os.ReadFile(e.File); string(data) != accepted {
		t.Errorf("after the rejection the file holds %q, want it untouched", data)
	}
	if n := len(e.API.Requests()); n != 3 {
		t.Errorf("%d model requests, want 3 (the rejection ends the turn)", n)
	}
}
