package osproc

import (
	"os"
	"path/filepath"
	"testing"
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
