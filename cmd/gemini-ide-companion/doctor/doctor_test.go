package doctor

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/gemini-ide-companion/gemini-ide-companion/internal/testproc"
)

func find(r Report, check string) []Finding {
	var out []Finding
	for _, f := range r.Findings {
		if f.Check == check {
			out = append(out, f)
		}
	}
	return out
}

// Broken and foreign input is reported with a fix, never a crash; with no
// companion and the container trap, a CLI would not connect.
func TestBadFilesAndTrapsAreExplained(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "ide")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	bad := filepath.Join(dir, "gemini-ide-server-1-2.json")
	if err := os.WriteFile(bad, []byte("{not json"), 0o600); err != nil {
		t.Fatal(err)
	}
	docker := filepath.Join(t.TempDir(), "dockerenv")
	if err := os.WriteFile(docker, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"GEMINI_CLI_IDE_SERVER_PORT": "1"}
	r := Run(context.Background(), Options{
		Cwd:       t.TempDir(),
		Dir:       dir,
		Getenv:    func(k string) string { return env[k] },
		LookPath:  func(string) (string, error) { return "", errors.New("not found") },
		Alive:     func(int) bool { return true },
		DockerEnv: docker,
		IDEPID:    42,
	})
	if r.WouldConnect {
		t.Fatal("doctor says a CLI would connect with no companion")
	}
	files := find(r, "discovery file")
	if len(files) != 1 {
		t.Fatalf("want the unusable file reported, got %+v", files)
	}
	for _, f := range files {
		if f.Level != Warn || f.Fix == "" {
			t.Errorf("unusable file not a warning with a fix: %+v", f)
		}
	}
	for check, level := range map[string]Level{"environment": Fail, "workspace": Fail, "container": Fail, "gemini": Warn} {
		fs := find(r, check)
		if len(fs) != 1 || fs[0].Level != level || fs[0].Fix == "" {
			t.Errorf("%s: want one %s finding with a fix, got %+v", check, level, fs)
		}
	}
	var buf bytes.Buffer
	Write(&buf, r)
	if !strings.Contains(buf.String(), "would NOT connect") {
		t.Errorf("the verdict is missing:\n%s", buf.String())
	}
}

// TestALinkNamedLikeADiscoveryFileIsReported: a link is never read, and
// is reported with a fix.
func TestALinkNamedLikeADiscoveryFileIsReported(t *testing.T) {
	testproc.NeedSymlinks(t)
	dir := filepath.Join(t.TempDir(), "ide")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	target := filepath.Join(t.TempDir(), "elsewhere.json")
	if err := os.WriteFile(target, []byte(`{"port":1,"workspacePath":"/w","authToken":"x"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, filepath.Join(dir, "gemini-ide-server-3-4.json")); err != nil {
		t.Fatal(err)
	}
	r := Run(context.Background(), Options{
		Cwd:      t.TempDir(),
		Dir:      dir,
		Getenv:   func(string) string { return "" },
		LookPath: func(string) (string, error) { return "", errors.New("not found") },
		Alive:    func(int) bool { return true },
		IDEPID:   42,
	})
	files := find(r, "discovery file")
	if len(files) != 1 || files[0].Level != Warn || files[0].Fix == "" || !strings.Contains(files[0].Message, "gemini-ide-server-3-4.json") {
		t.Fatalf("want the link reported as unusable, with a fix; got %+v", files)
	}
}

// The agent panel's checks: a server command that cannot run, and a secret
// folder open to other users, are named with what to do.
func TestAgentNamesWhatStopsThePanel(t *testing.T) {
	dir := t.TempDir()
	secrets := filepath.Join(dir, "a2a")
	if err := os.Mkdir(secrets, 0o700); err != nil {
		t.Fatal(err)
	}
	r := Agent(context.Background(), AgentOptions{Cwd: dir, Command: []string{filepath.Join(dir, "no-such-server")}, SecretDir: secrets})
	if r.CanStart {
		t.Fatalf("a server command that does not exist can start: %+v", r)
	}
	var server, secret Finding
	for _, f := range r.Findings {
		switch f.Check {
		case "A2A server":
			server = f
		case "secret file":
			secret = f
		}
	}
	if server.Level != Fail || !strings.Contains(server.Message, "cannot be run") || !strings.Contains(server.Fix, "server command") {
		t.Fatalf("A2A server finding %+v", server)
	}
	if secret.Level != OK || !strings.Contains(secret.Message, "is private") {
		t.Fatalf("secret finding for a private folder %+v", secret)
	}
	if runtime.GOOS == "windows" {
		return
	}
	if err := os.Chmod(secrets, 0o777); err != nil {
		t.Fatal(err)
	}
	r = Agent(context.Background(), AgentOptions{Cwd: dir, Command: []string{filepath.Join(dir, "no-such-server")}, SecretDir: secrets})
	for _, f := range r.Findings {
		if f.Check == "secret file" && (f.Level != Warn || !strings.Contains(f.Message, "open to other users")) {
			t.Fatalf("secret finding for an open folder %+v", f)
		}
	}
}

// The editor tools: doctor says how to install the extension when it is
// missing, and that gemini-ide-companion must be on PATH for it to work.
func TestEditorToolsExtensionIsReported(t *testing.T) {
	home := t.TempDir()
	run := func(onPath bool) Finding {
		t.Helper()
		r := Run(context.Background(), Options{
			Cwd:    t.TempDir(),
			Dir:    filepath.Join(t.TempDir(), "ide"),
			Getenv: func(k string) string { return map[string]string{"HOME": home}[k] },
			LookPath: func(name string) (string, error) {
				if onPath && name == "gemini-ide-companion" {
					return "/usr/local/bin/gemini-ide-companion", nil
				}
				return "", errors.New("not found")
			},
			Alive:  func(int) bool { return true },
			IDEPID: 42,
		})
		fs := find(r, "editor tools")
		if len(fs) != 1 {
			t.Fatalf("editor tools findings %+v", fs)
		}
		return fs[0]
	}
	if f := run(true); f.Level != Info || !strings.Contains(f.Fix, "gemini extensions install") {
		t.Errorf("without the extension: %+v", f)
	}
	ext := filepath.Join(home, ".gemini", "extensions", ExtensionName)
	if err := os.MkdirAll(ext, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(ext, "gemini-extension.json"), []byte(`{"name":"editor-tools"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if f := run(false); f.Level != Warn || !strings.Contains(f.Message, "not on PATH") {
		t.Errorf("installed, no binary on PATH: %+v", f)
	}
	if f := run(true); f.Level != OK || !strings.Contains(f.Message, "gemini trust") {
		t.Errorf("installed: %+v", f)
	}
}
