// Package agentpanel tests the agent panel (docs/agent-panel.md) with real
// parts: the real sidecar, Gemini CLI's real A2A server (0.25.2, installed
// with npm install -g into tests/a2a/npm-global, found on PATH) whose model
// is the fake Gemini API on 127.0.0.1, and real Neovim in tmux for the panel
// itself.
package agentpanel

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/gemini-ide-companion/gemini-ide-companion/tests/fakegemini"
	"github.com/gemini-ide-companion/gemini-ide-companion/tests/testkit"
)

// turnTimeout bounds one agent turn against the real server.
const turnTimeout = 90 * time.Second

// serverBin is the bin folder of the A2A server installed as users install
// it (npm install -g into tests/a2a/npm-global); the sidecar finds the
// server there, on PATH, as it finds a user's.
func serverBin(t testing.TB) string { return testkit.A2AServerBin(t) }

// world is one sandbox: workspace, private HOME with Gemini settings, and
// the fake Gemini API the server's model is.
type world struct {
	sb      *testkit.Sandbox
	fake    *fakegemini.Server
	pathEnv string   // PATH=…, with the A2A server's bin folder
	extra   []string // more of the sidecar's environment (a test's)
}

func newWorld(t testing.TB) *world {
	t.Helper()
	bin := serverBin(t)
	w := &world{sb: testkit.NewSandbox(t), fake: fakegemini.Start(t), pathEnv: testkit.PathWith(bin)}
	testkit.WriteGeminiSettings(t, w.sb.Home)
	return w
}

// env is the environment of the sidecar (and so of the server it starts).
func (w *world) env() []string {
	set := append([]string{w.pathEnv, "HOME=" + w.sb.Home, "USERPROFILE=" + w.sb.Home}, testkit.FakeModelEnv(w.fake.URL)...)
	return testkit.WithEnv(w.sb.Env(), append(set, w.extra...)...)
}

func (w *world) path(name string) string { return filepath.Join(w.sb.Workspace, name) }

func (w *world) write(t testing.TB, name, content string) string {
	t.Helper()
	p := w.path(name)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func (w *world) read(t testing.TB, name string) (string, bool) {
	t.Helper()
	return testkit.ReadFile(t, w.path(name))
}

// event is an agent/event as the tests read it.
type event struct {
	Type    string `json:"type"`
	Text    string `json:"text"`
	State   string `json:"state"`
	TaskID  string `json:"taskId"`
	Replay  bool   `json:"replay"`
	Command string `json:"command"`
	Data    any    `json:"data"`
	Agent   *struct {
		URL     string `json:"url"`
		PID     int    `json:"pid"`
		Started bool   `json:"started"`
		Context string `json:"context"`
	} `json:"agent"`
	Tool *struct {
		ToolCallID          string `json:"toolCallId"`
		Status              string `json:"status"`
		ToolName            string `json:"toolName"`
		DiffShown           bool   `json:"diffShown"`
		DiffID              uint64 `json:"diffId"`
		ConfirmationRequest *struct {
			Options []struct {
				ID string `json:"id"`
			} `json:"options"`
			ExecuteDetails  *struct{ Command string } `json:"executeDetails"`
			FileEditDetails *struct {
				FilePath   string  `json:"filePath"`
				NewContent string  `json:"newContent"`
				OldContent *string `json:"oldContent"`
				Note       string  `json:"note"`
			} `json:"fileEditDetails"`
		} `json:"confirmationRequest"`
	} `json:"tool"`
}

func parseEvent(raw json.RawMessage) event {
	var e event
	_ = json.Unmarshal(raw, &e)
	return e
}

// killPID kills process pid at once, as a crash would.
func killPID(pid int) error {
	pr, err := os.FindProcess(pid)
	if err != nil {
		return err
	}
	return pr.Kill()
}
