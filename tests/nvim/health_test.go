package nvim

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gemini-ide-companion/gemini-ide-companion/tests/testkit"
)

// checkhealth runs :checkhealth gemini_companion and returns the report.
func checkhealth(t testing.TB, nv *Nvim) string {
	t.Helper()
	nv.Cmd(t, "checkhealth gemini_companion")
	var text string
	nv.LuaJSON(t, &text, `return table.concat(vim.api.nvim_buf_get_lines(0, 0, -1, false), "\n")`)
	nv.Cmd(t, "tabclose")
	return text
}

// :checkhealth gemini_companion reports the binary, its version, the
// running sidecar, its discovery file and its port, and for the agent panel
// node, the A2A server (installed as users do) with its version and the
// secret folder; a stopped sidecar is a warning with advice.
func TestCheckhealth(t *testing.T) {
	sb := testkit.NewSandbox(t)
	nv := startNvim(t, sb, Options{Env: testkit.WithEnv(sb.Env(), "HOME="+sb.Home, testkit.PathWith(testkit.A2AServerBin(t)))})
	nv.WaitRunning(t)
	path, f := sb.WaitDiscovery(t, waitTimeout)
	report := checkhealth(t, nv)
	for _, want := range []string{
		"OK", "found " + testkit.Binary(t),
		"version: gemini-ide-companion ",
		"discovery file present: " + path,
		"port " + itoa(f.Port) + " answers",
		"connected Gemini CLI sessions: 0",
		// The editor link: protocol 2, the sidecar's policy.
		"it speaks the editor link with Content-Length framing (--framing=lsp)",
		"editor link: protocol 2, Content-Length framing",
		"restart policy (from the sidecar): at most 5 restarts within 60 s",
		// doctor's findings, about the CLI :GeminiCli would start.
		"a gemini started here picks Neovim on port " + itoa(f.Port),
		"MCP initialize on 127.0.0.1:" + itoa(f.Port) + " with the file's token succeeded",
		"a gemini started by :GeminiCli here would connect",
		// The agent panel.
		"agent panel (:GeminiAgent)",
		"node: ",
		"A2A server: ",
		"(found), version " + testkit.A2AServerVersion + " (the version the panel is tested with)",
		"secret file: ",
		":GeminiAgent can start Gemini CLI's A2A server here",
	} {
		if !strings.Contains(report, want) {
			t.Errorf("the health report does not say %q:\n%s", want, report)
		}
	}
	if strings.Contains(report, "ERROR") {
		t.Errorf("errors in a healthy setup:\n%s", report)
	}

	nv.Cmd(t, "GeminiStop")
	nv.WaitLua(t, "the sidecar to stop", `return require("gemini_companion.sidecar").state.status == "stopped"`, waitTimeout)
	report = checkhealth(t, nv)
	if !strings.Contains(report, "the sidecar is stopped") || !strings.Contains(report, ":GeminiStart") {
		t.Errorf("a stopped sidecar is not reported with advice:\n%s", report)
	}
	if !strings.Contains(report, "would not connect") || !strings.Contains(report, "start one first") {
		t.Errorf("doctor does not say that a CLI would not connect without the sidecar:\n%s", report)
	}
}

// Without the A2A server installed, :checkhealth says the agent panel
// cannot start it, how to install it and how to set its command; with the
// command set in the panel's setup(), it checks that command instead.
func TestCheckhealthAgentPanelWithoutServer(t *testing.T) {
	sb := testkit.NewSandbox(t)
	var keep []string
	for _, dir := range filepath.SplitList(os.Getenv("PATH")) {
		if _, err := os.Stat(filepath.Join(dir, "gemini-cli-a2a-server")); err != nil {
			keep = append(keep, dir)
		}
	}
	nv := startNvim(t, sb, Options{Env: testkit.WithEnv(sb.Env(), "HOME="+sb.Home, "PATH="+strings.Join(keep, string(os.PathListSeparator)))})
	nv.WaitRunning(t)
	report := checkhealth(t, nv)
	for _, want := range []string{
		"A2A server: Gemini CLI's A2A server is not found",
		"npm install -g @google/gemini-cli-a2a-server",
		`require("gemini_companion.agent").setup({ command =`,
		":GeminiAgent cannot start Gemini CLI's A2A server here",
	} {
		if !strings.Contains(report, want) {
			t.Errorf("the health report does not say %q:\n%s", want, report)
		}
	}

	script := filepath.Join(testkit.A2AServerBin(t), "..", "lib", "node_modules", "@google", "gemini-cli-a2a-server", "dist", "a2a-server.mjs")
	nv.Lua(t, `require("gemini_companion.agent").setup({ command = { "node", ... } })`, script)
	report = checkhealth(t, nv)
	if !strings.Contains(report, "(set in the plugin), version "+testkit.A2AServerVersion) || !strings.Contains(report, ":GeminiAgent can start") {
		t.Errorf("the server command set in setup() is not the one checked:\n%s", report)
	}
}

// :help finds the plugin's help by its tags (after :helptags, as plugin
// managers run it).
func TestHelpTags(t *testing.T) {
	sb := testkit.NewSandbox(t)
	root := filepath.Join(sb.TmpDir, "helpcopy")
	if err := os.MkdirAll(filepath.Join(root, "doc"), 0o755); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(testkit.PluginDir(t, "nvim"), "doc", "gemini-companion.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "doc", "gemini-companion.txt"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	nv := startNvim(t, sb, Options{Setup: map[string]any{"auto_start": false}})
	nv.Cmd(t, "helptags "+filepath.Join(root, "doc"))
	nv.Lua(t, `vim.opt.rtp:append(...)`, root)
	for _, tag := range []string{"gemini-companion", ":GeminiSend", ":GeminiFocus", "<Plug>(GeminiFocus)", "gemini-companion-reload", "<Plug>(GeminiAccept)", "gemini-companion-options", "gemini_companion.statusline()"} {
		nv.Cmd(t, "help "+tag)
		var line string
		nv.LuaJSON(t, &line, `return vim.fn.expand("%:t") .. ":" .. vim.api.nvim_get_current_line()`)
		if !strings.HasPrefix(line, "gemini-companion.txt:") || !strings.Contains(line, "*"+tag+"*") {
			t.Errorf(":help %s lands on %q", tag, line)
		}
		nv.Cmd(t, "helpclose")
	}
}
