//go:build linux

package install_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/gemini-ide-companion/gemini-ide-companion/tests/fakegemini"
	"github.com/gemini-ide-companion/gemini-ide-companion/tests/testkit"
)

// blocks returns every fenced block of the given language in text.
func blocks(text, lang string) []string {
	var out []string
	for _, m := range regexp.MustCompile("(?s)```"+regexp.QuoteMeta(lang)+"\n(.*?)```").FindAllStringSubmatch(text, -1) {
		out = append(out, m[1])
	}
	return out
}

// blockWith returns the block of the given language in text that contains
// want.
func blockWith(t *testing.T, text, lang, want string) string {
	t.Helper()
	for _, b := range blocks(text, lang) {
		if strings.Contains(b, want) {
			return b
		}
	}
	t.Fatalf("no ```%s block with %q in:\n%s", lang, want, text)
	return ""
}

// commands are the lines of a shell block without comments.
func commands(script string) []string {
	var out []string
	for _, l := range strings.Split(script, "\n") {
		if i := strings.Index(l, " #"); i >= 0 {
			l = l[:i]
		}
		if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "#") {
			out = append(out, l)
		}
	}
	return out
}

func (s *sandbox) setEnv(kv ...string) {
	for _, e := range kv {
		k, _, _ := strings.Cut(e, "=")
		kept := s.env[:0]
		for _, old := range s.env {
			if !strings.HasPrefix(old, k+"=") {
				kept = append(kept, old)
			}
		}
		s.env = append(kept, e)
	}
}

func (s *sandbox) getEnv(k string) string {
	for _, e := range s.env {
		if v, ok := strings.CutPrefix(e, k+"="); ok {
			return v
		}
	}
	return ""
}

// npmUser makes the sandbox the shell of a user who installs npm packages
// globally into HOME (npm's own cache, offline first) and Go commands into
// ~/go/bin, has both on PATH in front of bins, a Gemini key, and Gemini's
// settings, with the fake Gemini API at url as the model. The folders of
// this PATH that hold the A2A server or command (the checkout's own
// installs) are left out, so that only what the instructions install is
// found. It returns npm's global prefix.
func (s *sandbox) npmUser(t *testing.T, url, command string, bins ...string) string {
	t.Helper()
	cache, err := exec.Command("npm", "config", "get", "cache").Output()
	if err != nil {
		t.Fatalf("npm config get cache: %v", err)
	}
	prefix := filepath.Join(s.home, ".npm-global")
	var keep []string
	for _, dir := range filepath.SplitList(s.getEnv("PATH")) {
		if _, err := os.Stat(filepath.Join(dir, "gemini-cli-a2a-server")); err == nil {
			continue
		}
		if _, err := os.Stat(filepath.Join(dir, command)); err == nil {
			continue
		}
		keep = append(keep, dir)
	}
	path := append(append([]string{filepath.Join(prefix, "bin"), filepath.Join(s.home, "go", "bin")}, bins...), keep...)
	s.setEnv(append([]string{"NPM_CONFIG_PREFIX=" + prefix, "npm_config_cache=" + strings.TrimSpace(string(cache)),
		"npm_config_prefer_offline=true", "npm_config_audit=false", "npm_config_fund=false",
		"PATH=" + strings.Join(path, string(os.PathListSeparator))}, testkit.FakeModelEnv(url)...)...)
	testkit.WriteGeminiSettings(t, s.home)
	return prefix
}

func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// consultScript makes Claude's model call gemini_consult once, then relay
// whether Gemini's answer spoke of a mutex.
func consultScript(results []string) testkit.ClaudeStep {
	if len(results) == 0 {
		return testkit.ClaudeStep{Tool: "mcp__gemini__gemini_consult", Input: map[string]any{"question": "How should I guard a shared map?"}}
	}
	if strings.Contains(results[len(results)-1], "sync.Mutex") {
		return testkit.ClaudeStep{Text: "Claude relays: mutex"}
	}
	return testkit.ClaudeStep{Text: "Claude relays: nothing " + results[len(results)-1]}
}

// TestA2AInstructions follows every install and configuration block of the
// A2A sections as written, in a throwaway HOME (npm's global prefix in it,
// npm's cache the user's), against a fake Gemini API: the README's "A2A
// bridge" (install; Claude Code with `claude mcp add` and with .mcp.json;
// Gemini CLI's settings), docs/a2a-bridge.md's install block and its server
// started by hand, and the agent panel's install block (README,
// docs/agent-panel.md, plugins/nvim/README.md) followed by :GeminiAgent in
// Neovim with the plugin installed as its README says. Each client must
// reach the Gemini agent.
func TestA2AInstructions(t *testing.T) {
	t.Parallel()
	needTools(t, "git", "go", "tmux", "nvim", "node", "npm")
	root := repoRoot(t)
	claudeBin := filepath.Join(root, "tests", "a2a", "claude", "node_modules", ".bin")
	geminiCLI := filepath.Join(root, "tests", "node", "node_modules", ".bin", "gemini")
	for _, p := range []string{filepath.Join(claudeBin, "claude"), geminiCLI} {
		if _, err := os.Stat(p); err != nil {
			need(t, "%s (npm ci in tests/a2a/claude and tests/node)", p)
		}
	}
	s := newSandbox(t)
	fake := fakegemini.Start(t)
	// The user's shell, with Claude Code installed.
	prefix := s.npmUser(t, fake.URL, "gemini-a2a-mcp", claudeBin)

	readme := section(t, filepath.Join(root, "README.md"), "## A2A bridge")
	install := blockWith(t, readme, "sh", "npm install -g @google/gemini-cli-a2a-server")
	if !strings.Contains(install, "go install ./cmd/gemini-a2a-mcp") {
		t.Fatalf("the README's A2A install block no longer installs the bridge from the clone:\n%s", install)
	}
	// The other install blocks are lines of this one: running it runs them.
	for _, other := range []struct{ file, heading string }{
		{"docs/a2a-bridge.md", "## Installing it"},
		{"README.md", "## Agent panel (Neovim)"},
		{"docs/agent-panel.md", "## Install (Neovim)"},
		{"plugins/nvim/README.md", "## Agent panel"},
	} {
		b := block(t, section(t, filepath.Join(root, other.file), other.heading), "sh")
		for _, line := range commands(b) {
			if !strings.Contains(strings.Join(commands(install), "\n"), line) {
				t.Fatalf("%s %q runs %q, which the README's install block does not: test it here", other.file, other.heading, line)
			}
		}
	}
	s.shell(t, "install", "cd "+root+"\n"+install, 5*time.Minute)
	for _, p := range []string{filepath.Join(prefix, "bin", "gemini-cli-a2a-server"), filepath.Join(s.home, "go", "bin", "gemini-a2a-mcp")} {
		if _, err := os.Stat(p); err != nil {
			t.Fatalf("the instructions did not install %s: %v", p, err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	project := func(name string) string {
		dir := filepath.Join(s.home, name)
		if err := os.MkdirAll(dir, 0o700); err != nil {
			t.Fatal(err)
		}
		return dir
	}
	claude := func(t *testing.T, dir string) {
		t.Helper()
		fake.Reply(fakegemini.Text("Guard the map with a sync.Mutex."))
		api := httptest.NewServer(&testkit.FakeClaude{Next: consultScript})
		defer api.Close()
		cmd := exec.CommandContext(ctx, filepath.Join(claudeBin, "claude"), "-p", "ask gemini how to guard a map", "--output-format", "json",
			"--allowedTools", "mcp__gemini__gemini_consult")
		cmd.Dir, cmd.Env = dir, append(append([]string(nil), s.env...), testkit.ClaudeEnv(api.URL)...)
		out, err := cmd.CombinedOutput()
		if err != nil || !strings.Contains(string(out), "Claude relays: mutex") {
			t.Fatalf("claude -p: %v\n%s", err, out)
		}
	}

	t.Run("ClaudeMcpAdd", func(t *testing.T) {
		dir := project("claude-add")
		s.shell(t, "claude-add", "cd "+dir+"\n"+blockWith(t, readme, "sh", "claude mcp add"), 2*time.Minute)
		claude(t, dir)
	})

	t.Run("ClaudeMcpJSON", func(t *testing.T) {
		dir := project("claude-json")
		cfg := blockWith(t, readme, "json", `"args": ["--dir", "."]`)
		if err := os.WriteFile(filepath.Join(dir, ".mcp.json"), []byte(cfg), 0o600); err != nil {
			t.Fatal(err)
		}
		// The approval the README gives for claude -p.
		approve := regexp.MustCompile("`(\"enabledMcpjsonServers\": \\[[^`]*\\])`").FindStringSubmatch(readme)
		if approve == nil {
			t.Fatal("the README no longer says how to approve a project's server for claude -p")
		}
		if err := os.MkdirAll(filepath.Join(s.home, ".claude"), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(s.home, ".claude", "settings.json"), []byte("{"+approve[1]+"}"), 0o600); err != nil {
			t.Fatal(err)
		}
		claude(t, dir)
	})

	t.Run("GeminiCLISettings", func(t *testing.T) {
		dir := project("gemini-cli")
		i := strings.Index(readme, "Gemini CLI (`~/.gemini/settings.json`")
		if i < 0 {
			t.Fatal("the README no longer configures Gemini CLI")
		}
		cfg := blockWith(t, readme[i:], "json", "gemini-a2a-mcp")
		if err := os.MkdirAll(filepath.Join(dir, ".gemini"), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, ".gemini", "settings.json"), []byte(cfg), 0o600); err != nil {
			t.Fatal(err)
		}
		// One fake model for the CLI and the agent: the turns come in order.
		fake.Reply(fakegemini.Call("mcp_gemini_gemini_consult", map[string]any{"question": "How should I guard a shared map?"}))
		fake.Reply(fakegemini.Text("Guard the map with a sync.Mutex."))
		fake.Reply(fakegemini.Text("All done: Gemini answered."))
		cmd := exec.CommandContext(ctx, "node", geminiCLI, "-p", "ask gemini", "--approval-mode", "yolo")
		cmd.Dir, cmd.Env = dir, s.env
		out, err := cmd.CombinedOutput()
		if err != nil || !strings.Contains(string(out), "All done: Gemini answered.") {
			t.Fatalf("gemini -p: %v\n%s", err, out)
		}
		var got []string
		for _, r := range fake.Requests() {
			for _, fr := range r.FunctionResponses() {
				b, _ := json.Marshal(fr.Response)
				got = append(got, string(b))
			}
		}
		if !strings.Contains(strings.Join(got, "\n"), "Guard the map with a sync.Mutex.") {
			t.Fatalf("the CLI's model did not get Gemini's answer: %q", got)
		}
	})

	t.Run("ServerByHandWithAgent", func(t *testing.T) {
		doc := section(t, filepath.Join(root, "docs", "a2a-bridge.md"), "## Running it")
		start := blockWith(t, doc, "sh", "CODER_AGENT_PORT=41242")
		if !strings.Contains(doc, "--agent http://127.0.0.1:41242") {
			t.Fatal("docs/a2a-bridge.md no longer says how to attach the bridge to that server")
		}
		port := fmt.Sprint(freePort(t))
		dir := project("by-hand")
		script := filepath.Join(s.root, "by-hand.sh")
		if err := os.WriteFile(script, []byte("cd "+dir+"\n"+strings.ReplaceAll(start, "41242", port)), 0o600); err != nil {
			t.Fatal(err)
		}
		target := s.window(t, "by-hand", dir, "bash "+script)
		waitFor(t, 60*time.Second, "the server started by hand to listen", func() bool {
			c, err := net.DialTimeout("tcp", "127.0.0.1:"+port, time.Second)
			if err == nil {
				c.Close()
			}
			return err == nil
		}, func() string { return s.screen(target) })
		defer func() { _, _ = s.tmux("kill-window", "-t", target) }()
		fake.Reply(fakegemini.Text("Answered by hand."))
		cmd := exec.CommandContext(ctx, filepath.Join(s.home, "go", "bin", "gemini-a2a-mcp"), "--agent", "http://127.0.0.1:"+port)
		cmd.Dir, cmd.Env = dir, s.env
		cmd.Stdin = strings.NewReader(strings.Join([]string{
			`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"sh","version":"1"}}}`,
			`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
			`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"gemini_consult","arguments":{"question":"ready?"}}}`,
		}, "\n") + "\n")
		out, err := cmd.Output()
		if err != nil || !strings.Contains(string(out), "Answered by hand.") {
			t.Fatalf("gemini-a2a-mcp --agent: %v\n%s", err, out)
		}
	})

	t.Run("NeovimAgentPanel", func(t *testing.T) {
		sec := section(t, filepath.Join(root, "plugins", "nvim", "README.md"), "### Plain packages")
		init := regexp.MustCompile("in `init.lua`: `([^`]+)`").FindStringSubmatch(sec)
		if init == nil {
			t.Fatalf("the Neovim README no longer names the init.lua line:\n%s", sec)
		}
		s.shell(t, "nvim-install", cloneLine(t, block(t, sec, "sh")), 5*time.Minute)
		initFile := filepath.Join(s.home, ".config", "nvim", "init.lua")
		if err := os.MkdirAll(filepath.Dir(initFile), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(initFile, []byte(init[1]+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		fake.Reply(fakegemini.Text("Hello from the agent panel."))
		ws := project("nvim-project")
		target := s.window(t, "nvim", ws, "nvim")
		show := func() string { return s.screen(target) }
		waitFor(t, 30*time.Second, "Neovim to start", func() bool { return strings.Contains(s.screen(target), "~") }, show)
		if out, err := s.tmux("send-keys", "-t", target, "Escape", ":GeminiAgent say hello", "Enter"); err != nil {
			t.Fatalf("send-keys: %v: %s", err, out)
		}
		waitFor(t, 2*time.Minute, "the agent's answer in the panel", func() bool {
			return strings.Contains(s.screen(target), "Hello from the agent panel.")
		}, show)
		if out, err := s.tmux("send-keys", "-t", target, "Escape", ":qa!", "Enter"); err != nil {
			t.Fatalf("send-keys: %v: %s", err, out)
		}
		waitFor(t, 30*time.Second, "Neovim to quit and its sidecar to stop", func() bool {
			return len(s.sidecarsRunning()) == 0
		}, show)
	})
}
