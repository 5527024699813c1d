package agentpanel

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gemini-ide-companion/gemini-ide-companion/tests/testkit"
	"github.com/gemini-ide-companion/gemini-ide-companion/tests/tmuxdrive"
)

// The question the Neovim panel asks for each kind of confirmation, as the
// sidecar sends them (agent/event tool calls): one line that says what will
// happen, an MCP call with its arguments, a web fetch with its address.
func TestNvimPanelAsksOneClearLine(t *testing.T) {
	nvimBin, err := exec.LookPath("nvim")
	if err != nil {
		tmuxdrive.Missing(t, "nvim is not installed (apt-get install neovim)")
	}
	dir := t.TempDir()
	out := filepath.Join(dir, "out.txt")
	script := filepath.Join(dir, "describe.lua")
	lua := `
local d = require("gemini_companion.agent").describe
local lines = {
  d({ toolName = "run_shell_command", confirmationRequest = { executeDetails = { command = "make test" } } }),
  d({ toolName = "append_line", inputParameters = { text = "hi" },
      confirmationRequest = { mcpDetails = { serverName = "notes", toolName = "append_line" } } }),
  d({ toolName = "append_line", inputParameters = { text = string.rep("x", 400) },
      confirmationRequest = { mcpDetails = { serverName = "notes", toolName = "append_line" } } }),
  d({ toolName = "web_fetch", confirmationRequest = { genericDetails = {
      description = "Confirm Web Fetch\nsummarize http://127.0.0.1:9/page", urls = { "http://127.0.0.1:9/page" } } } }),
  d({ toolName = "activate_skill", confirmationRequest = { genericDetails = { description = "Activate skill\nreview" } } }),
}
vim.fn.writefile(lines, ` + luaString(out) + `)
`
	if err := os.WriteFile(script, []byte(lua), 0o600); err != nil {
		t.Fatal(err)
	}
	plugin := filepath.Join(testkit.ModuleRoot(t), "plugins", "nvim")
	cmd := exec.Command(nvimBin, "--headless", "--clean", "--cmd", "set rtp^="+plugin, "-c", "luafile "+script, "-c", "qa!")
	cmd.Env = append(os.Environ(), "HOME="+dir, "XDG_STATE_HOME="+dir, "XDG_DATA_HOME="+dir)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("nvim: %v\n%s", err, b)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatalf("nvim wrote nothing: %v", err)
	}
	got := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	want := []string{
		"run `make test`",
		`call append_line of MCP server notes with {"text": "hi"}`,
		"",
		"fetch http://127.0.0.1:9/page",
		"Activate skill — review",
	}
	if len(got) != len(want) {
		t.Fatalf("got %d lines %q; want %d", len(got), got, len(want))
	}
	for i := range want {
		if i == 2 {
			if !strings.HasPrefix(got[i], `call append_line of MCP server notes with {"text": "xxx`) || !strings.HasSuffix(got[i], "…") || len([]rune(got[i])) > 260 {
				t.Errorf("long arguments shown as %q; want them cut to a line", got[i])
			}
			continue
		}
		if got[i] != want[i] {
			t.Errorf("line %d = %q; want %q", i, got[i], want[i])
		}
	}
}

func luaString(s string) string {
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(s) + `"`
}
