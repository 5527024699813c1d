package launch

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/gemini-ide-companion/gemini-ide-companion/internal/testproc"
)

// npmCmdShim is what npm 11 (cmd-shim) writes as PREFIX\gemini-cli-a2a-server.cmd
// for a global install on Windows.
const npmCmdShim = `@ECHO off
GOTO start
:find_dp0
SET dp0=%~dp0
EXIT /b
:start
SETLOCAL
CALL :find_dp0

IF EXIST "%dp0%\node.exe" (
  SET "_prog=%dp0%\node.exe"
) ELSE (
  SET "_prog=node"
  SET PATHEXT=%PATHEXT:;.JS;=;%
)

endLocal & goto #_undefined_# 2>NUL || title %COMSPEC% & "%_prog%"  "%dp0%\node_modules\@google\gemini-cli-a2a-server\dist\a2a-server.mjs" %*
`

// npmShShim is the sh shim npm writes next to it (for Git Bash and the like),
// here in a pnpm-style folder where only the shim says where the script is.
const npmShShim = `#!/bin/sh
basedir=$(dirname "$(echo "$0" | sed -e 's,\\,/,g')")
if [ -x "$basedir/node" ]; then
  exec "$basedir/node"  "$basedir/../store/gemini-cli-a2a-server/dist/a2a-server.mjs" "$@"
else
  exec node  "$basedir/../store/gemini-cli-a2a-server/dist/a2a-server.mjs" "$@"
fi
`

func writeFile(t *testing.T, path, content string, mode os.FileMode) string {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), mode); err != nil {
		t.Fatal(err)
	}
	return path
}

func symlink(t *testing.T, target, link string) {
	t.Helper()
	testproc.NeedSymlinks(t)
	if err := os.MkdirAll(filepath.Dir(link), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, link); err != nil {
		t.Skipf("cannot make symbolic links here: %v", err)
	}
}

// wantScript checks that cmd runs script with node.
func wantScript(t *testing.T, cmd []string, script string, args ...string) {
	t.Helper()
	want, _ := filepath.EvalSymlinks(script)
	if len(cmd) < 2 || !strings.HasPrefix(strings.ToLower(filepath.Base(cmd[0])), "node") {
		t.Fatalf("command %q; want node %s", cmd, want)
	}
	got, _ := filepath.EvalSymlinks(cmd[1])
	if got != want || strings.Join(cmd[2:], " ") != strings.Join(args, " ") {
		t.Fatalf("command %q; want node %s %s", cmd, want, strings.Join(args, " "))
	}
}

// An npm global install on Linux and macOS: PREFIX/bin holds a link to the
// script, which only starts when run under its own name. The command found
// on PATH runs the real script with node.
func TestFindResolvesTheGlobalNpmLink(t *testing.T) {
	prefix := t.TempDir()
	script := writeFile(t, filepath.Join(prefix, "lib", "node_modules", serverScript), "// server\n", 0o755)
	bin := filepath.Join(prefix, "bin", ServerBin)
	symlink(t, filepath.Join("..", "lib", "node_modules", serverScript), bin)
	cmd, err := Find(t.TempDir(), []string{"PATH=" + filepath.Join(prefix, "bin")}, "--server-command")
	if err != nil {
		t.Fatal(err)
	}
	wantScript(t, cmd, script)
	// The same command given explicitly is resolved the same way.
	wantScript(t, Resolve([]string{ServerBin, "--flag"}, []string{"PATH=" + filepath.Join(prefix, "bin")}), script, "--flag")
	wantScript(t, Resolve([]string{bin}, nil), script)
}

// A local install: node_modules/.bin holds the link, found upward from the
// workspace.
func TestFindResolvesALocalNodeModulesBin(t *testing.T) {
	root := t.TempDir()
	script := writeFile(t, filepath.Join(root, "node_modules", serverScript), "// server\n", 0o755)
	symlink(t, filepath.Join("..", serverScript), filepath.Join(root, "node_modules", ".bin", ServerBin))
	ws := filepath.Join(root, "a", "b")
	if err := os.MkdirAll(ws, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd, err := Find(ws, []string{"PATH="}, "")
	if err != nil {
		t.Fatal(err)
	}
	wantScript(t, cmd, script)
}

// npm's Windows shims are scripts, not links: the script is read from them
// (the global layout, PREFIX\node_modules\…), and a shim in another layout
// is followed to the script it names.
func TestShimsLeadToTheScript(t *testing.T) {
	prefix := t.TempDir()
	script := writeFile(t, filepath.Join(prefix, "node_modules", serverScript), "// server\n", 0o644)
	cmdShim := writeFile(t, filepath.Join(prefix, ServerBin+".cmd"), npmCmdShim, 0o755)
	if got, ok := nodeScript(cmdShim); !ok || got != script {
		t.Fatalf("script of %s = %q, %v; want %s", cmdShim, got, ok, script)
	}

	pnpm := t.TempDir()
	script = writeFile(t, filepath.Join(pnpm, "store", "gemini-cli-a2a-server", "dist", "a2a-server.mjs"), "// server\n", 0o644)
	shim := writeFile(t, filepath.Join(pnpm, "bin", ServerBin), npmShShim, 0o755)
	if got, ok := nodeScript(shim); !ok || filepath.Clean(got) != script {
		t.Fatalf("script of %s = %q, %v; want %s", shim, got, ok, script)
	}
	if runtime.GOOS == "windows" {
		// A shell shim without an extension is no command on Windows: the
		// .cmd beside it is the one found there (above).
		return
	}
	cmd, err := Find(t.TempDir(), []string{"PATH=" + filepath.Join(pnpm, "bin")}, "")
	if err != nil {
		t.Fatal(err)
	}
	wantScript(t, cmd, script)
}

// Commands that are not links to a Node script run as given.
func TestResolveKeepsOtherCommands(t *testing.T) {
	wrapper := writeFile(t, filepath.Join(t.TempDir(), "start-agent.sh"), "#!/bin/sh\nexec node server.mjs\n", 0o755)
	for _, cmd := range [][]string{{"node", "/x/a2a-server.mjs"}, {wrapper, "--port", "1"}, {"no-such-command-here"}} {
		if got := Resolve(cmd, nil); strings.Join(got, " ") != strings.Join(cmd, " ") {
			t.Fatalf("Resolve(%q) = %q; want it unchanged", cmd, got)
		}
	}
}

// Nothing installed: the error says how to install the server and names the
// caller's own setting for the command.
func TestFindSaysHowToInstall(t *testing.T) {
	_, err := Find(t.TempDir(), []string{"PATH=" + t.TempDir()}, "the plugin's agent command option")
	var nf *NotFoundError
	if !errors.As(err, &nf) {
		t.Fatalf("Find = %v; want a NotFoundError", err)
	}
	for _, want := range []string{InstallCommand, "the plugin's agent command option", ServerBin} {
		if !strings.Contains(err.Error(), want) {
			t.Fatalf("error %q does not mention %q", err, want)
		}
	}
}

// fakeServerEnv makes this test binary act as a server that says something
// and exits (see TestMain).
const fakeServerEnv = "LAUNCH_TEST_FAKE_SERVER"

func TestMain(m *testing.M) {
	if spec := os.Getenv(starterEnv); spec != "" {
		runStarter(spec)
	}
	if spec := os.Getenv(fakeServerEnv); spec != "" {
		code, said, _ := strings.Cut(spec, ":")
		if said != "" {
			fmt.Println(said)
		}
		n := 0
		fmt.Sscan(code, &n)
		os.Exit(n)
	}
	os.Exit(m.Run())
}

// A server that exits before it listens is reported with what was run, how
// it ended (never "<nil>") and what to do, in the caller's words.
func TestEarlyExitSaysWhatRanAndWhatToDo(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for _, c := range []struct {
		spec string
		want []string
	}{
		{"0:", []string{"exit status 0", "without starting", "dist/a2a-server.mjs", "--server-command"}},
		{"1:[ERROR] 2026-01-01 -- [Config] Unable to set GeneratorConfig. Please provide a GEMINI_API_KEY or set USE_CCPA.",
			[]string{"exit status 1", "Please provide a GEMINI_API_KEY", "--server-command"}},
	} {
		_, err := Start(ctx, Options{Command: []string{self, "-test.run=^$"}, Dir: t.TempDir(), Env: []string{fakeServerEnv + "=" + c.spec, "HOME=" + t.TempDir()},
			Setting: "--server-command"})
		var exit *ExitError
		if !errors.As(err, &exit) {
			t.Fatalf("Start = %v; want an ExitError", err)
		}
		msg := err.Error()
		if strings.Contains(msg, "<nil>") || !strings.Contains(msg, self) {
			t.Fatalf("error %q: want the command run, and no <nil>", msg)
		}
		for _, w := range c.want {
			if !strings.Contains(msg, w) {
				t.Fatalf("error %q does not mention %q", msg, w)
			}
		}
	}
	// A program that cannot run at all says so.
	_, err = Start(ctx, Options{Command: []string{filepath.Join(t.TempDir(), "missing")}, Dir: t.TempDir(), Setting: "--server-command"})
	if err == nil || !strings.Contains(err.Error(), "Node.js") || !strings.Contains(err.Error(), InstallCommand) {
		t.Fatalf("missing program: %v", err)
	}
}
