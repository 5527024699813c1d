//go:build wine && linux

package windows

import (
	"bufio"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gemini-ide-companion/gemini-ide-companion/tests/fakegemini"
	"github.com/gemini-ide-companion/gemini-ide-companion/tests/testkit"
)

// winBridge is the Windows bridge running under Wine, with the A2A server it
// started.
type winBridge struct {
	cmd     *exec.Cmd
	stdin   io.WriteCloser
	stdout  io.Reader
	exited  chan error
	url     string // the server's
	server  string // this test's copy of the server's script
	logFile string
}

// startWinBridge starts the Windows bridge (gemini-a2a-mcp.exe) the way a
// Windows user who installed the server with npm install -g has it:
// gemini-cli-a2a-server.cmd on PATH, which runs node.exe; it returns once
// the bridge said the server started.
func startWinBridge(t *testing.T, w *wine, api *fakegemini.Server) *winBridge {
	t.Helper()
	server := os.Getenv("GIC_WIN_A2A")
	if server == "" {
		t.Fatal("GIC_WIN_A2A (the A2A server's a2a-server.mjs) is not set; run scripts/windows.sh")
	}
	if _, err := os.Stat(w.exe("gemini-a2a-mcp")); err != nil {
		t.Fatalf("the Windows bridge is missing: %v", err)
	}
	ws, wsWin := w.workspace(t)

	// npm install -g on Windows puts this shim in %APPDATA%\npm, on PATH.
	npmDir := filepath.Join(w.driveC(), "tools", "npm")
	if err := os.MkdirAll(npmDir, 0o755); err != nil {
		t.Fatal(err)
	}
	shim := fmt.Sprintf("@\"%s\" \"%s\" %%*\r\n", w.winPath(w.node), w.winPath(server))
	if err := os.WriteFile(filepath.Join(npmDir, "gemini-cli-a2a-server.cmd"), []byte(shim), 0o755); err != nil {
		t.Fatal(err)
	}
	b := &winBridge{server: server, logFile: filepath.Join(t.TempDir(), "bridge.log"), exited: make(chan error, 1)}
	b.cmd = exec.Command("wine", "cmd", "/c", w.winPath(w.exe("gemini-a2a-mcp")),
		"--dir", wsWin, "--log-file", w.winPath(b.logFile),
		"--server-env", "GEMINI_API_KEY=dummy", "--server-env", "GOOGLE_GEMINI_BASE_URL="+api.URL)
	b.cmd.Dir = ws
	b.cmd.Env = append(w.env(api.URL), "WINEPATH="+w.winPath(npmDir))
	var err error
	if b.stdin, err = b.cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	if b.stdout, err = b.cmd.StdoutPipe(); err != nil {
		t.Fatal(err)
	}
	if err := b.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { b.exited <- b.cmd.Wait() }()
	t.Cleanup(func() {
		b.stdin.Close()
		select {
		case <-b.exited:
		case <-time.After(10 * time.Second):
			b.cmd.Process.Kill()
		}
		for _, pid := range serverProcesses(w, server) {
			syscall.Kill(pid, syscall.SIGKILL)
		}
		if t.Failed() {
			data, _ := os.ReadFile(b.logFile)
			t.Logf("bridge log:\n%s", tail(string(data), 4000))
		}
	})

	started := regexp.MustCompile(`A2A server pid \d+ on (http://127\.0\.0\.1:\d+)`)
	if !testkit.Poll(120*time.Second, func() bool {
		data, _ := os.ReadFile(b.logFile)
		if m := started.FindSubmatch(data); m != nil {
			b.url = string(m[1])
			return true
		}
		return false
	}) {
		t.Fatal("the bridge never said the A2A server started")
	}
	return b
}

// TestBridgeStartsAndStopsTheWindowsA2AServer: the Windows bridge
// (gemini-a2a-mcp.exe) starts Gemini CLI's A2A server as a Windows user
// who installed it with npm install -g has it: gemini-cli-a2a-server.cmd
// on PATH, which runs node.exe. The server answers on 127.0.0.1 and only
// to the bridge: a request without the launch's secret gets 401, while the
// bridge's own call goes through, and the secret is kept for the user's
// other programs. When the bridge's client goes away, the bridge stops the
// whole tree, node.exe included, not only the cmd.exe of the shim.
func TestBridgeStartsAndStopsTheWindowsA2AServer(t *testing.T) {
	w := setup(t)
	api := fakegemini.Start(t)
	b := startWinBridge(t, w, api)
	url, server, stdin, stdout, exited, logFile := b.url, b.server, b.stdin, b.stdout, b.exited, b.logFile
	for _, auth := range []string{"", "Bearer wrong"} {
		req, _ := http.NewRequest(http.MethodPost, url+"/", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"message/send","params":{"message":{"kind":"message","messageId":"m1","role":"user","parts":[{"kind":"text","text":"hi"}]}}}`))
		req.Header.Set("Content-Type", "application/json")
		if auth != "" {
			req.Header.Set("Authorization", auth)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatalf("the A2A server at %s does not answer: %v", url, err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusUnauthorized {
			t.Fatalf("a message without the launch's secret (Authorization %q): %s; want 401", auth, resp.Status)
		}
	}
	// The bridge's own call, with the secret, goes through.
	api.Reply(fakegemini.Text("Answered on Windows."))
	fmt.Fprint(stdin, strings.Join([]string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"wine","version":"1"}}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"gemini_consult","arguments":{"question":"ready?"}}}`,
	}, "\n")+"\n")
	answer := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		sc.Buffer(make([]byte, 64<<10), 4<<20)
		for sc.Scan() {
			if strings.Contains(sc.Text(), `"id":2`) {
				answer <- sc.Text()
				break
			}
		}
		_, _ = io.Copy(io.Discard, stdout)
	}()
	select {
	case a := <-answer:
		if !strings.Contains(a, "Answered on Windows.") {
			t.Fatalf("gemini_consult through the bridge: %s", a)
		}
	case <-time.After(120 * time.Second):
		t.Fatal("gemini_consult through the bridge got no answer")
	}
	if data, _ := os.ReadFile(logFile); strings.Contains(string(data), "could not keep the A2A server's secret") {
		t.Fatalf("the secret was not kept for the user's other programs:\n%s", tail(string(data), 2000))
	}
	if len(serverProcesses(w, server)) == 0 {
		t.Fatal("no process runs the A2A server, yet it answers")
	}

	// The client goes away: the bridge ends, and the server's whole tree.
	stdin.Close()
	select {
	case <-exited:
	case <-time.After(30 * time.Second):
		t.Fatal("the bridge did not exit when its stdin closed")
	}
	if !testkit.Poll(20*time.Second, func() bool { return len(serverProcesses(w, server)) == 0 }) {
		t.Fatalf("processes of the A2A server outlived the bridge: %v", serverProcesses(w, server))
	}
	if _, err := http.Get(url + "/.well-known/agent-card.json"); err == nil {
		t.Fatal("the A2A server still answers after the bridge exited")
	}
}

// TestWindowsA2AServerEndsWithAKilledBridge: the Windows bridge killed as
// a crash would (its process ends with no chance to stop anything), the
// server it started (node.exe under the npm shim) ends by itself: it held
// the server's stdin, which the system closes.
func TestWindowsA2AServerEndsWithAKilledBridge(t *testing.T) {
	w := setup(t)
	api := fakegemini.Start(t)
	b := startWinBridge(t, w, api)
	if len(serverProcesses(w, b.server)) == 0 {
		t.Fatal("no process runs the A2A server, yet the bridge said it started")
	}
	bridges := processesWith(w.winPath(w.exe("gemini-a2a-mcp")))
	if len(bridges) == 0 {
		t.Fatal("no process runs the Windows bridge")
	}
	for _, pid := range bridges {
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
	if !testkit.Poll(60*time.Second, func() bool { return len(serverProcesses(w, b.server)) == 0 }) {
		t.Fatalf("the A2A server outlived the killed bridge: %v", serverProcesses(w, b.server))
	}
}

// serverProcesses lists the Linux PIDs of the Wine processes whose command
// line names this test's copy of the A2A server's script by its Windows
// path (node.exe started by the shim): no other process on the machine
// (a Linux A2A server of another test) can match it.
func serverProcesses(w *wine, script string) []int {
	return processesWith(w.winPath(script))
}

// processesWith lists the Linux PIDs of the processes whose command line
// contains name.
func processesWith(name string) []int {
	entries, _ := os.ReadDir("/proc")
	var out []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		data, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err == nil && strings.Contains(string(data), name) {
			// A zombie has no command line; what is left runs.
			out = append(out, pid)
		}
	}
	return out
}
