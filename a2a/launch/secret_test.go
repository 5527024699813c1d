package launch

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/gemini-ide-companion/gemini-ide-companion/internal/osproc"
)

// useTempDir makes dir this process's temporary folder for the test.
func useTempDir(t *testing.T, dir string) {
	if runtime.GOOS == "windows" {
		t.Setenv("TMP", dir)
		t.Setenv("TEMP", dir)
		return
	}
	t.Setenv("TMPDIR", dir)
}

// The secret of a running server is kept in a private file, found for its
// 127.0.0.1 URL only, and forgotten once the server is gone.
func TestSecretFile(t *testing.T) {
	useTempDir(t, t.TempDir())
	url := "http://127.0.0.1:41999"
	path, err := remember(SecretDir(), record{URL: url, PID: os.Getpid(), Secret: "s3cret"})
	if err != nil {
		t.Fatal(err)
	}
	if filepath.Dir(path) != SecretDir() {
		t.Fatalf("secret file %s; want it in %s", path, SecretDir())
	}
	for _, p := range []string{path, SecretDir(), filepath.Dir(SecretDir())} {
		st, err := os.Lstat(p)
		if err != nil {
			t.Fatal(err)
		}
		if !osproc.Mine(p, st) || osproc.OthersCanWrite(p, st) {
			t.Fatalf("%s is not the user's own", p)
		}
		if runtime.GOOS != "windows" && st.Mode().Perm()&0o077 != 0 {
			t.Fatalf("%s has mode %v; want no access for group and others", p, st.Mode().Perm())
		}
	}
	h, err := HeaderFor(url)
	if err != nil || h.Get("Authorization") != "Bearer s3cret" {
		t.Fatalf("HeaderFor(%s) = %v, %v", url, h, err)
	}
	if h, err := HeaderFor(url + "/.well-known/agent-card.json"); err != nil || h.Get("Authorization") != "Bearer s3cret" {
		t.Fatalf("HeaderFor(card URL) = %v, %v", h, err)
	}
	// Never for another address, even one that may reach the same port.
	for _, other := range []string{"http://localhost:41999", "http://[::1]:41999", "https://127.0.0.1:41999", "http://127.0.0.1:42000", "http://127.0.0.1", "not a url"} {
		if h, err := HeaderFor(other); !errors.Is(err, ErrNoSecret) || h != nil {
			t.Errorf("HeaderFor(%s) = %v, %v; want ErrNoSecret", other, h, err)
		}
	}
	forget(path, os.Getpid()+1)
	if _, err := os.Stat(path); err != nil {
		t.Fatal("forget removed the file of another process")
	}
	forget(path, os.Getpid())
	if _, err := HeaderFor(url); !errors.Is(err, ErrNoSecret) {
		t.Fatalf("HeaderFor after forget: %v", err)
	}
}

// A file left by a server that died is not used, and is cleared out.
func TestSecretOfADeadServer(t *testing.T) {
	useTempDir(t, t.TempDir())
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	dead := cmd.Process.Pid
	stale, err := remember(SecretDir(), record{URL: "http://127.0.0.1:41001", PID: dead, Secret: "old"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := HeaderFor("http://127.0.0.1:41001"); !errors.Is(err, ErrNoSecret) {
		t.Fatalf("HeaderFor a dead server: %v; want ErrNoSecret", err)
	}
	if _, err := os.Stat(stale); err == nil {
		t.Fatal("the dead server's secret file was left")
	}
	stale, err = remember(SecretDir(), record{URL: "http://127.0.0.1:41002", PID: dead, Secret: "old"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := remember(SecretDir(), record{URL: "http://127.0.0.1:41003", PID: os.Getpid(), Secret: "new"}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(stale); err == nil {
		t.Fatal("a new server's secret left a dead one's file behind")
	}
}

// The secret file goes to the temporary folder of the server's
// environment, where its programs look.
func TestTempDirOf(t *testing.T) {
	name := "TMPDIR"
	if runtime.GOOS == "windows" {
		name = "TMP"
	}
	if got := tempDirOf([]string{"HOME=/h", name + "=/first", name + "=/sandbox"}); got != "/sandbox" {
		t.Fatalf("tempDirOf = %q; want the last %s", got, name)
	}
	if got := tempDirOf([]string{"HOME=/h"}); got != os.TempDir() {
		t.Fatalf("tempDirOf without %s = %q; want %q", name, got, os.TempDir())
	}
}
