package acp_test

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gemini-ide-companion/gemini-ide-companion/tests/fakegemini"
)

// TestAgentCredentials: the A2A servers our commands start answer only
// requests with their launch's secret. An agent given with --agent whose
// secret the adapter cannot find (another temporary folder) refuses the
// session, and the error names the flags that give credentials; with
// --agent-token-env (the token in the environment, never on the command
// line) the session works.
func TestAgentCredentials(t *testing.T) {
	t.Parallel()
	sb := newSandbox(t)
	srv := sb.startAgent(t)
	token := strings.TrimPrefix(srv.Header().Get("Authorization"), "Bearer ")
	env := append(sb.env(), "TMPDIR="+t.TempDir())
	log := filepath.Join(sb.Home, "acp.log")

	c := startClient(t, env, "gemini-a2a-acp", "--log-file", log, "--agent", srv.URL)
	c.initialize(true)
	ev := c.result(c.send(map[string]any{"op": "new", "cwd": sb.Workspace}), time.Minute)
	if ev.Error == nil || !strings.Contains(ev.Error.Message, "wants credentials") || !strings.Contains(ev.Error.Message, "--agent-token-env") {
		t.Fatalf("session/new on a protected agent without credentials: %+v; want an error naming the flags", ev)
	}
	c.stop()

	c = startClient(t, append(env, "MY_A2A_TOKEN="+token), "gemini-a2a-acp", "--log-file", log, "--agent", srv.URL, "--agent-token-env", "MY_A2A_TOKEN")
	c.initialize(true)
	sid := c.newSession(sb.Workspace)
	sb.Fake.Reply(fakegemini.Text("Token taken."))
	if got := c.stopReason(c.prompt(sid, "there?")); got != "end_turn" {
		t.Fatalf("stop reason %q", got)
	}
	if got := messageText(c.updates(sid)); !strings.Contains(got, "Token taken.") {
		t.Fatalf("answer %q", got)
	}
}
