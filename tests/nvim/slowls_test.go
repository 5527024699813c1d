package nvim

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gemini-ide-companion/gemini-ide-companion/tests/testkit"
)

// A language server that is slow to answer, and what the user sees while an
// agent waits for it: Neovim goes on taking typed keys.

// slowLSEnv names the log file of the slow language server; set only in the
// environment vim.lsp starts this test binary with.
const slowLSEnv = "GIC_NVIM_SLOWLS_LOG"

// slowLSMain runs this test binary as testkit's slow language server
// when slowLSEnv is set.
func slowLSMain() { testkit.SlowLSMain(slowLSEnv) }

// slowLSInit starts the slow language server for text files, as a user
// configures a server with vim.lsp on Neovim 0.7.
const slowLSInit = `
vim.api.nvim_create_autocmd("FileType", { pattern = "text", callback = function(args)
  _G.slowls = _G.slowls or vim.lsp.start_client({ name = "slowls", cmd = { %q },
    cmd_env = { %s = %q }, root_dir = vim.fn.getcwd() })
  vim.lsp.buf_attach_client(args.buf, _G.slowls)
end })
`

func TestTypingWhileAnAgentWaitsForASlowLanguageServer(t *testing.T) {
	sb := testkit.NewSandbox(t)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	logPath := filepath.Join(sb.TmpDir, "slowls.log")
	notes := sb.WriteFile(t, "notes.txt", "alpha\nbeta\ngamma\n")
	nv := startNvim(t, sb, Options{InitLua: fmt.Sprintf(slowLSInit, exe, slowLSEnv, logPath)})
	nv.WaitRunning(t)
	nv.Cmd(t, "edit notes.txt")
	nv.WaitLua(t, "slowls to attach to notes.txt", `
local c = _G.slowls and vim.lsp.get_client_by_id(_G.slowls)
return c ~= nil and c.initialized == true and vim.lsp.buf_is_attached(0, _G.slowls)`, waitTimeout)
	var vars map[string]string
	nv.LuaJSON(t, &vars, `return require("gemini_companion").terminal_env()`)
	tc := testkit.StartTools(t, sb.Workspace, testkit.EditorEnv(sb.Env(), vars))

	// getDefinition as an agent calls it; the answer comes on the channel.
	ask := func(line int) <-chan testkit.ToolAnswer {
		return tc.Start("getDefinition", map[string]any{"path": notes, "line": line, "character": 1})
	}
	logged := func(t *testing.T, what string) {
		t.Helper()
		testkit.WaitFileHas(t, logPath, what, waitTimeout, nv.diagnostics)
	}
	typed := func(t *testing.T, keys, line1 string, pending <-chan testkit.ToolAnswer) {
		t.Helper()
		nv.Input(t, keys)
		nv.WaitLua(t, "the typed text in the buffer", `return vim.api.nvim_buf_get_lines(0, 0, 1, false)[1] == ...`, waitTimeout, line1)
		if pending != nil {
			select {
			case a := <-pending:
				t.Fatalf("the tool answered (%+v) before the typed text landed", a)
			default:
			}
		}
	}
	receive := func(t *testing.T, ch <-chan testkit.ToolAnswer) testkit.ToolAnswer {
		t.Helper()
		return testkit.AwaitAnswer(t, ch, nv.diagnostics)
	}

	t.Run("the answer comes after the user's typing", func(t *testing.T) {
		// The server answers once the document changed: only when Neovim
		// took the keys typed while the agent waited.
		ch := ask(1)
		logged(t, "definition 1 ")
		typed(t, "ggA one<Esc>", "alpha one", nil)
		a := receive(t, ch)
		testkit.CheckSlowLSLocation(t, a, notes, nv.diagnostics)
	})

	t.Run("the deadline passes while the user types", func(t *testing.T) {
		ch := ask(2)
		logged(t, "definition 2 ")
		typed(t, "ggA two<Esc>", "alpha one two", ch)
		a := receive(t, ch)
		testkit.CheckDeadlineError(t, a, "slowls")
		// The plugin cancelled the request it gave up on.
		b, _ := os.ReadFile(logPath)
		var id string
		for _, line := range strings.Split(string(b), "\n") {
			if f := strings.Fields(line); len(f) == 3 && f[0] == "definition" && f[1] == "2" {
				id = f[2]
			}
		}
		logged(t, "cancel "+id+"\n")
	})
}
