// Package a2a_test drives gemini-a2a-mcp as a real MCP client would, against
// Gemini CLI's real A2A server (0.25.2, installed as users install it: npm
// install -g into npm-global here, found on PATH) whose model is the fake
// Gemini API on 127.0.0.1.
package a2a_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/gemini-ide-companion/gemini-ide-companion/a2a/launch"
	"github.com/gemini-ide-companion/gemini-ide-companion/tests/testkit"
)

var bridgeBin string

func here() string {
	_, f, _, _ := runtime.Caller(0)
	return filepath.Dir(f)
}

func TestMain(m *testing.M) { testkit.RunWithCommand(m, "../../cmd/gemini-a2a-mcp", &bridgeBin) }

// needServer skips (or, under CI, fails) when the A2A server, installed
// as users install it, or node is missing; it returns the server's bin
// folder.
func needServer(t testing.TB) string {
	t.Helper()
	return testkit.A2AServerBin(t)
}

// sandbox is a user's setup: a private HOME and workspace wired to a fake
// Gemini API, and a PATH on which the A2A server (npm install -g) and the
// bridge (go install) are found.
type sandbox struct{ *testkit.AgentSandbox }

func newSandbox(t testing.TB) *sandbox {
	t.Helper()
	return &sandbox{testkit.NewAgentSandbox(t, filepath.Dir(bridgeBin))}
}

// startAgent starts Gemini CLI's A2A server for the sandbox's workspace,
// as the bridge does by default: found on PATH.
func (sb *sandbox) startAgent(t testing.TB) *launch.Server {
	t.Helper()
	return sb.StartAgent(t, sb.Env(), 90*time.Second, &tlog{t: t})
}

// tlog writes the server's output to the test log while the test runs.
type tlog struct {
	mu   sync.Mutex
	t    testing.TB
	done bool
}

func (l *tlog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if os.Getenv("A2A_TEST_VERBOSE") != "" && !l.done {
		l.t.Log(strings.TrimRight(string(p), "\n"))
	}
	return len(p), nil
}

// bridge is one gemini-a2a-mcp process with an MCP client session on it.
type bridge struct {
	cs       *mcp.ClientSession
	cmd      *exec.Cmd
	mu       sync.Mutex
	stderr   []string
	progress []string
}

func startBridge(t testing.TB, env []string, args ...string) *bridge {
	t.Helper()
	b := &bridge{}
	cmd := exec.Command(bridgeBin, args...)
	cmd.Env = append(os.Environ(), env...)
	pr, pw := io.Pipe()
	cmd.Stderr = pw
	go func() {
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			b.mu.Lock()
			b.stderr = append(b.stderr, sc.Text())
			b.mu.Unlock()
		}
	}()
	b.cmd = cmd
	client := mcp.NewClient(&mcp.Implementation{Name: "a2a-test", Version: "1"}, &mcp.ClientOptions{
		ProgressNotificationHandler: func(_ context.Context, r *mcp.ProgressNotificationClientRequest) {
			b.mu.Lock()
			b.progress = append(b.progress, r.Params.Message)
			b.mu.Unlock()
		},
	})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatalf("connect to gemini-a2a-mcp: %v", err)
	}
	b.cs = cs
	t.Cleanup(func() {
		_ = cs.Close()
		_ = pw.Close()
	})
	return b
}

// call calls a tool and returns its structured result, and whether it was
// an error (with the error text).
func (b *bridge) call(t testing.TB, name string, args map[string]any) (map[string]any, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	res, err := b.cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: protocol error: %v", name, err)
	}
	var text strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			text.WriteString(tc.Text)
		}
	}
	if res.IsError {
		return nil, text.String()
	}
	out := map[string]any{}
	raw, _ := json.Marshal(res.StructuredContent)
	_ = json.Unmarshal(raw, &out)
	return out, ""
}

// ok calls a tool that must succeed.
// start starts a supervised task and returns its session id.
func (b *bridge) start(t testing.TB, task string) string {
	t.Helper()
	out := b.ok(t, "gemini_task_start", map[string]any{"task": task})
	sid, _ := out["session_id"].(string)
	if sid == "" {
		t.Fatalf("no session_id in %v", out)
	}
	return sid
}

func (b *bridge) ok(t testing.TB, name string, args map[string]any) map[string]any {
	t.Helper()
	out, errText := b.call(t, name, args)
	if errText != "" {
		t.Fatalf("%s(%v) failed: %s", name, args, errText)
	}
	return out
}

// fails calls a tool that must fail with a message containing want.
func (b *bridge) fails(t testing.TB, name string, args map[string]any, want string) {
	t.Helper()
	out, errText := b.call(t, name, args)
	if errText == "" {
		t.Fatalf("%s(%v) succeeded (%v); want an error about %q", name, args, out, want)
	}
	if !strings.Contains(strings.ToLower(errText), strings.ToLower(want)) {
		t.Fatalf("%s(%v) error %q; want it to mention %q", name, args, errText, want)
	}
}

// waitStatus polls gemini_status until the session's status is one of want,
// and returns the last status with all progress seen.
func (b *bridge) waitStatus(t testing.TB, sid string, want ...string) (map[string]any, []string) {
	t.Helper()
	var progress []string
	deadline := time.Now().Add(2 * time.Minute)
	for {
		st := b.ok(t, "gemini_status", map[string]any{"session_id": sid, "wait_s": 5})
		if ps, ok := st["progress"].([]any); ok {
			for _, p := range ps {
				m, _ := p.(map[string]any)
				progress = append(progress, fmt.Sprint(m["kind"], ": ", m["text"]))
			}
		}
		for _, w := range want {
			if st["status"] == w {
				return st, progress
			}
		}
		if s := st["status"]; s != "running" {
			t.Fatalf("session %s is %v (%v); want %v; progress %q", sid, s, st["error"], want, progress)
		}
		if time.Now().After(deadline) {
			t.Fatalf("session %s still %v after 2m; want %v; progress %q", sid, st["status"], want, progress)
		}
	}
}

func osWriteFile(path, content string) error { return os.WriteFile(path, []byte(content), 0o644) }
