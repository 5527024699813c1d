package testkit

import (
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// ToolsClient is an agent's MCP client of `gemini-ide-companion tools`,
// the stdio server that forwards the editor tools to the editor's
// companion (docs/editor-tools.md), as the editor suites drive it.
type ToolsClient struct {
	Session *mcp.ClientSession
}

// StartTools starts `gemini-ide-companion tools` in dir with env (which
// should carry the GEMINI_CLI_IDE_* variables of an editor terminal) and
// connects to it over its stdin and stdout, as an agent does. It stops
// when the test ends.
func StartTools(t testing.TB, dir string, env []string) *ToolsClient {
	t.Helper()
	cmd := exec.Command(Binary(t), "tools")
	cmd.Dir = dir
	cmd.Env = env
	client := mcp.NewClient(&mcp.Implementation{Name: "editor-suite-agent", Version: "1"}, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatalf("connect to gemini-ide-companion tools: %v", err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	return &ToolsClient{Session: cs}
}

// Call calls tool with args and returns the text the model reads and
// whether the call failed.
func (c *ToolsClient) Call(t testing.TB, tool string, args map[string]any) (string, bool) {
	t.Helper()
	a := AwaitAnswer(t, c.Start(tool, args), func() string { return fmt.Sprintf("(%s %v)", tool, args) })
	return a.Text, a.IsErr
}

// MustCall calls tool and decodes its JSON answer into result; a failed
// call fails the test, with more from more().
func (c *ToolsClient) MustCall(t testing.TB, tool string, args map[string]any, result any, more func() string) {
	t.Helper()
	text, isErr := c.Call(t, tool, args)
	if isErr {
		t.Fatalf("%s %v failed: %s\n%s", tool, args, text, more())
	}
	if result != nil {
		if err := json.Unmarshal([]byte(text), result); err != nil {
			t.Fatalf("%s %v: %q: %v", tool, args, text, err)
		}
	}
}

// EditorEnv is env with the editor terminal's variables set to vars (and
// those vars absent from it cleared), as a CLI started in that terminal
// passes them to the servers it starts.
func EditorEnv(env []string, vars map[string]string) []string {
	set := []string{"GEMINI_CLI_IDE_SERVER_PORT=", "GEMINI_CLI_IDE_AUTH_TOKEN=", "GEMINI_CLI_IDE_WORKSPACE_PATH=", "GEMINI_CLI_IDE_PID="}
	for k, v := range vars {
		set = append(set, k+"="+v)
	}
	return WithEnv(env, set...)
}

// ToolAnswer is what an agent got from a tool call: the text the model
// reads and whether the call failed, or the client's own error.
type ToolAnswer struct {
	Text  string
	IsErr bool
	Err   error
}

// Start calls tool with args on a goroutine of its own, as an agent that
// waits for the answer does, and returns the channel the answer comes on
// (within 30 s, or the client's timeout error). An answer that is not
// one text, as every editor tool's is, comes as an error.
func (c *ToolsClient) Start(tool string, args map[string]any) <-chan ToolAnswer {
	ch := make(chan ToolAnswer, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		res, err := c.Session.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
		if err != nil {
			ch <- ToolAnswer{Err: err}
			return
		}
		if len(res.Content) != 1 {
			ch <- ToolAnswer{Err: fmt.Errorf("%s %v: %d contents, want 1", tool, args, len(res.Content))}
			return
		}
		text, ok := res.Content[0].(*mcp.TextContent)
		if !ok {
			ch <- ToolAnswer{Err: fmt.Errorf("%s %v: content %T, want text", tool, args, res.Content[0])}
			return
		}
		ch <- ToolAnswer{Text: text.Text, IsErr: res.IsError}
	}()
	return ch
}

// AwaitAnswer returns the answer that comes on ch (from Start); a client
// error, or no answer within 40 s, fails the test, with more from more().
func AwaitAnswer(t testing.TB, ch <-chan ToolAnswer, more func() string) ToolAnswer {
	t.Helper()
	select {
	case a := <-ch:
		if a.Err != nil {
			t.Fatalf("the tool call failed: %v\n%s", a.Err, more())
		}
		return a
	case <-time.After(40 * time.Second):
		t.Fatalf("the tool call never answered\n%s", more())
	}
	return ToolAnswer{}
}
