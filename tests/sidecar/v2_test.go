package sidecar

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gemini-ide-companion/gemini-ide-companion/link"
	"github.com/gemini-ide-companion/gemini-ide-companion/link/protocol"
	"github.com/gemini-ide-companion/gemini-ide-companion/tests/testkit"
)

func v2Params(sb *testkit.Sandbox, caps map[string]bool) map[string]any {
	return map[string]any{
		"protocolVersion": 2,
		"ide":             map[string]string{"name": "vim", "displayName": "Vim", "restartCommand": ":GeminiRestart"},
		"capabilities":    caps,
	}
}

// A protocol-2 plugin on the lsp framing gets the capabilities, the policy
// with its own restart command in the texts, and the terminal environment
// on request; a CLI connecting shows in a status line it can show as is.
func TestProtocol2HandshakeOverLSPFraming(t *testing.T) {
	sb := testkit.NewSandbox(t)
	ed := testkit.StartEditor(t, sb, testkit.EditorOptions{Framing: link.LSP})
	res := ed.Initialize(t, sb, v2Params(sb, map[string]bool{"diffStates": true, "terminal": true}))
	if res.ProtocolVersion != 2 || res.Capabilities == nil || res.Policy == nil {
		t.Fatalf("protocol %d capabilities %v policy %v: want protocol 2 with both", res.ProtocolVersion, res.Capabilities, res.Policy)
	}
	if c := *res.Capabilities; !c.DiffStates || !c.EnvChanged || !c.TerminalEnv || !c.StatusText {
		t.Fatalf("capabilities %+v", c)
	}
	p := res.Policy
	if len(p.Restart.DelaysMs) == 0 || p.Restart.MaxRestarts < 1 || p.Restart.WindowMs < 1000 {
		t.Fatalf("restart policy %+v", p.Restart)
	}
	if p.Limits.MaxSelectedTextUtf16 != 16384 || p.Limits.MaxSelectionBytes < 4*16384 || p.Limits.MaxOpenFiles != 10 {
		t.Fatalf("limits %+v", p.Limits)
	}
	if !strings.Contains(p.Messages.GaveUp, ":GeminiRestart") || !strings.Contains(p.Messages.Restarting, "{reason}") {
		t.Fatalf("messages %+v", p.Messages)
	}

	var env protocol.TerminalEnvResult
	if err := ed.Call(wait, "terminal/env", nil, &env); err != nil {
		t.Fatalf("terminal/env: %v", err)
	}
	if env.DiscoveryFile != res.DiscoveryFile || env.Env["GEMINI_CLI_IDE_AUTH_TOKEN"] != res.AuthToken || env.Env["GEMINI_CLI_IDE_SERVER_PORT"] == "" {
		t.Fatalf("terminal/env %+v does not match initialize %+v", env, res)
	}

	// A folder change: the notification and the next terminal/env agree.
	other := filepath.Join(sb.Home, "other")
	if err := os.Mkdir(other, 0o700); err != nil {
		t.Fatal(err)
	}
	ed.Notify(t, "workspace/foldersChanged", map[string]any{"workspaceFolders": []string{other}})
	raw := ed.WaitFor(t, "workspace/envChanged", wait, nil)
	var changed protocol.TerminalEnvResult
	if err := json.Unmarshal(raw, &changed); err != nil || changed.Env["GEMINI_CLI_IDE_WORKSPACE_PATH"] != other {
		t.Fatalf("envChanged %s (%v)", raw, err)
	}
	if err := ed.Call(wait, "terminal/env", nil, &env); err != nil || env.Env["GEMINI_CLI_IDE_WORKSPACE_PATH"] != other {
		t.Fatalf("terminal/env after the change: %+v %v", env, err)
	}

	testkit.ConnectCLI(t, res.Port, res.AuthToken)
	raw = ed.WaitFor(t, "status", wait, func(m json.RawMessage) bool {
		var st protocol.StatusParams
		return json.Unmarshal(m, &st) == nil && st.ConnectedClients == 1
	})
	var st protocol.StatusParams
	_ = json.Unmarshal(raw, &st)
	if st.Text != "Gemini: 1 CLI connected" {
		t.Fatalf("status text %q", st.Text)
	}
}

// A protocol-1 plugin gets exactly what it got before: no policy, and
// requests it never knew about still answer sensibly.
func TestProtocol1PluginsKeepWorking(t *testing.T) {
	sb := testkit.NewSandbox(t)
	ed := testkit.StartEditor(t, sb, testkit.EditorOptions{})
	res := ed.Initialize(t, sb, nil)
	if res.ProtocolVersion != 1 || res.Policy != nil || res.Capabilities != nil {
		t.Fatalf("protocol-1 initialize got protocol %d policy %v capabilities %v", res.ProtocolVersion, res.Policy, res.Capabilities)
	}
	err := ed.Call(wait, "no/such", map[string]any{}, nil)
	var rpcErr *link.Error
	if !asRPC(err, &rpcErr) || rpcErr.Code != link.CodeMethodNotFound {
		t.Fatalf("unknown method: %v, want -32601", err)
	}
}

func TestRequestsBeforeInitializeAreRefused(t *testing.T) {
	sb := testkit.NewSandbox(t)
	ed := testkit.StartEditor(t, sb, testkit.EditorOptions{Framing: link.LSP})
	for _, m := range []string{"terminal/env", "status/get", "no/such"} {
		err := ed.Call(wait, m, nil, nil)
		var rpcErr *link.Error
		if !asRPC(err, &rpcErr) || rpcErr.Code != link.CodeInvalidRequest || !strings.Contains(rpcErr.Message, "not initialized") {
			t.Fatalf("%s before initialize: %v, want -32600 not initialized", m, err)
		}
	}
	ed.Initialize(t, sb, v2Params(sb, nil))
}

// An editor that cannot show diffs gets a clear tool error in the CLI
// rather than a proposal nobody sees.
func TestEditorWithoutDiffsRefusesOpenDiffClearly(t *testing.T) {
	sb := testkit.NewSandbox(t)
	ed := testkit.StartEditor(t, sb, testkit.EditorOptions{Framing: link.LSP})
	res := ed.Initialize(t, sb, v2Params(sb, map[string]bool{"diff": false}))
	cli := testkit.ConnectCLI(t, res.Port, res.AuthToken)
	out, err := cli.OpenDiff(t.Context(), filepath.Join(sb.Workspace, "a.txt"), "new\n")
	if err != nil {
		t.Fatal(err)
	}
	if !out.IsError || !strings.Contains(toolText(out), "Vim does not show diffs") {
		t.Fatalf("openDiff to an editor without diffs: %v %q", out.IsError, toolText(out))
	}
	if n := len(ed.Requests()); n != 0 {
		t.Fatalf("the editor got %d requests", n)
	}
}

func TestUnknownFramingIsAUsageError(t *testing.T) {
	cmd := exec.Command(testkit.Binary(t), "--stdio", "--framing=xml")
	out, err := cmd.CombinedOutput()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 2 || !strings.Contains(string(out), `unknown framing "xml"`) {
		t.Fatalf("--framing=xml: %v %s", err, out)
	}
}
