package acp_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gemini-ide-companion/gemini-ide-companion/tests/fakegemini"
)

// startAdapter runs the scripted SDK client on gemini-a2a-acp as an editor
// configures it: the bare command, found on PATH, in the user's
// environment.
func startAdapter(t *testing.T, sb *sandbox, args ...string) *client {
	t.Helper()
	return startClient(t, append(sb.env(), "ACP_TEST_NAME="+t.Name()), append([]string{"gemini-a2a-acp", "--log-file", filepath.Join(sb.home, "acp.log")}, args...)...)
}

// A prompt is answered with the agent's thought and its text streamed as
// chunks, in order, and the turn ends with end_turn.
func TestPromptStreamsText(t *testing.T) {
	t.Parallel()
	sb := newSandbox(t)
	sb.fake.Reply(fakegemini.Thought("**Greeting** deciding how to say hello"), fakegemini.Text("Hello "), fakegemini.Text("from "), fakegemini.Text("Gemini."))
	c := startAdapter(t, sb)
	c.initialize(false)
	sid := c.newSession(sb.ws)
	if got := c.stopReason(c.prompt(sid, "say hello")); got != "end_turn" {
		t.Fatalf("stop reason %q, want end_turn", got)
	}
	var text strings.Builder
	var kinds []string
	for _, u := range c.updates(sid) {
		kinds = append(kinds, u.SessionUpdate)
		if u.SessionUpdate == "agent_message_chunk" {
			text.WriteString(u.text())
		}
	}
	if text.String() != "Hello from Gemini." {
		t.Fatalf("message chunks %q, want %q; updates %v", text.String(), "Hello from Gemini.", kinds)
	}
	_ = os.Getenv
}
