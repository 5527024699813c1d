package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gemini-ide-companion/gemini-ide-companion/cmd/gemini-ide-companion/doctor"
	"github.com/gemini-ide-companion/gemini-ide-companion/discovery"
	"github.com/gemini-ide-companion/gemini-ide-companion/tests/fakegemini"
	"github.com/gemini-ide-companion/gemini-ide-companion/tests/testkit"
	"github.com/gemini-ide-companion/gemini-ide-companion/tests/tmuxdrive"
)

// runCmd runs the companion binary the way a user does in a shell and
// returns its exit code, stdout and stderr.
func runCmd(t *testing.T, bin, dir string, env []string, args ...string) (int, string, string) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Dir, cmd.Env = dir, env
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("run %s %v: %v", bin, args, err)
	}
	return code, out.String(), errb.String()
}

// TestHelpIsConventional: help on stdout with exit 0, bad usage on stderr
// with exit 2.
func TestHelpIsConventional(t *testing.T) {
	bin := testkit.Binary(t)
	for _, args := range [][]string{{"help"}, {"-h"}, {"--help"}, {"env", "--help"}} {
		code, out, errOut := runCmd(t, bin, t.TempDir(), os.Environ(), args...)
		if code != 0 || !strings.Contains(out, "Usage:") || errOut != "" {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want the usage on stdout and exit 0", args, code, out, errOut)
		}
		for _, sub := range []string{"env [--workspace DIR] [--port N | --pid N]", "\n  gemini-ide-companion list", "gemini-ide-companion doctor"} {
			if !strings.Contains(out, sub) {
				t.Errorf("%v: usage lacks %q", args, sub)
			}
		}
	}
	for _, args := range [][]string{{"--no-such-flag"}, {"frobnicate"}, {"env", "extra"}} {
		code, out, errOut := runCmd(t, bin, t.TempDir(), os.Environ(), args...)
		if code != 2 || out != "" || !strings.Contains(errOut, "Usage:") {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want the usage on stderr and exit 2", args, code, out, errOut)
		}
	}
}

// TestEnvListAndDoctorAgainstRunningCompanions starts two standalone
// companions, one for a project and one for a folder inside it, and runs
// env, list and doctor from a user's shell in each.
func TestEnvListAndDoctorAgainstRunningCompanions(t *testing.T) {
	tmuxdrive.Require(t)
	bin := testkit.Binary(t)
	sb := testkit.NewSandbox(t)
	sub := filepath.Join(sb.Workspace, "pkg")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	env := testkit.WithEnv(withoutIDEVars(os.Environ()), "TMPDIR="+sb.TmpDir, "SSH_CONNECTION=127.0.0.1 1 127.0.0.1 22", "PATH=/usr/bin:/bin")

	// Nothing runs yet: doctor says so and fails.
	code, out, _ := runCmd(t, bin, sb.Workspace, env, "doctor")
	if code != 1 || !strings.Contains(out, "start the companion first") {
		t.Fatalf("doctor with no companion: exit %d\n%s", code, out)
	}

	outer := tmuxdrive.Start(t, tmuxdrive.Options{Dir: sb.Workspace, Env: env, Command: []string{bin, "serve"}, Width: 200, Height: 20})
	outer.WaitFor(t, "Proposed edits appear here", 20*time.Second)
	inner := tmuxdrive.Start(t, tmuxdrive.Options{Dir: sub, Env: env, Command: []string{bin, "serve"}, Width: 200, Height: 20})
	inner.WaitFor(t, "Proposed edits appear here", 20*time.Second)
	ports := map[string]int{}
	pids := map[string]int{}
	for _, f := range sb.DiscoveryFiles() {
		d, err := discovery.Read(f)
		if err != nil {
			t.Fatal(err)
		}
		ports[d.WorkspacePath], pids[d.WorkspacePath] = d.Port, d.PID
	}
	if len(ports) != 2 || ports[sb.Workspace] == 0 || ports[sub] == 0 {
		t.Fatalf("want companions for %s and %s, have %v", sb.Workspace, sub, ports)
	}
	portOf := func(exports string) int {
		m := regexp.MustCompile(`export GEMINI_CLI_IDE_SERVER_PORT='(\d+)'`).FindStringSubmatch(exports)
		if m == nil {
			t.Fatalf("no port in env output %q", exports)
		}
		p, _ := strconv.Atoi(m[1])
		return p
	}

	// env picks what the CLI would: the most specific workspace holding the cwd.
	if code, out, errOut := runCmd(t, bin, sub, env, "env"); code != 0 || portOf(out) != ports[sub] {
		t.Fatalf("env in %s: exit %d, port %q (stderr %q), want %d", sub, code, out, errOut, ports[sub])
	} else if !strings.Contains(errOut, "2 companions serve") {
		t.Errorf("env does not say that it picked among several: %q", errOut)
	}
	if code, out, _ := runCmd(t, bin, sb.Workspace, env, "env"); code != 0 || portOf(out) != ports[sb.Workspace] {
		t.Fatalf("env in %s: exit %d %q, want port %d", sb.Workspace, code, out, ports[sb.Workspace])
	}
	if code, out, _ := runCmd(t, bin, sub, env, "env", "--port", strconv.Itoa(ports[sb.Workspace])); code != 0 || portOf(out) != ports[sb.Workspace] {
		t.Fatalf("env --port: exit %d %q", code, out)
	}
	if code, out, _ := runCmd(t, bin, sb.Workspace, env, "env", "--pid", strconv.Itoa(pids[sub])); code != 0 || portOf(out) != ports[sub] {
		t.Fatalf("env --pid: exit %d %q", code, out)
	}
	if code, _, errOut := runCmd(t, bin, sub, env, "env", "--port", "1"); code != 1 || !strings.Contains(errOut, "list") {
		t.Fatalf("env --port for no companion: exit %d %q", code, errOut)
	}

	// list shows both, with their PIDs and ports.
	code, out, _ = runCmd(t, bin, sub, env, "list")
	if code != 0 {
		t.Fatalf("list: exit %d", code)
	}
	for ws, port := range ports {
		if !regexp.MustCompile(`Gemini IDE Companion\s+` + regexp.QuoteMeta(ws) + `\s+` + strconv.Itoa(pids[ws]) + `\s+\d+\s+` + strconv.Itoa(port) + `\s+\d+s`).MatchString(out) {
			t.Errorf("list lacks %s (pid %d, port %d):\n%s", ws, pids[ws], port, out)
		}
	}

	// doctor in the inner folder: would connect, after a real initialize.
	code, out, _ = runCmd(t, bin, sub, env, "doctor", "--json")
	var rep doctor.Report
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("doctor --json: %v\n%s", err, out)
	}
	if code != 0 || !rep.WouldConnect {
		t.Fatalf("doctor says a CLI would not connect (exit %d):\n%s", code, out)
	}
	if !strings.Contains(out, fmt.Sprintf("MCP initialize on 127.0.0.1:%d with the file's token succeeded", ports[sub])) {
		t.Errorf("doctor did not initialize against the inner companion:\n%s", out)
	}

	// A variable left over from a stopped companion: doctor explains it.
	code, out, _ = runCmd(t, bin, sub, testkit.WithEnv(env, "GEMINI_CLI_IDE_SERVER_PORT=1"), "doctor")
	if code != 1 || !strings.Contains(out, "GEMINI_CLI_IDE_SERVER_PORT=1 names no live companion") || !strings.Contains(out, "fix: unset GEMINI_CLI_IDE_SERVER_PORT") {
		t.Errorf("doctor with a stale GEMINI_CLI_IDE_SERVER_PORT: exit %d\n%s", code, out)
	}
	// Outside any served folder.
	code, out, _ = runCmd(t, bin, sb.Home, env, "doctor")
	if code != 1 || !strings.Contains(out, "Directory mismatch") {
		t.Errorf("doctor outside the workspaces: exit %d\n%s", code, out)
	}
	// The container trap, where this machine has it.
	if _, err := os.Stat("/.dockerenv"); err == nil {
		code, out, _ = runCmd(t, bin, sub, testkit.WithEnv(env, "SSH_CONNECTION=", "REMOTE_CONTAINERS="), "doctor")
		if code != 1 || !strings.Contains(out, "REMOTE_CONTAINERS=1") {
			t.Errorf("doctor in a container without REMOTE_CONTAINERS: exit %d\n%s", code, out)
		}
	}
	// A stale file (its processes are gone) is named as stale.
	stale := filepath.Join(sb.DiscoveryDir(), discovery.FileName(999999, 1))
	if err := os.WriteFile(stale, []byte(`{"port":1,"workspacePath":"`+sub+`","authToken":"x","ideInfo":{"name":"x","displayName":"Ghost"},"pid":999999}`), 0o600); err != nil {
		t.Fatal(err)
	}
	code, out, _ = runCmd(t, bin, sub, env, "doctor")
	if code != 0 || !strings.Contains(out, "Ghost") || !strings.Contains(out, "(stale)") || !strings.Contains(out, "rm "+stale) {
		t.Errorf("doctor with a stale file: exit %d\n%s", code, out)
	}
}

// TestBannerEnvLineConnectsTheCLI: the banner's eval line works as printed
// in a shell without the companion on PATH, and points the CLI at that
// companion even though another serves the same folder.
func TestBannerEnvLineConnectsTheCLI(t *testing.T) {
	tmuxdrive.Require(t)
	gemini := tmuxdrive.GeminiBin(t)
	bin := testkit.Binary(t)
	sb := testkit.NewSandbox(t)
	api := fakegemini.Start(t)
	if _, err := exec.LookPath("bash"); err != nil {
		tmuxdrive.Missing(t, "bash is not installed")
	}
	target := filepath.Join(sb.Workspace, "notes.txt")
	if err := os.WriteFile(target, []byte("one\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	env := tmuxdrive.MergeEnv(withoutIDEVars(os.Environ()), "TMPDIR="+sb.TmpDir, "NO_COLOR=1")
	first := tmuxdrive.Start(t, tmuxdrive.Options{Dir: sb.Workspace, Env: env, Command: []string{bin, "serve"}, Width: 220, Height: 40})
	first.WaitFor(t, "Proposed edits appear here", 20*time.Second)
	second := tmuxdrive.Start(t, tmuxdrive.Options{Dir: sb.Workspace, Env: env, Command: []string{bin, "serve"}, Width: 220, Height: 40})
	second.WaitFor(t, "Proposed edits appear here", 20*time.Second)

	// Take the banner's line from whichever companion a plain gemini would
	// not pick (the CLI prefers the newest IDE PID; both have their own).
	code, out, _ := runCmd(t, bin, sb.Workspace, env, "env")
	if code != 0 {
		t.Fatalf("env: exit %d", code)
	}
	chosen, other := first, second
	if strings.Contains(first.Screen(), fmt.Sprintf("127.0.0.1:%d.", portFromExports(t, out))) {
		chosen, other = second, first
	}
	line := regexp.MustCompile(`eval "\$\(.*\)"`).FindString(chosen.Screen())
	if !strings.HasPrefix(line, `eval "$('/`) {
		t.Fatalf("the banner has no eval line with an absolute path:\n%s", chosen.Screen())
	}

	// A shell whose PATH has gemini but not the companion.
	genv := tmuxdrive.MergeEnv(env, tmuxdrive.GeminiEnv(t, sb.Home, sb.TmpDir, api.URL)...)
	shell := tmuxdrive.Start(t, tmuxdrive.Options{Dir: sb.Workspace, Env: tmuxdrive.MergeEnv(genv, "PS1=$ "), Command: []string{"bash", "--norc", "--noprofile"}, Width: 160, Height: 50})
	shell.Type(t, line+" && echo EVAL-OK")
	shell.WaitFor(t, "EVAL-OK", 10*time.Second)
	shell.Type(t, "exec "+gemini)
	shell.WaitFor(t, "Type your message", 60*time.Second)
	// The CLI connects to the IDE in the background: wait for it before
	// prompting, or the edit is confirmed in the CLI alone.
	ideStatus(t, shell, "Gemini IDE Companion", 30*time.Second)

	proposed := "one\ntwo\n"
	api.Reply(fakegemini.Call("write_file", map[string]any{"file_path": target, "content": proposed}))
	shell.Type(t, "add a line to notes.txt")
	waitQuestion(t, chosen, "+two")
	if strings.Contains(other.Screen(), "+two") {
		t.Fatalf("the other companion shows the diff too:\n%s", other.Screen())
	}
	chosen.Keys(t, "a")
	waitFile(t, target, proposed, 30*time.Second, shell)
}

func portFromExports(t *testing.T, exports string) int {
	t.Helper()
	m := regexp.MustCompile(`GEMINI_CLI_IDE_SERVER_PORT='(\d+)'`).FindStringSubmatch(exports)
	if m == nil {
		t.Fatalf("no port in %q", exports)
	}
	p, _ := strconv.Atoi(m[1])
	return p
}

// ideStatus runs /ide status in the CLI and waits for "Connected to
// <name>". On a loaded machine the CLI can take the Enter that follows the
// typed command as part of a paste and leave the command in its input
// box; then Enter is pressed again, as a user would.
func ideStatus(t *testing.T, cli *tmuxdrive.Pane, name string, timeout time.Duration) {
	t.Helper()
	cli.Type(t, "/ide status")
	deadline := time.Now().Add(timeout)
	retried := time.Now()
	for {
		s := cli.Screen()
		if strings.Contains(s, "Connected to "+name) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the CLI never showed %q; the screen is:\n%s", "Connected to "+name, s)
		}
		if time.Since(retried) > 3*time.Second && strings.Contains(s, "> /ide status") {
			cli.Keys(t, "Enter")
			retried = time.Now()
		}
		time.Sleep(100 * time.Millisecond)
	}
}
