package discovery

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
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

func sample(port int) File {
	return File{Port: port, WorkspacePath: "/w", AuthToken: "tok", IDEInfo: IDEInfo{Name: "neovim", DisplayName: "Neovim"}, PID: os.Getpid()}
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

func TestRewriteIsAtomic(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "gemini", "ide")
	path, err := Write(dir, 1, sample(2))
	if err != nil {
		t.Fatal(err)
	}
	// Readers racing with rewrites always see a whole, valid file.
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var bad string
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			default:
			}
			f, err := Read(path)
			if err != nil || f.Port != 2 {
				bad = fmt.Sprintf("port %d, error %v", f.Port, err)
				return
			}
		}
	}()
	for i := 0; i < 300; i++ {
		f := sample(2)
		f.WorkspacePath = strings.Repeat("/w", i)
		if _, err := Write(dir, 1, f); err != nil {
			t.Fatal(err)
		}
	}
	close(stop)
	wg.Wait()
	if bad != "" {
		t.Fatalf("a reader saw a partial file: %s", bad)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Fatalf("temporary files left behind: %v", entries)
	}
}

func TestSymlinkAtPathIsReplacedNotFollowed(t *testing.T) {
	base := t.TempDir()
	dir := filepath.Join(base, "gemini", "ide")
	if err := EnsureDir(dir); err != nil {
		t.Fatal(err)
	}
	victim := filepath.Join(base, "victim")
	os.WriteFile(victim, []byte("keep"), 0o600)
	if err := os.Symlink(victim, filepath.Join(dir, FileName(1, 2))); err != nil {
		t.Fatal(err)
	}
	path, err := Write(dir, 1, sample(2))
	if err != nil {
		t.Fatal(err)
	}
	if data, _ := os.ReadFile(victim); string(data) != "keep" {
		t.Fatal("the link's target was overwritten")
	}
	if st, _ := os.Lstat(path); st.Mode()&fs.ModeSymlink != 0 {
		t.Fatal("the link is still there")
	}
}

func TestUnsafeDirsAreRefused(t *testing.T) {
	base := t.TempDir()
	// World-writable parent without the sticky bit.
	parent := filepath.Join(base, "open", "gemini")
	os.MkdirAll(parent, 0o700)
	os.Chmod(parent, 0o777)
	if err := EnsureDir(filepath.Join(parent, "ide")); err == nil {
		t.Fatal("world-writable parent accepted")
	}
	// A link where the directory should be.
	lnParent := filepath.Join(base, "ln", "gemini")
	os.MkdirAll(filepath.Join(base, "ln"), 0o700)
	os.MkdirAll(filepath.Join(base, "elsewhere"), 0o700)
	os.Symlink(filepath.Join(base, "elsewhere"), lnParent)
	if err := EnsureDir(filepath.Join(lnParent, "ide")); err == nil {
		t.Fatal("symlinked directory accepted")
	}
	// Our own directory, too open: tightened.
	own := filepath.Join(base, "own", "gemini", "ide")
	os.MkdirAll(own, 0o755)
	if err := EnsureDir(own); err != nil {
		t.Fatal(err)
	}
	if st, _ := os.Stat(own); st.Mode().Perm() != 0o700 {
		t.Fatalf("own dir not tightened: %o", st.Mode().Perm())
	}
}

func TestRemoveStale(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "gemini", "ide")
	// A process that has exited: its PID is dead.
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	deadPID := dead.Process.Pid
	me := os.Getpid()

	live, _ := Write(dir, me, sample(1))
	ideGone, _ := Write(dir, deadPID, sample(2))
	f := sample(3)
	f.PID = deadPID // IDE alive, companion killed
	companionGone, _ := Write(dir, me, f)
	unrelated := filepath.Join(dir, "notes.txt")
	os.WriteFile(unrelated, []byte("x"), 0o600)

	removed, err := RemoveStale(dir, Alive)
	if err != nil {
		t.Fatal(err)
	}
	if len(removed) != 2 {
		t.Fatalf("removed %v", removed)
	}
	for _, p := range []string{ideGone, companionGone} {
		if _, err := os.Stat(p); !os.IsNotExist(err) {
			t.Fatalf("%s still there", p)
		}
	}
	for _, p := range []string{live, unrelated} {
		if _, err := os.Stat(p); err != nil {
			t.Fatalf("%s removed: %v", p, err)
		}
	}
}

func TestAlive(t *testing.T) {
	if !Alive(os.Getpid()) {
		t.Fatal("self not alive")
	}
	cmd := exec.Command("sleep", "30")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	if !Alive(cmd.Process.Pid) {
		t.Fatal("child not alive")
	}
	cmd.Process.Kill()
	// Until reaped the child is a zombie, which counts as gone.
	deadline := time.Now().Add(5 * time.Second)
	for Alive(cmd.Process.Pid) {
		if time.Now().After(deadline) {
			t.Fatal("killed child still alive")
		}
		time.Sleep(5 * time.Millisecond)
	}
	cmd.Wait()
	if Alive(0) || Alive(-1) {
		t.Fatal("non-PIDs alive")
	}
}

func TestFindForWorkspacePrefersDeepestFolder(t *testing.T) {
	base := t.TempDir()
	outer, inner := filepath.Join(base, "p"), filepath.Join(base, "p", "sub")
	os.MkdirAll(inner, 0o700)
	mk := func(port int, ws string) Entry {
		f := sample(port)
		f.WorkspacePath = ws
		return Entry{File: f}
	}
	entries := []Entry{mk(1, outer), mk(2, inner+string(os.PathListSeparator)+"/nowhere"), mk(3, filepath.Join(base, "other"))}
	got := FindForWorkspace(entries, filepath.Join(inner, "."), Alive)
	if len(got) != 2 || got[0].File.Port != 2 || got[1].File.Port != 1 {
		t.Fatalf("got %+v", got)
	}
	if got := FindForWorkspace(entries, base+"2", Alive); len(got) != 0 {
		t.Fatalf("prefix of a name matched: %+v", got)
	}
}
