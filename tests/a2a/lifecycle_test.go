//go:build !windows

package a2a_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gemini-ide-companion/gemini-ide-companion/a2a/launch"
	"github.com/gemini-ide-companion/gemini-ide-companion/tests/fakegemini"
	"github.com/gemini-ide-companion/gemini-ide-companion/tests/testkit"
)

var startedLine = regexp.MustCompile(`A2A server pid (\d+) on http://127\.0\.0\.1:(\d+)`)

// TestBridgeStartsServer: without --agent the bridge starts Gemini CLI's A2A
// server for --dir, as a user installed it (npm install -g: its command on
// PATH is a link to the server's script), with --server-env given to it
// alone, listening on 127.0.0.1 only, and stops it when its stdin closes.
func TestBridgeStartsServer(t *testing.T) {
	t.Parallel()
	sb := newSandbox(t)
	var env []string
	var key string
	for _, kv := range sb.Env() {
		if strings.HasPrefix(kv, "GEMINI_API_KEY=") {
			key = kv
			continue
		}
		env = append(env, kv)
	}
	b := startBridge(t, append(env, "GEMINI_API_KEY="), "--dir", sb.Workspace, "--server-env", key)

	sb.Fake.Reply(fakegemini.Text("Ready."))
	out := b.ok(t, "gemini_consult", map[string]any{"question": "ready?"})
	if out["response"] != "Ready." {
		t.Fatalf("consult = %v", out)
	}
	m := startedLine.FindStringSubmatch(b.stderrText())
	if m == nil {
		t.Fatalf("no start line in the bridge's log:\n%s", b.stderrText())
	}
	port := m[2]
	var pid int
	for _, c := range m[1] {
		pid = pid*10 + int(c-'0')
	}
	c, err := net.DialTimeout("tcp", "127.0.0.1:"+port, 2*time.Second)
	if err != nil {
		t.Fatalf("server not on 127.0.0.1:%s: %v", port, err)
	}
	c.Close()
	if ip := nonLoopbackIP(); ip != "" {
		if c, err := net.DialTimeout("tcp", net.JoinHostPort(ip, port), 2*time.Second); err == nil {
			c.Close()
			t.Fatalf("server reachable on %s:%s; want 127.0.0.1 only", ip, port)
		}
	}

	// Closing stdin ends the bridge and the server with it.
	_ = b.cs.Close()
	deadline := time.Now().Add(15 * time.Second)
	for !errors.Is(syscall.Kill(pid, 0), syscall.ESRCH) {
		if time.Now().After(deadline) {
			t.Fatalf("A2A server pid %d still alive after the bridge closed", pid)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestServerEndsWithAKilledBridge: the bridge killed (SIGKILL: it can stop
// nothing) while its server runs an approved command, the server and the
// command end by themselves.
func TestServerEndsWithAKilledBridge(t *testing.T) {
	t.Parallel()
	sb := newSandbox(t)
	b := startBridge(t, sb.Env(), "--dir", sb.Workspace)
	const marker = "sleep 300.743"
	t.Cleanup(func() { testkit.KillWith(marker) })
	sb.Fake.Reply(fakegemini.Call("run_shell_command", map[string]any{"command": marker, "description": "long"}))
	sid := b.start(t, "run the long command")
	b.waitStatus(t, sid, "waiting")
	b.ok(t, "gemini_respond", map[string]any{"session_id": sid, "decision": "approved"})
	waitProgress(t, b, sid, "run_shell_command executing")
	testkit.WaitProcess(t, marker)
	m := startedLine.FindStringSubmatch(b.stderrText())
	if m == nil {
		t.Fatalf("no start line in the bridge's log:\n%s", b.stderrText())
	}
	pid, _ := strconv.Atoi(m[1])
	t.Cleanup(func() { _ = syscall.Kill(pid, syscall.SIGKILL) })
	if err := b.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	testkit.WaitPIDGone(t, "the A2A server of the killed bridge", pid, 30*time.Second)
	testkit.WaitNoProcess(t, marker)
}

// TestBridgeSaysWhyTheServerExited: a server that exits before it listens
// (here: no API key) fails the gemini_* calls with what was run, how it
// ended and what to do, in the bridge's own terms.
func TestBridgeSaysWhyTheServerExited(t *testing.T) {
	t.Parallel()
	sb := newSandbox(t)
	var env []string
	for _, kv := range sb.Env() {
		if !strings.HasPrefix(kv, "GEMINI_API_KEY=") {
			env = append(env, kv)
		}
	}
	b := startBridge(t, append(env, "GEMINI_API_KEY="), "--dir", sb.Workspace)
	_, msg := b.call(t, "gemini_consult", map[string]any{"question": "ready?"})
	for _, want := range []string{"exited before it listened (exit status 1)", "a2a-server.mjs", "GEMINI_API_KEY", "--server-command"} {
		if !strings.Contains(msg, want) {
			t.Fatalf("gemini_consult error %q; want it to mention %q", msg, want)
		}
	}
	if strings.Contains(msg, "<nil>") {
		t.Fatalf("gemini_consult error %q", msg)
	}
}

// TestBridgeAnswersBeforeItsInputCloses: a client that writes its requests
// and closes the bridge's input at once still gets every answer.
func TestBridgeAnswersBeforeItsInputCloses(t *testing.T) {
	t.Parallel()
	sb := newSandbox(t)
	cmd := exec.Command(bridgeBin, "--no-start")
	cmd.Env = append(os.Environ(), sb.Env()...)
	cmd.Stdin = strings.NewReader(strings.Join([]string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"printf","version":"1"}}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`,
		`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"list_agents","arguments":{}}}`,
	}, "\n") + "\n")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("gemini-a2a-mcp: %v", err)
	}
	ids := map[float64]bool{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		var m struct {
			ID     float64         `json:"id"`
			Result json.RawMessage `json:"result"`
		}
		if json.Unmarshal([]byte(line), &m) == nil && len(m.Result) > 0 {
			ids[m.ID] = true
		}
	}
	if !ids[1] || !ids[2] || !ids[3] {
		t.Fatalf("answers for ids %v; want 1, 2 and 3:\n%s", ids, out)
	}
}

func nonLoopbackIP() string {
	addrs, _ := net.InterfaceAddrs()
	for _, a := range addrs {
		if ipn, ok := a.(*net.IPNet); ok && !ipn.IP.IsLoopback() && ipn.IP.To4() != nil {
			return ipn.IP.String()
		}
	}
	return ""
}

// stderrText is what the bridge has logged so far.
func (b *bridge) stderrText() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return strings.Join(b.stderr, "\n")
}

// TestServerFromLocalNodeModules: a server installed in the project
// (npm install, no -g) is found under node_modules/.bin, whose command is a
// link to the script too, and starts.
func TestServerFromLocalNodeModules(t *testing.T) {
	t.Parallel()
	sb := newSandbox(t)
	local := filepath.Join(here(), "node_modules")
	if _, err := os.Stat(filepath.Join(local, ".bin", "gemini-cli-a2a-server")); err != nil {
		t.Fatalf("needs the server in tests/a2a/node_modules (npm ci there): %v", err)
	}
	if err := os.Symlink(local, filepath.Join(sb.Workspace, "node_modules")); err != nil {
		t.Fatal(err)
	}
	env := append(sb.Env(), "PATH="+pathWithout("gemini-cli-a2a-server"))
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	srv, err := launch.Start(ctx, launch.Options{Dir: filepath.Join(sb.Workspace), Env: env, Log: &tlog{t: t}})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Stop()
	c, err := net.DialTimeout("tcp", strings.TrimPrefix(srv.URL, "http://"), 2*time.Second)
	if err != nil {
		t.Fatalf("server not listening at %s: %v", srv.URL, err)
	}
	c.Close()
}

// pathWithout is this process's PATH without the folders that hold name.
func pathWithout(name string) string {
	var keep []string
	for _, dir := range filepath.SplitList(os.Getenv("PATH")) {
		if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
			keep = append(keep, dir)
		}
	}
	return strings.Join(keep, string(os.PathListSeparator))
}

// TestCancelOnAServerStartedByHand: a server the user started (no preload
// of ours: it closes connections idle for 5 s) still has its running command
// stopped by gemini_cancel after the command waited on its approval longer
// than that, because the bridge keeps the turn's connection in use. The
// cancel waits for the command to run: such a server reports it executing
// before it spawns it, and a cancel in between cannot stop it there (only
// the preload of a server we start makes it; TestLinkCancel and the ACP
// tests hold that moment open).
func TestCancelOnAServerStartedByHand(t *testing.T) {
	t.Parallel()
	sb := newSandbox(t)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	// As the docs say: node with the script npm's command links to.
	script, err := filepath.EvalSymlinks(filepath.Join(needServer(t), "gemini-cli-a2a-server"))
	if err != nil {
		t.Fatal(err)
	}
	server := exec.Command("node", script)
	server.Dir = sb.Workspace
	server.Env = append(os.Environ(), append(sb.Env(), fmt.Sprintf("CODER_AGENT_PORT=%d", port), "CODER_AGENT_WORKSPACE_PATH="+sb.Workspace)...)
	if err := server.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = server.Process.Kill(); _ = server.Wait() })
	url := fmt.Sprintf("http://127.0.0.1:%d", port)
	if !testkit.Poll(60*time.Second, func() bool {
		c, err := net.DialTimeout("tcp", strings.TrimPrefix(url, "http://"), time.Second)
		if err == nil {
			c.Close()
		}
		return err == nil
	}) {
		t.Fatal("the server started by hand never listened")
	}
	b := startBridge(t, sb.Env(), "--agent", url)
	command := "sleep 30.731 && echo late > late.txt"
	sb.Fake.Reply(fakegemini.Call("run_shell_command", map[string]any{"command": command, "description": "slow"}))
	sid := b.start(t, "run the slow command")
	b.waitStatus(t, sid, "waiting")
	// Longer than the server leaves an idle connection open.
	time.Sleep(6 * time.Second)
	b.ok(t, "gemini_respond", map[string]any{"session_id": sid, "decision": "approved"})
	waitProgress(t, b, sid, "run_shell_command executing")
	testkit.WaitProcess(t, "sleep 30.731")
	out := b.ok(t, "gemini_cancel", map[string]any{"session_id": sid})
	if !strings.Contains(fmt.Sprint(out["note"]), "stopped `"+command+"`") {
		t.Fatalf("cancel = %v; want it to say the command was stopped", out)
	}
	testkit.WaitNoProcess(t, "sleep 30.731")
	if _, exists := testkit.ReadFile(t, filepath.Join(sb.Workspace, "late.txt")); exists {
		t.Fatal("the cancelled command ran to its end")
	}
}
