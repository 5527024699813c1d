package discovery

import (
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

func sample(port int) File {
	return File{Port: port, WorkspacePath: "/w", AuthToken: "tok", IDEInfo: IDEInfo{Name: "neovim", DisplayName: "Neovim"}, PID: os.Getpid()}
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
