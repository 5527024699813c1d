package discovery

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gemini-ide-companion/gemini-ide-companion/internal/osproc"
	"github.com/gemini-ide-companion/gemini-ide-companion/internal/testproc"
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
	// Readers racing with rewrites always see a whole, valid file. Wine
	// refuses to replace a file while any handle to it is open, whatever
	// its sharing (Windows does not, with delete sharing): there a reader
	// that never lets go would starve the writer, so it pauses between
	// reads, as real readers (list, doctor, the CLI) read once.
	pause := time.Duration(0)
	if testproc.UnderWine() {
		pause = time.Millisecond
	}
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
			time.Sleep(pause)
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
	testproc.NeedSymlinks(t)
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
	// World-writable parent (without the sticky bit; on Windows, by its
	// ACL).
	parent := filepath.Join(base, "open", "gemini")
	os.MkdirAll(parent, 0o700)
	makeWorldWritable(t, parent)
	if err := EnsureDir(filepath.Join(parent, "ide")); err == nil {
		t.Fatal("world-writable parent accepted")
	}
	// Our own directory, too open: tightened.
	own := filepath.Join(base, "own", "gemini", "ide")
	os.MkdirAll(own, 0o755)
	makeWorldWritable(t, own)
	if err := EnsureDir(own); err != nil {
		t.Fatal(err)
	}
	if st, _ := os.Stat(own); osproc.OthersCanWrite(own, st) {
		t.Fatal("own dir not tightened: still writable by others")
	}
}

func TestSymlinkedDirIsRefused(t *testing.T) {
	testproc.NeedSymlinks(t)
	base := t.TempDir()
	lnParent := filepath.Join(base, "ln", "gemini")
	os.MkdirAll(filepath.Join(base, "ln"), 0o700)
	os.MkdirAll(filepath.Join(base, "elsewhere"), 0o700)
	if err := os.Symlink(filepath.Join(base, "elsewhere"), lnParent); err != nil {
		t.Fatal(err)
	}
	if err := EnsureDir(filepath.Join(lnParent, "ide")); err == nil {
		t.Fatal("symlinked directory accepted")
	}
}

func TestRemoveStale(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "gemini", "ide")
	// A process that has exited: its PID is dead.
	dead := testproc.Command("exit")
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
	cmd := testproc.Command("sleep")
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

// TestRewriteWhileAReaderHoldsTheFile: `list` or `doctor` reading the
// discovery file while the companion rewrites or removes it (its
// workspace folders changed, or it stops) delays neither; on Windows a
// reader without delete sharing made both fail ("Access is denied", the
// file then dropped; "sharing violation" at exit, the file left behind).
func TestRewriteWhileAReaderHoldsTheFile(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "gemini", "ide")
	path, err := Write(dir, 1, sample(2))
	if err != nil {
		t.Fatal(err)
	}
	reader, err := osproc.OpenNoFollow(path)
	if err != nil {
		t.Fatal(err)
	}
	// The reader lets go a moment later, as list and doctor do.
	released := make(chan struct{})
	go func() {
		defer close(released)
		time.Sleep(200 * time.Millisecond)
		reader.Close()
	}()
	f := sample(2)
	f.WorkspacePath = "/w2"
	if _, err := Write(dir, 1, f); err != nil {
		t.Fatalf("rewrite while a reader holds the file: %v", err)
	}
	<-released
	if got, err := Read(path); err != nil || got.WorkspacePath != "/w2" {
		t.Fatalf("after the rewrite: %+v, %v", got, err)
	}

	held, err := osproc.OpenNoFollow(path)
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()
	if err := os.Remove(path); err != nil {
		t.Fatalf("remove while a reader holds the file: %v", err)
	}
}

// TestThirdFromTopIsTheCLIsWindowsPick: Gemini CLI on Windows walks up from
// itself to a process whose parent is 0 or gone and takes the third from
// the top; whatever runs between the CLI and the editor, a file named by
// the editor's own chain is the one the CLI looks for first.
func TestThirdFromTopIsTheCLIsWindowsPick(t *testing.T) {
	// explorer (4, whose parent 3 has exited) → the editor's main process
	// (10) → its terminal host (11) → two terminals: shell 12 → gemini's
	// node 13, and shell 21 → cmd 22 (gemini.cmd) → node 23. A terminal
	// opened straight under 10: shell 30 → node 31. The idle process (0)
	// and wininit (2) sit apart.
	parents := map[int]int{0: 0, 2: 0, 4: 3, 10: 4, 11: 10, 12: 11, 13: 12, 21: 11, 22: 21, 23: 22, 30: 10, 31: 30}
	// What the CLI computes, from each node process.
	for cli, want := range map[int]int{13: 11, 23: 11, 31: 30} {
		if got := thirdFromTop(parents, cli); got != want {
			t.Errorf("the CLI in process %d picks %d, want %d", cli, got, want)
		}
	}
	// The file of the editor whose terminals' shells are children of 11
	// is named 11: what both CLIs above look for first.
	if got := thirdFromTop(parents, 11); got != 11 {
		t.Errorf("editor 11 (chain 11 → 10 → 4): got %d, want 11", got)
	}
	// Fewer than three in the chain: the process itself (no name can match
	// what a CLI below it picks; terminals carry GEMINI_CLI_IDE_PID).
	if got := thirdFromTop(parents, 10); got != 10 {
		t.Errorf("a chain of two: got %d, want 10", got)
	}
	if got := thirdFromTop(parents, 4); got != 4 {
		t.Errorf("a chain of one: got %d, want 4", got)
	}
	// A cycle (PIDs reused) ends at the CLI's depth limit.
	loop := map[int]int{1: 2, 2: 1}
	if got := thirdFromTop(loop, 1); got != 1 && got != 2 {
		t.Errorf("a cycle: got %d", got)
	}
}
