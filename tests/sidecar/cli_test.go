package sidecar

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/gemini-ide-companion/gemini-ide-companion/tests/testkit"
)

func TestVersionAndUsage(t *testing.T) {
	bin := testkit.Binary(t)
	out, err := exec.Command(bin, "--version").Output()
	if err != nil || !strings.HasPrefix(string(out), "gemini-ide-companion ") {
		t.Fatalf("--version: %q %v", out, err)
	}
	cmd := exec.Command(bin, "frobnicate")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err == nil || !strings.Contains(stderr.String(), `unknown command "frobnicate"`) {
		t.Fatalf("unknown command: %v %q", err, stderr.String())
	}
	cmd = exec.Command(bin, "--log-level", "loud", "--stdio")
	cmd.Stderr = &stderr
	if err := cmd.Run(); err == nil || !strings.Contains(stderr.String(), "invalid --log-level") {
		t.Fatalf("bad log level: %v", err)
	}
}

func TestEnvPrintsExportsForTheWorkspace(t *testing.T) {
	s := start(t)
	sub := filepath.Join(s.sb.Workspace, "pkg")
	os.Mkdir(sub, 0o700)
	cmd := exec.Command(testkit.Binary(t), "env", "--workspace", sub)
	cmd.Env = s.sb.Env()
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("env: %v", err)
	}
	for _, want := range []string{
		"export GEMINI_CLI_IDE_SERVER_PORT='" + strconv.Itoa(s.res.Port) + "'",
		"export GEMINI_CLI_IDE_AUTH_TOKEN='" + s.res.AuthToken + "'",
		"export GEMINI_CLI_IDE_WORKSPACE_PATH='" + s.sb.Workspace + "'",
		"export GEMINI_CLI_IDE_PID='" + strconv.Itoa(s.res.IDEPID) + "'",
	} {
		if !strings.Contains(string(out), want) {
			t.Fatalf("env output lacks %q:\n%s", want, out)
		}
	}
	// The lines work in a shell.
	sh := exec.Command("sh", "-c", string(out)+`printf %s "$GEMINI_CLI_IDE_SERVER_PORT"`)
	if got, err := sh.Output(); err != nil || string(got) != strconv.Itoa(s.res.Port) {
		t.Fatalf("sh: %q %v", got, err)
	}
	// Outside every served folder: a clear error, nothing on stdout.
	cmd = exec.Command(testkit.Binary(t), "env", "--workspace", s.sb.Home)
	cmd.Env = s.sb.Env()
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err = cmd.Output()
	if err == nil || len(out) != 0 || !strings.Contains(stderr.String(), "no running companion serves") {
		t.Fatalf("env outside: %q %q %v", out, stderr.String(), err)
	}
}

func TestLogFileTakesTheLogs(t *testing.T) {
	sb := testkit.NewSandbox(t)
	logPath := filepath.Join(sb.Home, "companion.log")
	ed := testkit.StartEditor(t, sb, testkit.EditorOptions{Args: []string{"--log-file", logPath}})
	ed.Initialize(t, sb, nil)
	ed.CloseStdin()
	ed.ExitCode(t, wait)
	data, err := os.ReadFile(logPath)
	if err != nil || !strings.Contains(string(data), "companion listening") {
		t.Fatalf("log file: %q %v", data, err)
	}
	if strings.Contains(ed.Stderr(), "companion listening") {
		t.Fatal("logs went to stderr as well")
	}
}
