package a2a_test

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/gemini-ide-companion/gemini-ide-companion/tests/fakegemini"
)

// TestGeminiCLIAsClient: the real Gemini CLI (0.61.0, tests/node) with the
// README's settings block (gemini-a2a-mcp found on PATH, as installed; it
// starts the A2A server, also found on PATH), whose (fake) model consults
// the Gemini agent and hands it a task through our tools.
func TestGeminiCLIAsClient(t *testing.T) {
	t.Parallel()
	cli := filepath.Join(here(), "..", "node", "node_modules", ".bin", "gemini")
	if _, err := os.Stat(cli); err != nil {
		msg := "needs the Gemini CLI: run (cd tests/node && npm ci)"
		if os.Getenv("CI") != "" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	sb := newSandbox(t)
	// The README's block as the project's .gemini/settings.json; the
	// user's own settings (auth) in HOME, where the A2A server reads them
	// too.
	if err := os.MkdirAll(filepath.Join(sb.Workspace, ".gemini"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(sb.Workspace, ".gemini", "settings.json"), []byte(geminiBlock(t)), 0o600); err != nil {
		t.Fatal(err)
	}

	// One model for both (the CLI's environment, and so its fake API, is
	// the server's): the turns come in order.
	sb.Fake.Reply(fakegemini.Call("mcp_gemini_gemini_consult", map[string]any{"question": "How should I guard a shared map?"}))
	sb.Fake.Reply(fakegemini.Text("Guard the map with a sync.Mutex."))
	sb.Fake.Reply(fakegemini.Call("mcp_gemini_gemini_task_start", map[string]any{"task": "list the files", "async": false}))
	sb.Fake.Reply(fakegemini.Text("Listed the files: go.mod, main.go."))
	sb.Fake.Reply(fakegemini.Text("All done: Gemini answered."))

	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "node", cli, "-p", "ask gemini", "--approval-mode", "yolo")
	cmd.Dir = sb.Workspace
	cmd.Env = append(os.Environ(), append(sb.Env(), "TMPDIR="+t.TempDir())...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("gemini -p: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "All done: Gemini answered.") {
		t.Fatalf("CLI output:\n%s", out)
	}
	var responses []string
	for _, r := range sb.Fake.Requests() {
		for _, fr := range r.FunctionResponses() {
			b, _ := json.Marshal(fr.Response)
			responses = append(responses, fr.Name+" "+string(b))
		}
	}
	all := strings.Join(responses, "\n")
	for _, want := range []string{"Guard the map with a sync.Mutex.", "Listed the files: go.mod, main.go.", `\"status\":\"complete\"`} {
		if !strings.Contains(all, want) {
			t.Fatalf("tool results the CLI's model got lack %q:\n%s\nCLI output:\n%s", want, all, out)
		}
	}
}

// geminiBlock is the README's settings block for Gemini CLI.
func geminiBlock(t *testing.T) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(here(), "..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	text := string(data)
	i := strings.Index(text, "Gemini CLI (`~/.gemini/settings.json`")
	if i < 0 {
		t.Fatal("README.md's A2A bridge section no longer configures Gemini CLI: update this test")
	}
	m := regexp.MustCompile("(?s)```json\n(.*?)```").FindStringSubmatch(text[i:])
	if m == nil {
		t.Fatal("no json block after the README's Gemini CLI paragraph")
	}
	return m[1]
}
