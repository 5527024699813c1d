//go:build unix

package osproc

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// TestOpenNoFollowRefusesLinksAndNeverBlocks: a link is not followed, and a
// FIFO opens at once (it used to block start-up until a writer came).
func TestOpenNoFollowRefusesLinksAndNeverBlocks(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "target")
	os.WriteFile(target, []byte("x"), 0o600)
	link := filepath.Join(dir, "link")
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	if f, err := OpenNoFollow(link); err == nil {
		f.Close()
		t.Fatal("OpenNoFollow followed a symbolic link")
	}
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		f, err := OpenNoFollow(fifo)
		if err == nil {
			f.Close()
		}
		done <- err
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		// Release the blocked open before failing.
		if w, err := os.OpenFile(fifo, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
			w.Close()
		}
		t.Fatal("OpenNoFollow blocked on a FIFO")
	}
}

func TestMakePrivateRemovesGroupAndOtherBits(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "d")
	os.Mkdir(dir, 0o777)
	os.Chmod(dir, 0o777)
	if err := MakePrivate(dir, true); err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Stat(dir); fi.Mode().Perm() != 0o700 {
		t.Fatalf("directory mode %v", fi.Mode().Perm())
	}
	f := filepath.Join(dir, "f")
	os.WriteFile(f, nil, 0o666)
	os.Chmod(f, 0o666)
	if err := MakePrivate(f, false); err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Stat(f); fi.Mode().Perm() != 0o600 {
		t.Fatalf("file mode %v", fi.Mode().Perm())
	}
}
