//go:build !windows

package a2a_test

import (
	"errors"
	"net"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gemini-ide-companion/gemini-ide-companion/tests/fakegemini"
)

var startedLine = regexp.MustCompile(`A2A server pid (\d+) on http://127\.0\.0\.1:(\d+)`)

// TestBridgeStartsServer: without --agent the bridge starts Gemini CLI's A2A
// server for --dir, with --server-env given to it alone, listening on
// 127.0.0.1 only, and stops it when its stdin closes.
func TestBridgeStartsServer(t *testing.T) {
	t.Parallel()
	needServer(t)
	sb := newSandbox(t)
	var env []string
	var key string
	for _, kv := range sb.env() {
		if strings.HasPrefix(kv, "GEMINI_API_KEY=") {
			key = kv
			continue
		}
		env = append(env, kv)
	}
	b := startBridge(t, append(env, "GEMINI_API_KEY="), "--server-command", "node "+serverScript(), "--dir", sb.ws, "--server-env", key)

	sb.fake.Reply(fakegemini.Text("Ready."))
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
