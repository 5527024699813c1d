package testkit

import (
	"context"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/gemini-ide-companion/gemini-ide-companion/tests/tmuxdrive"
)

// ReadmeBlocks returns the fenced blocks of the given language in
// README.md's section heading (a "## " line), up to the next "## "
// heading; the test fails when there is no such section.
func ReadmeBlocks(t testing.TB, heading, lang string) []string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(ModuleRoot(t), "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	text := string(data)
	i := strings.Index(text, "\n"+heading+"\n")
	if i < 0 {
		t.Fatalf("README.md has no section %q", heading)
	}
	text = text[i+len(heading)+2:]
	if j := strings.Index(text, "\n## "); j >= 0 {
		text = text[:j]
	}
	var out []string
	for _, m := range regexp.MustCompile("(?s)```"+lang+"\n(.*?)```").FindAllStringSubmatch(text, -1) {
		out = append(out, m[1])
	}
	return out
}

// ClaudeCode is Claude Code as a user runs it in a project: the pinned
// version that tests/a2a/claude's npm ci installs, run in Dir with Env
// (the user's HOME, where `claude mcp add` keeps its configuration), its
// model a FakeClaude (no network).
type ClaudeCode struct {
	Bin string
	Dir string
	Env []string
}

// NewClaudeCode returns Claude Code, for the caller to set Dir and Env;
// without it installed the test is skipped, or fails under CI.
func NewClaudeCode(t testing.TB) *ClaudeCode {
	t.Helper()
	bin := filepath.Join(ModuleRoot(t), "tests", "a2a", "claude", "node_modules", ".bin", "claude")
	if _, err := os.Stat(bin); err != nil {
		tmuxdrive.Missing(t, "needs Claude Code: run (cd tests/a2a/claude && npm ci)")
	}
	return &ClaudeCode{Bin: bin}
}

// Configure runs line, a README's `claude mcp add …`, with bash in the
// project as the user runs it (claude being this Claude Code).
func (c *ClaudeCode) Configure(ctx context.Context, t testing.TB, line string) {
	t.Helper()
	cmd := exec.CommandContext(ctx, "bash", "-c", strings.Replace(line, "claude ", `"$CLAUDE" `, 1))
	cmd.Dir, cmd.Env = c.Dir, slices.Concat(c.Env, []string{"CLAUDE=" + c.Bin})
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", line, err, out)
	}
}

// Print runs `claude -p prompt --output-format json` allowing the tools
// allowed (comma-separated) with fc as its model, and returns what it
// printed; the test fails when it fails.
func (c *ClaudeCode) Print(ctx context.Context, t testing.TB, fc *FakeClaude, prompt, allowed string) string {
	t.Helper()
	api := httptest.NewServer(fc)
	defer api.Close()
	cmd := exec.CommandContext(ctx, c.Bin, "-p", prompt, "--output-format", "json", "--allowedTools", allowed)
	cmd.Dir, cmd.Env = c.Dir, slices.Concat(c.Env, ClaudeEnv(api.URL))
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("claude -p: %v\n%s", err, out)
	}
	return string(out)
}
