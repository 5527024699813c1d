package a2a_test

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gemini-ide-companion/gemini-ide-companion/tests/fakegemini"
)

// TestGeminiCLIAsClient: the real Gemini CLI (0.61.0, tests/node) runs
// gemini-a2a-mcp from its mcpServers, and its (fake) model consults the
// Gemini agent and hands it a task through our tools.
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
	srv := sb.startAgent(t)

	// The supervising CLI has its own HOME, workspace and fake model.
	model := fakegemini.Start(t)
	home, ws := t.TempDir(), t.TempDir()
	settings := map[string]any{
		"security": map[string]any{"auth": map[string]any{"selectedType": "gemini-api-key"}},
		"mcpServers": map[string]any{"a2a": map[string]any{
			"command": bridgeBin, "args": []string{"--agent", srv.URL}, "trust": true}},
	}
	data, _ := json.Marshal(settings)
	if err := os.MkdirAll(filepath.Join(home, ".gemini"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, ".gemini", "settings.json"), data, 0o600); err != nil {
		t.Fatal(err)
	}

	sb.fake.Reply(fakegemini.Text("Guard the map with a sync.Mutex."))
	sb.fake.Reply(fakegemini.Text("Listed the files: go.mod, main.go."))
	model.Reply(fakegemini.Call("mcp_a2a_gemini_consult", map[string]any{"question": "How should I guard a shared map?"}))
	model.Reply(fakegemini.Call("mcp_a2a_gemini_task_start", map[string]any{"task": "list the files", "async": false}))
	model.Reply(fakegemini.Text("All done: Gemini answered."))

	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "node", cli, "-p", "ask gemini", "--approval-mode", "yolo")
	cmd.Dir = ws
	cmd.Env = append(os.Environ(), "HOME="+home, "GEMINI_API_KEY=dummy", "GOOGLE_GEMINI_BASE_URL="+model.URL,
		"GEMINI_CLI_TRUST_WORKSPACE=true", "TMPDIR="+t.TempDir())
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("gemini -p: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "All done: Gemini answered.") {
		t.Fatalf("CLI output:\n%s", out)
	}
	var responses []string
	for _, r := range model.Requests() {
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
