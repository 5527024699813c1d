//go:build unix

package discovery

import (
	"bufio"
	"encoding/json"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// cliIDEPID computes the IDE PID the way Gemini CLI 0.61.0 does on Unix,
// with the same `ps` calls, starting from pid: walk up to the first shell,
// then take its grandparent if above 1, else its parent.
func cliIDEPID(t *testing.T, pid int) int {
	t.Helper()
	info := func(p int) (ppid int, name string) {
		out, err := exec.Command("ps", "-o", "ppid=,command=", "-p", strconv.Itoa(p)).Output()
		if err != nil {
			t.Fatalf("ps %d: %v", p, err)
		}
		fields := strings.Fields(strings.TrimSpace(string(out)))
		ppid, _ = strconv.Atoi(fields[0])
		return ppid, filepath.Base(fields[1])
	}
	cur := pid
	for i := 0; i < 32; i++ {
		ppid, name := info(cur)
		if shells[name] {
			ide := ppid
			if gp, _ := info(ppid); gp > 1 {
				ide = gp
			}
			return ide
		}
		if ppid <= 1 {
			break
		}
		cur = ppid
	}
	return cur
}

func TestIDEPIDMatchesTheCLIsProcessWalk(t *testing.T) {
	if _, err := exec.LookPath("ps"); err != nil {
		t.Skip("ps not installed")
	}
	// A real tree like an editor's terminal: editor → bash → leaf. The
	// "editor" is a python3 process (not a shell), its terminal shell is
	// bash, and the leaf stands for gemini.
	editor := exec.Command("python3", "-c", `
import subprocess, sys
p = subprocess.Popen(["bash", "-c", "sleep 60 & echo $!; wait"], stdout=subprocess.PIPE, text=True)
print(p.stdout.readline().strip(), flush=True)
sys.stdin.read()
p.kill()
`)
	stdin, _ := editor.StdinPipe()
	stdout, _ := editor.StdoutPipe()
	if err := editor.Start(); err != nil {
		t.Skipf("python3 not available: %v", err)
	}
	t.Cleanup(func() { stdin.Close(); editor.Wait() })
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		t.Fatalf("read leaf pid: %v", err)
	}
	leaf, _ := strconv.Atoi(strings.TrimSpace(line))
	t.Cleanup(func() { syscall.Kill(leaf, syscall.SIGKILL) })
	// $! names the child as soon as bash forks it; until it has exec'd
	// sleep it is still a bash, which the walk would take for the shell.
	for {
		out, err := exec.Command("ps", "-o", "command=", "-p", strconv.Itoa(leaf)).Output()
		if err != nil {
			t.Fatalf("the leaf process %d is gone: %v", leaf, err)
		}
		if strings.HasPrefix(strings.TrimSpace(string(out)), "sleep") {
			break
		}
	}

	got, err := IDEPID(editor.Process.Pid)
	if err != nil {
		t.Fatal(err)
	}
	want := cliIDEPID(t, leaf)
	if got != want {
		t.Fatalf("IDEPID(editor %d) = %d, but the CLI's walk from %d finds %d", editor.Process.Pid, got, leaf, want)
	}
	if got != os.Getpid() {
		t.Fatalf("expected the editor's parent (this test, %d), got %d", os.Getpid(), got)
	}
	if _, err := IDEPID(0); err == nil {
		t.Fatal("IDEPID(0) should fail")
	}
}

func TestWriteCreatesPrivateFileAndDir(t *testing.T) {
	old := syscall.Umask(0)
	defer syscall.Umask(old)
	dir := filepath.Join(t.TempDir(), "gemini", "ide")
	path, err := Write(dir, 1234, sample(5678))
	if err != nil {
		t.Fatal(err)
	}
	if filepath.Base(path) != "gemini-ide-server-1234-5678.json" {
		t.Fatalf("name %s", path)
	}
	for p, want := range map[string]fs.FileMode{path: 0o600, dir: 0o700, filepath.Dir(dir): 0o700} {
		st, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if st.Mode().Perm() != want {
			t.Fatalf("%s mode %o, want %o", p, st.Mode().Perm(), want)
		}
	}
	var got map[string]any
	data, _ := os.ReadFile(path)
	if err := json.Unmarshal(data, &got); err != nil {
		t.Fatal(err)
	}
	if got["port"] != 5678.0 || got["workspacePath"] != "/w" || got["authToken"] != "tok" {
		t.Fatalf("content %s", data)
	}
	if ide := got["ideInfo"].(map[string]any); ide["displayName"] != "Neovim" {
		t.Fatalf("ideInfo %v", ide)
	}
}

// makeWorldWritable opens dir to every user: mode 0777, no sticky bit.
func makeWorldWritable(t *testing.T, dir string) {
	t.Helper()
	if err := os.Chmod(dir, 0o777); err != nil {
		t.Fatal(err)
	}
}
