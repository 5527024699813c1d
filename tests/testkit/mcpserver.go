package testkit

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// NotesMCPServer builds the tests' MCP server (tests/a2a/appendmcp: one
// tool, append_line, appending to the file notes) and names it "notes" in
// the Gemini settings under home, next to the settings every sandbox uses
// (API-key auth, no auto-update), as a user configures an MCP server.
func NotesMCPServer(t testing.TB, home, notes string) {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "appendmcp")
	build := exec.Command("go", "build", "-o", bin, "./tests/a2a/appendmcp")
	build.Dir = ModuleRoot(t)
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building the test MCP server: %v\n%s", err, out)
	}
	settings, err := json.Marshal(map[string]any{
		"security":   map[string]any{"auth": map[string]any{"selectedType": "gemini-api-key"}},
		"general":    map[string]any{"disableAutoUpdate": true},
		"mcpServers": map[string]any{"notes": map[string]any{"command": bin, "args": []string{"-file", notes}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(home, ".gemini"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, ".gemini", "settings.json"), settings, 0o600); err != nil {
		t.Fatal(err)
	}
}
