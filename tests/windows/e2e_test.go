//go:build wine && linux

package windows

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gemini-ide-companion/gemini-ide-companion/companion/protocol"
	"github.com/gemini-ide-companion/gemini-ide-companion/tests/fakegemini"
	"github.com/gemini-ide-companion/gemini-ide-companion/tests/testkit"
	"github.com/gemini-ide-companion/gemini-ide-companion/tests/tmuxdrive"
)

const original = "def main():\n    print('hello')\n    return 0\n"

// TestWindowsCLIThroughTheTerminalEnv: the editor's terminal carries the
// initialize result's GEMINI_CLI_IDE_* variables, as every plugin's does.
func TestWindowsCLIThroughTheTerminalEnv(t *testing.T) { endToEnd(t, true) }

// TestWindowsCLIThroughTheDiscoveryFileAlone: no variable; the CLI walks
// its process tree (its own Windows rule, on the real process table) and
// must pick this editor's discovery file by its name, over a newer file of
// another editor for the same folder that it would otherwise prefer.
func TestWindowsCLIThroughTheDiscoveryFileAlone(t *testing.T) { endToEnd(t, false) }

// endToEnd runs the Windows sidecar as the child of a Windows "editor"
// (editorhost.exe), the real Windows Gemini CLI in the editor's terminal,
// and the fake model: /ide status connected, one proposal accepted with
// the editor's edits, one rejected, and the exact bytes on disk. The
// editor names its workspace with a lower-case drive letter (c:\…) and
// decides with the path written with forward slashes, in another case:
// the sidecar must still take them for the CLI's C:\… paths.
func endToEnd(t *testing.T, terminalEnv bool) {
	w := setup(t)
	api := fakegemini.Start(t)
	w.cliSettings(t)
	ws, wsWin := w.workspace(t)
	file := filepath.Join(ws, "app.py")
	if err := os.WriteFile(file, []byte(original), 0o644); err != nil {
		t.Fatal(err)
	}
	fileWin := wsWin + `\app.py`
	given := strings.ToLower(wsWin[:1]) + wsWin[1:] // c:\Work\Projet été …

	ed, pane, _ := w.editorHost(t, ws, w.env(api.URL), terminalEnv)
	var res protocol.InitializeResult
	if err := callTimeout(ed, "initialize", map[string]any{
		"protocolVersion":  1,
		"ide":              map[string]string{"name": "neovim", "displayName": "Neovim"},
		"workspaceFolders": []string{given},
		"isTrusted":        true,
	}, &res, 60*time.Second); err != nil {
		t.Fatalf("initialize: %v\n%s", err, pane.Screen())
	}
	if res.DiscoveryFile == "" {
		t.Fatalf("no discovery file: %+v", res)
	}
	discoveryFile := w.linuxPath(res.DiscoveryFile)
	if !terminalEnv {
		// Another editor's file for the same folder, under an IDE PID
		// newer than any here: the CLI prefers it unless this editor's
		// file bears the PID its own walk finds. Nothing listens on its
		// port, so picking it shows as not connected.
		decoy := filepath.Join(filepath.Dir(discoveryFile), "gemini-ide-server-999999-1.json")
		data, _ := json.Marshal(map[string]any{"port": 1, "workspacePath": wsWin, "authToken": "x",
			"ideInfo": map[string]string{"name": "vscode", "displayName": "Decoy Editor"}})
		if err := os.WriteFile(decoy, data, 0o600); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { os.Remove(decoy) })
	}

	pane.WaitFor(t, "Type your message", 120*time.Second)
	ideStatus(t, pane, "Neovim", 60*time.Second)

	// One proposal, accepted in the editor with the user's own edits.
	proposed := "def main():\n    print('hello, world')\n    return 0\n"
	edited := "def main():\n    print('hello, Windows')\n    return 0\n"
	api.Reply(fakegemini.Call("write_file", map[string]any{"file_path": fileWin, "content": proposed}))
	pane.Type(t, "greet the world in app.py")
	open := waitOpen(t, ed, pane)
	if open.FilePath != fileWin || open.NewContent != proposed || open.OutsideWorkspace {
		t.Fatalf("diff/open: path %q (want %q), content %q, outside the workspace %v", open.FilePath, fileWin, open.NewContent, open.OutsideWorkspace)
	}
	// The editor names the file its own way: c:/work/projet été …/APP.PY.
	decided := strings.ToLower(strings.ReplaceAll(fileWin, `\`, "/"))
	ed.mu.Lock()
	ed.edits[open.FilePath] = edited
	ed.mu.Unlock()
	// The decision names the proposal, as the plugins do: diff/open's
	// answer may still be on its way to the sidecar when this goes out,
	// and a decision without a diffId counts only for a view whose
	// diff/open was answered.
	if err := ed.conn.Notify(protocol.MethodDiffAccepted, map[string]any{"filePath": decided, "diffId": open.DiffID, "content": edited}); err != nil {
		t.Fatal(err)
	}
	waitBytes(t, file, edited, pane)
	// The CLI reports the write to the model, which ends the turn.
	api.WaitRequests(t, 2, 60*time.Second)

	// A second proposal, rejected.
	api.Reply(fakegemini.Call("write_file", map[string]any{"file_path": fileWin, "content": "must never reach the disk\n"}))
	pane.Type(t, "now break it")
	open = waitOpen(t, ed, pane)
	if err := ed.conn.Notify(protocol.MethodDiffRejected, map[string]any{"filePath": decided, "diffId": open.DiffID}); err != nil {
		t.Fatal(err)
	}
	// The rejection ends the turn: the model is asked nothing more.
	if !testkit.Poll(60*time.Second, func() bool { return strings.Contains(pane.Screen(), "Rejected") }) {
		t.Fatalf("the CLI does not show the rejection:\n%s", pane.Screen())
	}
	if n := len(api.Requests()); n != 3 {
		t.Errorf("%d model requests, want 3 (the rejection ends the turn)", n)
	}
	if data, _ := os.ReadFile(file); string(data) != edited {
		t.Fatalf("after the rejection the file holds %q, want %q", data, edited)
	}

	// The editor goes: the sidecar removes its file and exits.
	ed.raw.Close()
	if !testkit.Poll(30*time.Second, func() bool { _, err := os.Stat(discoveryFile); return os.IsNotExist(err) }) {
		t.Fatalf("the discovery file %s outlived the editor link", discoveryFile)
	}
}

func callTimeout(ed *editor, method string, params, result any, d time.Duration) error {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	return ed.conn.Call(ctx, method, params, result)
}

func waitOpen(t *testing.T, ed *editor, pane *tmuxdrive.Pane) protocol.DiffOpenParams {
	t.Helper()
	select {
	case p := <-ed.opens:
		return p
	case <-time.After(90 * time.Second):
		t.Fatalf("the editor was never asked to show the proposal; the CLI shows:\n%s", pane.Screen())
	}
	return protocol.DiffOpenParams{}
}

func waitBytes(t *testing.T, path, want string, pane *tmuxdrive.Pane) {
	t.Helper()
	var got []byte
	if !testkit.Poll(60*time.Second, func() bool { got, _ = os.ReadFile(path); return string(got) == want }) {
		t.Fatalf("%s holds %q, want %q; the CLI shows:\n%s", path, got, want, pane.Screen())
	}
}

// ideStatus runs /ide status until the CLI shows "Connected to name"; a
// loaded machine may take the Enter as part of a paste, so it is pressed
// again when the command is still in the input box.
func ideStatus(t *testing.T, pane *tmuxdrive.Pane, name string, timeout time.Duration) {
	t.Helper()
	pane.Type(t, "/ide status")
	deadline := time.Now().Add(timeout)
	retried := time.Now()
	for {
		s := pane.Screen()
		if strings.Contains(s, "Connected to "+name) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the CLI never showed %q; the screen is:\n%s", "Connected to "+name, s)
		}
		if time.Since(retried) > 3*time.Second && strings.Contains(s, "> /ide status") {
			pane.Keys(t, "Enter")
			retried = time.Now()
		}
		time.Sleep(100 * time.Millisecond)
	}
}

var portLine = regexp.MustCompile(`GEMINI_CLI_IDE_SERVER_PORT='(\d+)'`)

func exportedPort(t *testing.T, out string) int {
	t.Helper()
	m := portLine.FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("no port in %q", out)
	}
	p, _ := strconv.Atoi(m[1])
	return p
}
