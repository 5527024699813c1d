package testkit

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// What the editor suites (tests/nvim, tests/vim, tests/emacs) share of
// their harness: where the plugin is, files in the workspace, what a
// failure shows of the sidecar, waiting for a text.

// PluginDir is plugins/<name> in this checkout.
func PluginDir(t testing.TB, name string) string {
	return filepath.Join(ModuleRoot(t), "plugins", name)
}

// WriteFile writes content to name inside the workspace (making its
// folders) and returns its path.
func (sb *Sandbox) WriteFile(t testing.TB, name, content string) string {
	t.Helper()
	p := filepath.Join(sb.Workspace, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// SidecarLogTail is the last 30 lines of the sidecar's log file at path
// as a failure message shows them, or "" when there is no log.
func SidecarLogTail(path string) string {
	data, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	if len(lines) > 30 {
		lines = lines[len(lines)-30:]
	}
	return "--- sidecar log (tail):\n" + strings.Join(lines, "\n") + "\n"
}

// WaitContains waits up to timeout until one of texts() (the messages an
// editor showed so far, what a terminal shows) contains substr, and
// returns it.
func WaitContains(timeout time.Duration, texts func() []string, substr string) (string, bool) {
	var found string
	ok := Poll(timeout, func() bool {
		for _, m := range texts() {
			if strings.Contains(m, substr) {
				found = m
				return true
			}
		}
		return false
	})
	return found, ok
}

// ReadFile returns the content of the file at path and true, or "" and
// false when there is no such file; any other error fails the test.
func ReadFile(t testing.TB, path string) (string, bool) {
	t.Helper()
	b, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return "", false
	}
	if err != nil {
		t.Fatal(err)
	}
	return string(b), true
}
