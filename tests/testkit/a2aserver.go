package testkit

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/shirou/gopsutil/v4/process"

	"github.com/gemini-ide-companion/gemini-ide-companion/internal/osproc"
)

// A2AServerVersion is the version of Gemini CLI's A2A server the tests run.
const A2AServerVersion = "0.25.2"

// A2AServerBin returns the bin folder of Gemini CLI's A2A server installed
// the way users install it, `npm install -g @google/gemini-cli-a2a-server`,
// into the private prefix tests/a2a/npm-global (scripts/test.sh does it).
// Tests put it on PATH and let the programs under test find the server
// there. Without it (or without node) the test is skipped, or fails under CI.
func A2AServerBin(t testing.TB) string {
	t.Helper()
	prefix := filepath.Join(ModuleRoot(t), "tests", "a2a", "npm-global")
	bin := filepath.Join(prefix, "bin")
	cmd := filepath.Join(bin, "gemini-cli-a2a-server")
	if runtime.GOOS == "windows" {
		bin, cmd = prefix, filepath.Join(prefix, "gemini-cli-a2a-server.cmd")
	}
	_, errNode := exec.LookPath("node")
	_, errBin := os.Stat(cmd)
	if errNode == nil && errBin == nil {
		return bin
	}
	msg := "needs node and Gemini CLI's A2A server installed with npm install -g: run scripts/test.sh a2a, or NPM_CONFIG_PREFIX=tests/a2a/npm-global npm install -g @google/gemini-cli-a2a-server@" + A2AServerVersion
	if os.Getenv("CI") != "" {
		t.Fatal(msg)
	}
	t.Skip(msg)
	return ""
}

// PathWith returns PATH with dirs in front of this process's PATH, as a
// KEY=VALUE entry for an environment.
func PathWith(dirs ...string) string {
	return "PATH=" + strings.Join(append(dirs, os.Getenv("PATH")), string(os.PathListSeparator))
}

// findProcess returns the command line and pid of a process whose command
// line contains marker and, when dir is not "", whose working folder is
// dir; pid 0 when there is none.
func findProcess(marker, dir string) (cmd string, pid int) {
	procs, _ := process.Processes()
	for _, p := range procs {
		c, err := p.Cmdline()
		if err != nil || !strings.Contains(c, marker) {
			continue
		}
		if dir != "" {
			if cwd, err := p.Cwd(); err != nil || cwd != dir {
				continue
			}
		}
		return c, int(p.Pid)
	}
	return "", 0
}

// WaitNoProcess waits until no process's command line contains marker (a
// command a test started that must have been stopped).
func WaitNoProcess(t testing.TB, marker string) {
	t.Helper()
	WaitNoProcessIn(t, marker, "")
}

// WaitNoProcessIn waits until no process working in dir has a command
// line that contains marker ("" for any folder).
func WaitNoProcessIn(t testing.TB, marker, dir string) {
	t.Helper()
	var left string
	if !Poll(15*time.Second, func() bool {
		var pid int
		left, pid = findProcess(marker, dir)
		return pid == 0
	}) {
		t.Fatalf("still running: %s", left)
	}
}

// WaitProcess waits until a process's command line contains marker (a
// command a test made the agent start).
func WaitProcess(t testing.TB, marker string) {
	t.Helper()
	ProcessWith(t, marker)
}

// WaitPIDGone waits until process pid has ended (or is a zombie nobody
// reaped yet: it runs nothing any more).
func WaitPIDGone(t testing.TB, what string, pid int, timeout time.Duration) {
	t.Helper()
	if !Poll(timeout, func() bool { return !osproc.Alive(pid) }) {
		t.Fatalf("%s (pid %d) still runs %s later", what, pid, timeout)
	}
}

// KillWith kills every process whose command line contains marker (what a
// failed test leaves).
func KillWith(marker string) {
	procs, _ := process.Processes()
	for _, p := range procs {
		if cmd, err := p.Cmdline(); err == nil && strings.Contains(cmd, marker) {
			_ = p.Kill()
		}
	}
}

// ProcessWith waits until a process's command line contains marker, and
// returns its pid.
func ProcessWith(t testing.TB, marker string) int {
	t.Helper()
	var pid int
	if !Poll(30*time.Second, func() bool {
		_, pid = findProcess(marker, "")
		return pid != 0
	}) {
		t.Fatalf("no process runs %q", marker)
	}
	return pid
}

// ChildWith waits until a child of process parent has a command line that
// contains marker, and returns its pid.
func ChildWith(t testing.TB, parent int, marker string) int {
	t.Helper()
	var pid int
	if !Poll(30*time.Second, func() bool {
		kids, _ := process.NewProcess(int32(parent))
		if kids == nil {
			return false
		}
		children, _ := kids.Children()
		for _, p := range children {
			if cmd, err := p.Cmdline(); err == nil && strings.Contains(cmd, marker) {
				pid = int(p.Pid)
				return true
			}
		}
		return false
	}) {
		t.Fatalf("process %d has no child that runs %q", parent, marker)
	}
	return pid
}
