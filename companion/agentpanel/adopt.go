package agentpanel

import (
	"strings"
	"time"

	"github.com/shirou/gopsutil/v4/process"
)

// isA2AServer reports whether pid is a Gemini CLI A2A server, so that a
// pid handed back by the plugin after a sidecar restart is only adopted
// (and later stopped) when it still is one.
func isA2AServer(pid int) bool {
	pr, err := process.NewProcess(int32(pid))
	if err != nil {
		return false
	}
	cmd, err := pr.Cmdline()
	if err != nil {
		return false
	}
	return strings.Contains(cmd, "a2a-server")
}

// servesPort reports whether pid is an A2A server listening on port: the
// one the plugin's URL names, not some other server of the user's.
func servesPort(pid int, port uint32) bool {
	if !isA2AServer(pid) {
		return false
	}
	pr, err := process.NewProcess(int32(pid))
	if err != nil {
		return false
	}
	conns, err := pr.Connections()
	if err != nil {
		return false
	}
	for _, c := range conns {
		if c.Status == "LISTEN" && c.Laddr.Port == port {
			return true
		}
	}
	return false
}

// stopAdopted stops an adopted server: terminate, then kill after 3 s.
func stopAdopted(pid int) {
	if !isA2AServer(pid) {
		return
	}
	pr, err := process.NewProcess(int32(pid))
	if err != nil {
		return
	}
	_ = pr.Terminate()
	deadline := time.Now().Add(3 * time.Second)
	for time.Now().Before(deadline) {
		if ok, _ := pr.IsRunning(); !ok {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	_ = pr.Kill()
}
