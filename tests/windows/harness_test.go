//go:build wine && linux

// Package windows runs the Windows build end to end under Wine: the
// Windows sidecar under a Windows parent, the real Windows Gemini CLI
// 0.61.0 on Windows Node 22 in a pty, the fake Gemini API, and list, env
// and doctor on Windows paths. scripts/windows.sh prepares the Wine prefix
// and the Windows programs, then runs these tests (go test -tags wine).
package windows

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gemini-ide-companion/gemini-ide-companion/link"
	"github.com/gemini-ide-companion/gemini-ide-companion/link/protocol"
	"github.com/gemini-ide-companion/gemini-ide-companion/tests/tmuxdrive"
)

// wine is the Wine set-up that scripts/windows.sh made.
type wine struct {
	prefix string // WINEPREFIX
	bin    string // the Windows programs: gemini-ide-companion.exe, editorhost.exe
	node   string // Windows Node's node.exe
	root   string // the repository
}

func setup(t *testing.T) *wine {
	t.Helper()
	tmuxdrive.Require(t)
	w := &wine{prefix: os.Getenv("GIC_WINE_PREFIX"), bin: os.Getenv("GIC_WIN_BIN"), node: os.Getenv("GIC_WIN_NODE"), root: tmuxdrive.RepoRoot(t)}
	if w.prefix == "" || w.bin == "" || w.node == "" {
		tmuxdrive.Missing(t, "the Wine set-up is missing (run scripts/windows.sh)")
	}
	for _, p := range []string{w.exe("gemini-ide-companion"), w.exe("editorhost"), w.node, w.geminiJS()} {
		if _, err := os.Stat(p); err != nil {
			tmuxdrive.Missing(t, fmt.Sprintf("%s is missing (run scripts/windows.sh)", p))
		}
	}
	return w
}

func (w *wine) exe(name string) string { return filepath.Join(w.bin, name+".exe") }

func (w *wine) geminiJS() string {
	return filepath.Join(w.root, "tests", "windows", "cli", "node_modules", "@google", "gemini-cli", "bundle", "gemini.js")
}

// driveC is the prefix's C: drive on Linux.
func (w *wine) driveC() string { return filepath.Join(w.prefix, "drive_c") }

// winPath is how Windows programs name a Linux path: C:\… inside the
// prefix's drive C, Z:\… elsewhere.
func (w *wine) winPath(p string) string {
	if rel, err := filepath.Rel(w.driveC(), p); err == nil && !strings.HasPrefix(rel, "..") {
		return `C:\` + strings.ReplaceAll(rel, "/", `\`)
	}
	return "Z:" + strings.ReplaceAll(p, "/", `\`)
}

// linuxPath is the Linux path of a C:\ path.
func (w *wine) linuxPath(p string) string {
	if len(p) < 3 || !strings.EqualFold(p[:3], `C:\`) {
		panic("not on drive C: " + p)
	}
	return filepath.Join(w.driveC(), strings.ReplaceAll(p[3:], `\`, "/"))
}

// profile is the Windows user's profile folder (USERPROFILE) on Linux.
func (w *wine) profile(t *testing.T) string {
	t.Helper()
	u, err := user.Current()
	if err != nil {
		t.Fatal(err)
	}
	return filepath.Join(w.driveC(), "users", u.Username)
}

// env is the environment of a Windows program started from Linux: the
// test's, without any GEMINI_CLI_IDE_* variable, with the prefix and, for
// Node, the CLI's offline settings.
func (w *wine) env(apiURL string) []string {
	var out []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "GEMINI_CLI_IDE_") && !strings.HasPrefix(kv, "NODE_OPTIONS=") {
			out = append(out, kv)
		}
	}
	out = append(out,
		// Wine converts paths and arguments with the Unix locale's
		// encoding: UTF-8, for the project folder's non-ASCII name.
		"LANG=C.UTF-8", "LC_ALL=C.UTF-8",
		"WINEPREFIX="+w.prefix,
		"WINEDEBUG=-all",
		"TERM=xterm-256color",
		// /.dockerenv of the host shows through drive Z:, so the CLI would
		// dial host.docker.internal (a Wine artefact, see the README).
		"REMOTE_CONTAINERS=1",
		// Node under Wine: setKeepAlive on a connecting socket fails.
		"NODE_OPTIONS=--require "+w.winPath(filepath.Join(w.root, "tests", "windows", "wine", "keepalive.cjs")),
		"GEMINI_API_KEY=dummy",
		"GEMINI_CLI_TRUST_WORKSPACE=true",
		"GEMINI_CLI_NO_RELAUNCH=true",
	)
	if apiURL != "" {
		out = append(out, "GOOGLE_GEMINI_BASE_URL="+apiURL)
	}
	return out
}

// cliSettings writes the Windows user's .gemini/settings.json: API-key
// auth against the fake API, IDE mode on, nothing that reaches the network.
func (w *wine) cliSettings(t *testing.T) {
	t.Helper()
	dir := filepath.Join(w.profile(t), ".gemini")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	data, _ := json.MarshalIndent(tmuxdrive.GeminiSettings, "", "  ")
	if err := os.WriteFile(filepath.Join(dir, "settings.json"), data, 0o600); err != nil {
		t.Fatal(err)
	}
}

// geminiCmd writes gemini.cmd as npm writes it on Windows (node and the
// CLI's entry point) and returns its Windows path.
func (w *wine) geminiCmd(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(w.driveC(), "tools")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, "gemini.cmd")
	script := fmt.Sprintf("@\"%s\" \"%s\" %%*\r\n", w.winPath(w.node), w.winPath(w.geminiJS()))
	if err := os.WriteFile(p, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return w.winPath(p)
}

// workspace makes a project folder on drive C whose name has a space and
// non-ASCII letters, and returns its Linux and Windows paths.
func (w *wine) workspace(t *testing.T) (linux, windows string) {
	t.Helper()
	linux = filepath.Join(w.driveC(), "Work", fmt.Sprintf("Projet été %d", time.Now().UnixNano()))
	if err := os.MkdirAll(linux, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(linux) })
	return linux, w.winPath(linux)
}

// run runs a Windows program under a Windows parent (cmd /c) and returns
// its exit code, stdout and stderr.
func (w *wine) run(t *testing.T, dir string, env []string, args ...string) (int, string, string) {
	t.Helper()
	cmd := exec.Command("wine", append([]string{"cmd", "/c"}, args...)...)
	cmd.Dir, cmd.Env = dir, env
	var out, errb strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("wine %v: %v", args, err)
	}
	return code, strings.ReplaceAll(out.String(), "\r\n", "\n"), strings.ReplaceAll(errb.String(), "\r\n", "\n")
}

// editor plays the editor's side of the link, relayed by editorhost.exe:
// it records what the sidecar asks and answers diff/close with what the
// user would have in the diff view.
type editor struct {
	conn  *link.Conn
	raw   net.Conn // the relay to editorhost; closing it ends the link
	opens chan protocol.DiffOpenParams
	mu    sync.Mutex
	edits map[string]string // by the path diff/open named
}

func (e *editor) HandleRequest(ctx context.Context, method string, params json.RawMessage) (any, error) {
	switch method {
	case protocol.MethodDiffOpen:
		var p protocol.DiffOpenParams
		if err := json.Unmarshal(params, &p); err != nil {
			return nil, err
		}
		e.opens <- p
		return struct{}{}, nil
	case protocol.MethodDiffClose:
		var p struct {
			FilePath string `json:"filePath"`
		}
		json.Unmarshal(params, &p)
		e.mu.Lock()
		defer e.mu.Unlock()
		if c, ok := e.edits[p.FilePath]; ok {
			return map[string]any{"content": c}, nil
		}
		return map[string]any{"content": nil}, nil
	}
	return nil, link.Errorf(link.CodeMethodNotFound, "no %s here", method)
}

func (e *editor) HandleNotification(context.Context, string, json.RawMessage) {}

// editorHost starts editorhost.exe in a pane, three cmd.exe deep (with
// Wine's start.exe above them): the "editor" has ancestors enough that the
// CLI's Windows rule and the Unix one (the editor's parent) name different
// processes, as for an editor started from a launcher. It returns the link to its sidecar and the pane, whose terminal
// will run the CLI once initialize is answered.
func (w *wine) editorHost(t *testing.T, dir string, env []string, terminalEnv bool, terminal ...string) (*editor, *tmuxdrive.Pane, string) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	logFile := filepath.Join(t.TempDir(), "sidecar.log")
	args := []string{"wine", "cmd", "/c", "cmd", "/c", "cmd", "/c", w.winPath(w.exe("editorhost")),
		"-link", ln.Addr().String(), "-sidecar", w.winPath(w.exe("gemini-ide-companion")), "-sidecar-log", w.winPath(logFile)}
	if terminalEnv {
		args = append(args, "-terminal-env")
	}
	if len(terminal) == 0 {
		terminal = []string{"cmd.exe", "/d", "/c", w.geminiCmd(t)}
	}
	args = append(append(args, "--"), terminal...)
	pane := tmuxdrive.Start(t, tmuxdrive.Options{Dir: dir, Env: env, Command: args, Width: 160, Height: 50})
	conns := make(chan net.Conn, 1)
	go func() {
		if c, err := ln.Accept(); err == nil {
			conns <- c
		}
	}()
	var c net.Conn
	select {
	case c = <-conns:
	case <-time.After(60 * time.Second):
		t.Fatalf("editorhost never connected; the pane shows:\n%s", pane.Screen())
	}
	e := &editor{raw: c, opens: make(chan protocol.DiffOpenParams, 4), edits: map[string]string{}}
	e.conn = link.New(c, c, e)
	go e.conn.Serve(context.Background())
	t.Cleanup(func() {
		c.Close()
		if t.Failed() {
			data, _ := os.ReadFile(logFile)
			t.Logf("sidecar log:\n%s", tail(string(data), 4000))
		}
	})
	return e, pane, logFile
}

func tail(s string, n int) string {
	if len(s) > n {
		return "…" + s[len(s)-n:]
	}
	return s
}
