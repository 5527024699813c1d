//go:build unix

package hardening

import (
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/gemini-ide-companion/gemini-ide-companion/discovery"
	"github.com/gemini-ide-companion/gemini-ide-companion/tests/testkit"
)

// nobody is the uid that owns an attacker's folders in these tests.
const nobody = 65534

func mode(t *testing.T, path string) fs.FileMode {
	t.Helper()
	st, err := os.Lstat(path)
	if err != nil {
		t.Fatal(err)
	}
	return st.Mode()
}

func owner(t *testing.T, path string) int {
	t.Helper()
	st, err := os.Lstat(path)
	if err != nil {
		t.Fatal(err)
	}
	return int(st.Sys().(*syscall.Stat_t).Uid)
}

// TestDiscoveryIsPrivateUnderAPermissiveUmask runs the sidecar with umask
// 000, as some desktop sessions do: the token must still be readable by
// its owner only. Not parallel: the umask is the test process's, and the
// child inherits it when it starts.
func TestDiscoveryIsPrivateUnderAPermissiveUmask(t *testing.T) {
	testkit.Binary(t) // built before the umask changes
	sb := testkit.NewSandbox(t)
	old := syscall.Umask(0)
	ed := testkit.StartEditor(t, sb, testkit.EditorOptions{})
	syscall.Umask(old)
	res := ed.Initialize(t, sb, nil)
	if res.DiscoveryFile == "" {
		t.Fatalf("no discovery file:\n%s", ed.Stderr())
	}
	dir := sb.DiscoveryDir()
	for path, want := range map[string]fs.FileMode{
		res.DiscoveryFile: 0o600,
		dir:               fs.ModeDir | 0o700,
		filepath.Dir(dir): fs.ModeDir | 0o700,
	} {
		if got := mode(t, path); got != want {
			t.Errorf("%s: mode %v, want %v", path, got, want)
		}
	}
	// A rewrite keeps it private too.
	other := filepath.Join(sb.Home, "other")
	os.Mkdir(other, 0o700)
	ed.Notify(t, "workspace/foldersChanged", map[string]any{"workspaceFolders": []string{other}})
	ed.WaitFor(t, "workspace/envChanged", wait, nil)
	if got := mode(t, res.DiscoveryFile); got != 0o600 {
		t.Errorf("rewritten file: mode %v", got)
	}
	if files := sb.DiscoveryFiles(); len(files) != 1 {
		t.Errorf("files after rewrite: %v", files)
	}
}

// planted describes a discovery folder someone prepared before the sidecar
// started.
type planted struct {
	name string
	// setup prepares TMPDIR/gemini (and maybe gemini/ide) in tmp and
	// returns the folder whose state must not change.
	setup func(t *testing.T, tmp string) string
	// reason is what the sidecar must log about it.
	reason string
}

func chownNobody(t *testing.T, path string) {
	t.Helper()
	if err := os.Lchown(path, nobody, nobody); err != nil {
		if errors.Is(err, syscall.EPERM) {
			t.Skip("needs root to give a folder to another user")
		}
		t.Fatal(err)
	}
}

func mkdir(t *testing.T, path string, perm fs.FileMode) {
	t.Helper()
	if err := os.Mkdir(path, perm); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, perm); err != nil { // past the umask
		t.Fatal(err)
	}
}

var unsafeDirs = []planted{
	{"ide folder of another user", func(t *testing.T, tmp string) string {
		mkdir(t, filepath.Join(tmp, "gemini"), 0o700)
		ide := filepath.Join(tmp, "gemini", "ide")
		mkdir(t, ide, 0o777)
		chownNobody(t, ide)
		return ide
	}, "belongs to uid 65534"},
	{"gemini folder of another user", func(t *testing.T, tmp string) string {
		g := filepath.Join(tmp, "gemini")
		mkdir(t, g, 0o755)
		chownNobody(t, g)
		return g
	}, "belongs to uid 65534"},
	{"gemini folder writable by everyone", func(t *testing.T, tmp string) string {
		g := filepath.Join(tmp, "gemini")
		mkdir(t, g, 0o777)
		return g
	}, "writable by everyone"},
	{"gemini folder is a link", func(t *testing.T, tmp string) string {
		elsewhere := filepath.Join(tmp, "elsewhere")
		mkdir(t, elsewhere, 0o700)
		if err := os.Symlink(elsewhere, filepath.Join(tmp, "gemini")); err != nil {
			t.Fatal(err)
		}
		return elsewhere
	}, "is a symbolic link"},
	{"ide folder is a link", func(t *testing.T, tmp string) string {
		mkdir(t, filepath.Join(tmp, "gemini"), 0o700)
		elsewhere := filepath.Join(tmp, "elsewhere")
		mkdir(t, elsewhere, 0o777)
		if err := os.Symlink(elsewhere, filepath.Join(tmp, "gemini", "ide")); err != nil {
			t.Fatal(err)
		}
		return elsewhere
	}, "is a symbolic link"},
	{"ide is a file", func(t *testing.T, tmp string) string {
		mkdir(t, filepath.Join(tmp, "gemini"), 0o700)
		f := filepath.Join(tmp, "gemini", "ide")
		if err := os.WriteFile(f, []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
		return f
	}, "is not a directory"},
}

// TestUnsafeDiscoveryFoldersAreRefused plants discovery folders that
// others could read or swap. The sidecar must write its token into none of
// them, say why, and keep serving the CLIs that have its environment.
func TestUnsafeDiscoveryFoldersAreRefused(t *testing.T) {
	t.Parallel()
	for _, c := range unsafeDirs {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			sb := testkit.NewSandbox(t)
			kept := c.setup(t, sb.TmpDir)
			before := mode(t, kept)
			ownerBefore := owner(t, kept)

			ed := testkit.StartEditor(t, sb, testkit.EditorOptions{})
			res := ed.Initialize(t, sb, nil)
			if res.DiscoveryFile != "" {
				t.Fatalf("discovery file written to an unsafe folder: %s", res.DiscoveryFile)
			}
			if res.Port == 0 || res.Env["GEMINI_CLI_IDE_SERVER_PORT"] != strconv.Itoa(res.Port) || res.Env["GEMINI_CLI_IDE_AUTH_TOKEN"] != res.AuthToken {
				t.Fatalf("initialize must still give the port and env: %+v", res)
			}
			if got := tokenFiles(t, sb.TmpDir, res.AuthToken); len(got) > 0 {
				t.Fatalf("the token was written to %v", got)
			}
			if mode(t, kept) != before || owner(t, kept) != ownerBefore {
				t.Fatalf("the planted %s was modified", kept)
			}
			logged := testkit.Poll(wait, func() bool {
				stderr := ed.Stderr()
				return strings.Contains(stderr, "unsafe discovery directory") && strings.Contains(stderr, c.reason)
			})
			if !logged {
				t.Fatalf("the refusal is not logged with its reason (%q):\n%s", c.reason, ed.Stderr())
			}
			ed.WaitFor(t, "log", wait, func(p json.RawMessage) bool {
				return strings.Contains(string(p), `"warn"`) && strings.Contains(string(p), "discovery file")
			})

			// A CLI started with the editor's environment connects.
			port, _ := strconv.Atoi(res.Env["GEMINI_CLI_IDE_SERVER_PORT"])
			cli := testkit.ConnectCLI(t, port, res.Env["GEMINI_CLI_IDE_AUTH_TOKEN"])
			if _, err := cli.Session.ListTools(context.Background(), nil); err != nil {
				t.Fatalf("CLI with the env cannot use the sidecar: %v", err)
			}
			cli.WaitFor(t, "ide/contextUpdate", wait, nil)
			s := &sidecar{sb: sb, ed: ed, res: res}
			if st := s.status(t); st.DiscoveryFile != "" || st.ConnectedClients != 1 {
				t.Fatalf("status %+v", st)
			}
			s.noCrash(t)
		})
	}
}

// tokenFiles lists the files under root that contain token.
func tokenFiles(t *testing.T, root, token string) []string {
	t.Helper()
	var found []string
	filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return nil
		}
		if data, err := os.ReadFile(p); err == nil && strings.Contains(string(data), token) {
			found = append(found, p)
		}
		return nil
	})
	return found
}

// TestSafeDiscoveryFoldersAreUsed: a shared folder with the sticky bit (as
// /tmp is) is safe, and the user's own "ide" folder left open is closed.
func TestSafeDiscoveryFoldersAreUsed(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name  string
		setup func(t *testing.T, tmp string)
	}{
		{"gemini folder shared with the sticky bit", func(t *testing.T, tmp string) {
			mkdir(t, filepath.Join(tmp, "gemini"), fs.ModeSticky|0o777)
		}},
		{"own ide folder open to everyone", func(t *testing.T, tmp string) {
			mkdir(t, filepath.Join(tmp, "gemini"), 0o700)
			mkdir(t, filepath.Join(tmp, "gemini", "ide"), 0o777)
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			sb := testkit.NewSandbox(t)
			c.setup(t, sb.TmpDir)
			ed := testkit.StartEditor(t, sb, testkit.EditorOptions{})
			res := ed.Initialize(t, sb, nil)
			if res.DiscoveryFile == "" {
				t.Fatalf("no discovery file:\n%s", ed.Stderr())
			}
			if got := mode(t, sb.DiscoveryDir()); got != fs.ModeDir|0o700 {
				t.Fatalf("ide folder mode %v, want drwx------", got)
			}
			if got := mode(t, res.DiscoveryFile); got != 0o600 {
				t.Fatalf("file mode %v", got)
			}
		})
	}
}

// TestLinkPlantedAtTheDiscoveryFileIsReplacedNotFollowed: a link put where
// the file goes (here by whoever can write the folder: only the user) must
// not make the sidecar write the token through it.
func TestLinkPlantedAtTheDiscoveryFileIsReplacedNotFollowed(t *testing.T) {
	t.Parallel()
	s := start(t)
	victim := filepath.Join(s.sb.Home, "victim")
	if err := os.WriteFile(victim, []byte("keep me"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(s.res.DiscoveryFile); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(victim, s.res.DiscoveryFile); err != nil {
		t.Fatal(err)
	}
	// The next rewrite of the discovery file.
	ed := s.ed
	ed.Notify(t, "workspace/foldersChanged", map[string]any{"workspaceFolders": []string{s.sb.Workspace, s.sb.Home}})
	ed.WaitFor(t, "workspace/envChanged", wait, nil)
	if data, _ := os.ReadFile(victim); string(data) != "keep me" {
		t.Fatalf("the link's target was written: %q", data)
	}
	if m := mode(t, s.res.DiscoveryFile); m != 0o600 {
		t.Fatalf("discovery file is %v, want a regular file with mode 0600", m)
	}
	f, err := discovery.Read(s.res.DiscoveryFile)
	if err != nil || f.AuthToken != s.res.AuthToken {
		t.Fatalf("discovery file after rewrite: %+v %v", f, err)
	}
	s.noCrash(t)
}

// TestTokenIsNeverLogged drives a whole session at debug level, with every
// refusal the guard knows, and looks for the token in everything the
// sidecar logged.
func TestTokenIsNeverLogged(t *testing.T) {
	t.Parallel()
	for _, level := range []string{"debug", "info"} {
		t.Run(level, func(t *testing.T) {
			t.Parallel()
			sb := testkit.NewSandbox(t)
			logFile := filepath.Join(sb.Home, "companion.log")
			ed := testkit.StartEditor(t, sb, testkit.EditorOptions{Args: []string{"--log-level", level, "--log-file", logFile}})
			res := ed.Initialize(t, sb, nil)
			s := &sidecar{sb: sb, ed: ed, res: res}
			tok := res.AuthToken

			for _, a := range authAttacks(tok) {
				s.send(t, "POST", s.host(), a.query, a.headers(tok, ""), initBody)
			}
			s.send(t, "POST", "evil.example:1", "", goodHeaders(tok, ""), initBody)
			cli := testkit.ConnectCLI(t, res.Port, tok)
			path := filepath.Join(sb.Workspace, "secret.txt")
			if r, err := cli.OpenDiff(context.Background(), path, "x\n"); err != nil || r.IsError {
				t.Fatalf("openDiff: %v", err)
			}
			ed.Notify(t, "diff/accepted", map[string]any{"filePath": path, "content": "x\n"})
			cli.WaitFor(t, "ide/diffAccepted", wait, nil)
			ed.Notify(t, "workspace/foldersChanged", map[string]any{"workspaceFolders": []string{sb.Home}})
			ed.WaitFor(t, "workspace/envChanged", wait, nil)
			cli.Session.Close()
			if err := ed.Call(wait, "shutdown", nil, nil); err != nil {
				t.Fatal(err)
			}
			ed.ExitCode(t, wait)

			logs, err := os.ReadFile(logFile)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(string(logs), "request refused") || !strings.Contains(string(logs), "diff accepted") {
				t.Fatalf("the log file lacks the session's events:\n%s", logs)
			}
			for name, text := range map[string]string{"log file": string(logs), "stderr": ed.Stderr()} {
				if strings.Contains(text, tok) {
					t.Fatalf("the token appears in the %s", name)
				}
			}
			if m := mode(t, logFile); m != 0o600 {
				t.Fatalf("log file mode %v", m)
			}
		})
	}
}
