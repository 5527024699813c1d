package tmuxdrive

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// GeminiSettings is what [GeminiEnv] writes to the throwaway HOME's
// .gemini/settings.json: API-key auth (against the fake API), IDE mode on,
// and nothing that would reach the network on its own (update checks, usage
// statistics).
var GeminiSettings = map[string]any{
	"security": map[string]any{"auth": map[string]any{"selectedType": "gemini-api-key"}},
	"ide":      map[string]any{"enabled": true},
	"general": map[string]any{
		"enableAutoUpdate":             false,
		"enableAutoUpdateNotification": false,
	},
	"privacy": map[string]any{"usageStatisticsEnabled": false},
}

// RepoRoot returns the repository's root directory: the nearest directory
// above the working directory that holds go.mod.
func RepoRoot(t testing.TB) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatalf("tmuxdrive: working directory: %v", err)
	}
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			return d
		}
		if filepath.Dir(d) == d {
			break
		}
	}
	// Fall back on where this file was compiled from.
	if _, file, _, ok := runtime.Caller(0); ok {
		return filepath.Dir(filepath.Dir(filepath.Dir(file)))
	}
	t.Fatalf("tmuxdrive: no go.mod above %s", dir)
	return ""
}

// GeminiBin returns the path of the Gemini CLI installed by `npm ci` in
// tests/node. When it is not there the test fails if CI is set and is skipped
// otherwise, saying how to install it. Node itself must be on PATH.
func GeminiBin(t testing.TB) string {
	t.Helper()
	bin := filepath.Join(RepoRoot(t), "tests", "node", "node_modules", ".bin", "gemini")
	if _, err := os.Stat(bin); err != nil {
		Missing(t, "the Gemini CLI is not installed at "+bin+" (run `npm ci` in tests/node)")
	}
	if _, err := exec.LookPath("node"); err != nil {
		Missing(t, "node is not on PATH (the Gemini CLI needs Node.js 20+)")
	}
	return bin
}

// GeminiEnv prepares home as a throwaway HOME for the Gemini CLI (writing
// .gemini/settings.json with [GeminiSettings]) and returns the environment
// entries the CLI needs to run against the fake API at baseURL with no
// network: HOME, TMPDIR, GOOGLE_GEMINI_BASE_URL, GEMINI_API_KEY,
// GEMINI_CLI_TRUST_WORKSPACE, SSH_CONNECTION (so that inside a container the
// CLI dials the IDE on 127.0.0.1 rather than host.docker.internal), TERM and
// PATH (with the CLI's bin directory first). Append entries to override them
// (later ones win in exec), or merge them into os.Environ().
func GeminiEnv(t testing.TB, home, tmpDir, baseURL string) []string {
	t.Helper()
	bin := GeminiBin(t)
	dir := filepath.Join(home, ".gemini")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatalf("tmuxdrive: creating %s: %v", dir, err)
	}
	data, err := json.MarshalIndent(GeminiSettings, "", "  ")
	if err != nil {
		t.Fatalf("tmuxdrive: settings: %v", err)
	}
	if err := os.WriteFile(filepath.Join(dir, "settings.json"), data, 0o600); err != nil {
		t.Fatalf("tmuxdrive: writing settings.json: %v", err)
	}
	path := filepath.Dir(bin)
	if p := os.Getenv("PATH"); p != "" {
		path += string(os.PathListSeparator) + p
	}
	return []string{
		"HOME=" + home,
		"TMPDIR=" + tmpDir,
		"GOOGLE_GEMINI_BASE_URL=" + baseURL,
		"GEMINI_API_KEY=dummy",
		"GEMINI_CLI_TRUST_WORKSPACE=true",
		"SSH_CONNECTION=127.0.0.1 1 127.0.0.1 22",
		"TERM=xterm-256color",
		"PATH=" + path,
	}
}

// MergeEnv returns base with every entry of overrides applied: an override
// replaces the entry with the same name, or is appended.
func MergeEnv(base []string, overrides ...string) []string {
	index := map[string]int{}
	out := make([]string, 0, len(base)+len(overrides))
	for _, kv := range append(append([]string(nil), base...), overrides...) {
		name := kv
		for i := 0; i < len(kv); i++ {
			if kv[i] == '=' {
				name = kv[:i]
				break
			}
		}
		if i, ok := index[name]; ok {
			out[i] = kv
			continue
		}
		index[name] = len(out)
		out = append(out, kv)
	}
	return out
}

// EditorEnv is base with GeminiEnv's variables over it and without
// SSH_CONNECTION: the environment of an editor that runs the real CLI in
// its terminal. Without SSH_CONNECTION (as on a desktop) the plugin itself
// must lead the CLI to 127.0.0.1 in a container, as it does for users.
func EditorEnv(t testing.TB, base []string, home, tmpDir, baseURL string) []string {
	t.Helper()
	env := MergeEnv(base, GeminiEnv(t, home, tmpDir, baseURL)...)
	kept := env[:0]
	for _, kv := range env {
		if !strings.HasPrefix(kv, "SSH_CONNECTION=") {
			kept = append(kept, kv)
		}
	}
	return kept
}
