package testkit

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/gemini-ide-companion/gemini-ide-companion/a2a/launch"
	"github.com/gemini-ide-companion/gemini-ide-companion/tests/fakegemini"
)

// GeminiSettings is the ~/.gemini/settings.json of a user who signed in
// with an API key: what Gemini CLI and its A2A server read to choose their
// auth, with the update check off (no network in tests).
const GeminiSettings = `{"security":{"auth":{"selectedType":"gemini-api-key"}},"general":{"disableAutoUpdate":true}}`

// WriteGeminiSettings writes GeminiSettings into home/.gemini.
func WriteGeminiSettings(t testing.TB, home string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Join(home, ".gemini"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, ".gemini", "settings.json"), []byte(GeminiSettings), 0o600); err != nil {
		t.Fatal(err)
	}
}

// FakeModelEnv is the environment that points Gemini CLI, or its A2A
// server, at the fake Gemini API at url with a dummy key, in a trusted
// workspace, never opening a browser.
func FakeModelEnv(url string) []string {
	return []string{"GEMINI_API_KEY=dummy", "GOOGLE_GEMINI_BASE_URL=" + url, "GEMINI_CLI_TRUST_WORKSPACE=true", "NO_BROWSER=true"}
}

// AgentSandbox is a user's setup for the A2A side (tests/a2a, tests/acp):
// a private HOME with Gemini settings, a workspace, the fake Gemini API as
// the model, and a PATH on which the A2A server (npm install -g) and our
// commands are found.
type AgentSandbox struct {
	Fake      *fakegemini.Server
	Home      string
	Workspace string
	// Path is the PATH=… entry of Env.
	Path string
}

// NewAgentSandbox makes an AgentSandbox whose PATH has the A2A server's
// bin folder (A2AServerBin: skipped, or failed under CI, without it) and
// then dirs in front.
func NewAgentSandbox(t testing.TB, dirs ...string) *AgentSandbox {
	t.Helper()
	bin := A2AServerBin(t)
	sb := &AgentSandbox{Fake: fakegemini.Start(t), Home: t.TempDir(), Workspace: t.TempDir(), Path: PathWith(append([]string{bin}, dirs...)...)}
	WriteGeminiSettings(t, sb.Home)
	return sb
}

// Env is what the sandbox sets of a program's environment: PATH, HOME
// (USERPROFILE on Windows), FakeModelEnv and more.
func (sb *AgentSandbox) Env(more ...string) []string {
	env := append([]string{sb.Path, "HOME=" + sb.Home, "USERPROFILE=" + sb.Home}, FakeModelEnv(sb.Fake.URL)...)
	return append(env, more...)
}

// StartAgent starts Gemini CLI's A2A server for the workspace with env, as
// our commands do by default (found on PATH), failing the test unless it
// is up within timeout; log, unless nil, gets the server's output. The
// server is stopped when the test ends.
func (sb *AgentSandbox) StartAgent(t testing.TB, env []string, timeout time.Duration, log io.Writer) *launch.Server {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	srv, err := launch.Start(ctx, launch.Options{Dir: sb.Workspace, Env: env, Log: log})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Stop)
	return srv
}
