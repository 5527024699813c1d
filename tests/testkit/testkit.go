// Package testkit runs the real sidecar binary in tests and plays both of its
// peers: the editor (over the editor link on the sidecar's stdin/stdout) and
// Gemini CLI (an MCP client over Streamable HTTP, found through the
// discovery file).
package testkit

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gemini-ide-companion/gemini-ide-companion/discovery"
)

var (
	buildOnce sync.Once
	binPath   string
	buildErr  error
)

// ModuleRoot returns the repository's root folder (where go.mod is).
func ModuleRoot(t testing.TB) string {
	t.Helper()
	out, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		t.Fatalf("find module root: %v", err)
	}
	mod := strings.TrimSpace(string(out))
	if mod == "" || mod == os.DevNull {
		t.Fatalf("find module root: not inside the module")
	}
	return filepath.Dir(mod)
}

// Binary builds the sidecar once per test process (with the race detector
// when the tests run with it) and returns its path. GIC_BINARY, if set,
// names a binary to use instead.
func Binary(t testing.TB) string {
	t.Helper()
	if p := os.Getenv("GIC_BINARY"); p != "" {
		return p
	}
	root := ModuleRoot(t)
	buildOnce.Do(func() {
		name := "gemini-ide-companion-test"
		args := []string{"build"}
		if raceEnabled {
			name += "-race"
			args = append(args, "-race")
		}
		dir := filepath.Join(root, "bin")
		if err := os.MkdirAll(dir, 0o755); err != nil {
			buildErr = err
			return
		}
		// Build to a private name, then rename: test packages run in
		// parallel and may build at the same time.
		tmp := filepath.Join(dir, fmt.Sprintf(".%s-%d", name, os.Getpid()))
		args = append(args, "-o", tmp, "./cmd/gemini-ide-companion")
		cmd := exec.Command("go", args...)
		cmd.Dir = root
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		if err := cmd.Run(); err != nil {
			buildErr = fmt.Errorf("go build: %v\n%s", err, stderr.String())
			return
		}
		binPath = filepath.Join(dir, name)
		buildErr = os.Rename(tmp, binPath)
	})
	if buildErr != nil {
		t.Fatalf("build sidecar: %v", buildErr)
	}
	return binPath
}

// Sandbox is a set of fresh folders for one test: TmpDir is the TMPDIR of
// the sidecar and the CLI (so discovery files never mix with other tests'),
// Workspace is the project folder (resolved through symlinks, as the CLI
// resolves it), Home a throwaway home folder.
type Sandbox struct {
	TmpDir    string
	Workspace string
	Home      string
}

// NewSandbox makes a Sandbox removed when the test ends.
func NewSandbox(t testing.TB) *Sandbox {
	t.Helper()
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatalf("resolve temp dir: %v", err)
	}
	sb := &Sandbox{
		TmpDir:    filepath.Join(base, "tmp"),
		Workspace: filepath.Join(base, "workspace"),
		Home:      filepath.Join(base, "home"),
	}
	for _, d := range []string{sb.TmpDir, sb.Workspace, sb.Home} {
		if err := os.Mkdir(d, 0o700); err != nil {
			t.Fatalf("make %s: %v", d, err)
		}
	}
	return sb
}

// Env returns the test process's environment with TMPDIR set to TmpDir.
func (sb *Sandbox) Env() []string {
	return WithEnv(os.Environ(), "TMPDIR="+sb.TmpDir)
}

// WithEnv returns env with each KEY=VALUE in set replacing any earlier
// value of KEY.
func WithEnv(env []string, set ...string) []string {
	out := make([]string, 0, len(env)+len(set))
	keys := map[string]bool{}
	for _, kv := range set {
		k, _, _ := strings.Cut(kv, "=")
		keys[k] = true
	}
	for _, kv := range env {
		k, _, _ := strings.Cut(kv, "=")
		if !keys[k] {
			out = append(out, kv)
		}
	}
	return append(out, set...)
}

// DiscoveryDir is where the sidecar writes its discovery file.
func (sb *Sandbox) DiscoveryDir() string {
	return filepath.Join(sb.TmpDir, "gemini", "ide")
}

// DiscoveryFiles lists the discovery files present now.
func (sb *Sandbox) DiscoveryFiles() []string {
	des, _ := os.ReadDir(sb.DiscoveryDir())
	var out []string
	for _, de := range des {
		if _, _, ok := discovery.ParseName(de.Name()); ok {
			out = append(out, filepath.Join(sb.DiscoveryDir(), de.Name()))
		}
	}
	return out
}

// WaitDiscovery waits until exactly one discovery file exists and returns
// its path and content.
func (sb *Sandbox) WaitDiscovery(t testing.TB, timeout time.Duration) (string, discovery.File) {
	t.Helper()
	var files []string
	ok := Poll(timeout, func() bool {
		files = sb.DiscoveryFiles()
		return len(files) == 1
	})
	if !ok {
		t.Fatalf("want exactly one discovery file in %s within %s, have %v", sb.DiscoveryDir(), timeout, files)
	}
	f, err := discovery.Read(files[0])
	if err != nil {
		t.Fatalf("read discovery file: %v", err)
	}
	return files[0], f
}

// Poll calls cond every few milliseconds until it returns true or timeout
// passes, and reports whether it did.
func Poll(timeout time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(timeout)
	for {
		if cond() {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(5 * time.Millisecond)
	}
}
