package osproc

import (
	"bufio"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gemini-ide-companion/gemini-ide-companion/internal/testproc"
)

func TestOwnershipPrivacyAndLiveness(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "f")
	if err := os.WriteFile(path, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Lstat(path)
	if err != nil {
		t.Fatal(err)
	}
	if !Mine(path, fi) {
		t.Fatalf("a file just created is not the current user's (owner %s)", Owner(path, fi))
	}
	if err := MakePrivate(path, false); err != nil {
		t.Fatalf("MakePrivate: %v", err)
	}
	f, err := OpenNoFollow(path)
	if err != nil {
		t.Fatalf("OpenNoFollow on a regular file: %v", err)
	}
	f.Close()
	if !Alive(os.Getpid()) {
		t.Fatal("this process is not alive")
	}
	for _, pid := range []int{0, -1, 1 << 40} {
		if Alive(pid) {
			t.Fatalf("Alive(%d)", pid)
		}
	}
	if len(StopSignals()) == 0 {
		t.Fatal("no stop signals")
	}
}

// TestKillGroupEndsTheWholeTree: stopping a process started with OwnGroup
// also stops what it started (a server behind a launcher script), on
// Windows too, where there are no process groups.
func TestKillGroupEndsTheWholeTree(t *testing.T) {
	cmd := testproc.Command("tree")
	OwnGroup(cmd)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	child, _ := strconv.Atoi(strings.TrimSpace(line))
	if err != nil || child <= 0 {
		cmd.Process.Kill()
		t.Fatalf("the helper's child: %q, %v", line, err)
	}
	// Whatever happens, the child does not outlive the test (it would
	// hold the test's output open for an hour).
	t.Cleanup(func() {
		if p, err := os.FindProcess(child); err == nil && Alive(child) {
			p.Kill()
		}
	})
	if !Alive(child) {
		t.Fatalf("the helper's child %d is not running", child)
	}
	waited := make(chan struct{})
	go func() { cmd.Wait(); close(waited) }()
	KillGroup(cmd)
	deadline := time.Now().Add(10 * time.Second)
	for Alive(child) {
		if time.Now().After(deadline) {
			t.Fatalf("the child %d outlived its stopped parent", child)
		}
		time.Sleep(10 * time.Millisecond)
	}
	<-waited
}
