//go:build wine && linux

package windows

import (
	"context"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/gemini-ide-companion/gemini-ide-companion/link"
	"github.com/gemini-ide-companion/gemini-ide-companion/link/protocol"
	"github.com/gemini-ide-companion/gemini-ide-companion/tests/testkit"
)

// sidecar is the Windows sidecar started from Linux under cmd /c, with the
// editor link on pipes the test holds.
type sidecar struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	conn   *link.Conn
	exited chan struct{}
	log    string
}

func (w *wine) startSidecar(t *testing.T, dir string) *sidecar {
	t.Helper()
	s := &sidecar{exited: make(chan struct{}), log: filepath.Join(t.TempDir(), "sidecar.log")}
	s.cmd = exec.Command("wine", "cmd", "/c", w.winPath(w.exe("gemini-ide-companion")), "--stdio", "--log-level", "debug", "--log-file", w.winPath(s.log))
	s.cmd.Dir, s.cmd.Env = dir, w.env("")
	var err error
	if s.stdin, err = s.cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	out, err := s.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := s.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { s.cmd.Wait(); close(s.exited) }()
	s.conn = link.New(out, s.stdin, nopHandler{})
	go s.conn.Serve(context.Background())
	t.Cleanup(func() {
		s.stdin.Close()
		select {
		case <-s.exited:
		case <-time.After(10 * time.Second):
			s.cmd.Process.Kill()
		}
		if t.Failed() {
			data, _ := os.ReadFile(s.log)
			t.Logf("sidecar log:\n%s", tail(string(data), 3000))
		}
	})
	return s
}

func (s *sidecar) initialize(t *testing.T, ws string, processID int) protocol.InitializeResult {
	t.Helper()
	p := map[string]any{
		"protocolVersion":  1,
		"ide":              map[string]string{"name": "neovim", "displayName": "Neovim"},
		"workspaceFolders": []string{ws},
	}
	if processID != 0 {
		p["processId"] = processID
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var res protocol.InitializeResult
	if err := s.conn.Call(ctx, "initialize", p, &res); err != nil {
		t.Fatalf("initialize: %v", err)
	}
	return res
}

type nopHandler struct{}

func (nopHandler) HandleRequest(context.Context, string, json.RawMessage) (any, error) {
	return struct{}{}, nil
}
func (nopHandler) HandleNotification(context.Context, string, json.RawMessage) {}

// TestSidecarEndsWhenItsEditorDies: the editor process dies while the
// sidecar's stdin stays open (here a pipe whose write end the test keeps;
// for an editor, one its other children inherited). The sidecar removes
// its discovery file and exits, instead of waiting for its stdin.
func TestSidecarEndsWhenItsEditorDies(t *testing.T) {
	w := setup(t)
	ws, wsWin := w.workspace(t)
	// The "editor": a Windows process whose PID we learn and whose end we
	// choose (another sidecar, ended by closing its stdin).
	editor := w.startSidecar(t, ws)
	editorPID := editor.initialize(t, wsWin, 0).PID

	s := w.startSidecar(t, ws)
	res := s.initialize(t, wsWin, editorPID)
	file := w.linuxPath(res.DiscoveryFile)
	if _, err := os.Stat(file); err != nil {
		t.Fatal(err)
	}
	editor.stdin.Close()
	select {
	case <-editor.exited:
	case <-time.After(30 * time.Second):
		t.Fatal("the editor stand-in did not exit")
	}
	select {
	case <-s.exited:
	case <-time.After(20 * time.Second):
		t.Fatalf("the sidecar outlived its editor (PID %d) by 20 s while its stdin stayed open", editorPID)
	}
	if !testkit.Poll(5*time.Second, func() bool { _, err := os.Stat(file); return os.IsNotExist(err) }) {
		t.Fatalf("the discovery file %s outlived the editor", file)
	}
}
