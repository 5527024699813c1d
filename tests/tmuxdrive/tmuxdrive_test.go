//go:build unix

package tmuxdrive_test

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gemini-ide-companion/gemini-ide-companion/tests/tmuxdrive"
)

func TestTypeReachesTheProgramAndExitIsSeen(t *testing.T) {
	dir := t.TempDir()
	p := tmuxdrive.Start(t, tmuxdrive.Options{
		Dir: dir,
		Env: tmuxdrive.MergeEnv(os.Environ(), "DRIVE_GREETING=hello-from-env"),
		Command: []string{"sh", "-c",
			`printf 'ready %s\n' "$DRIVE_GREETING"; pwd; read line; echo "got:[$line]"; exit 3`},
		Width: 80, Height: 20,
	})
	p.WaitFor(t, "ready hello-from-env", 10*time.Second)
	real, err := filepath.EvalSymlinks(dir)
	if err != nil {
		t.Fatal(err)
	}
	p.WaitFor(t, real, 5*time.Second)
	p.Type(t, "two words")
	p.WaitFor(t, "got:[two words]", 5*time.Second)
	// tmux (3.3) sometimes marks the pane dead without ever collecting the
	// status; then WaitExit says so with UnknownStatus. A status it did
	// collect must be the program's.
	if status := p.WaitExit(t, 5*time.Second); status != 3 && status != tmuxdrive.UnknownStatus {
		t.Fatalf("exit status = %d, want 3", status)
	}
	// The last output stays readable after the program exits.
	if !strings.Contains(p.Screen(), "got:[two words]") {
		t.Fatalf("output gone after exit:\n%s", p.Screen())
	}
}

func TestKeysSendsNamedKeys(t *testing.T) {
	p := tmuxdrive.Start(t, tmuxdrive.Options{
		Command: []string{"sh", "-c", `trap 'echo interrupted; exit 0' INT; echo waiting; while :; do sleep 0.1; done`},
	})
	p.WaitFor(t, "waiting", 10*time.Second)
	p.Keys(t, "C-c")
	p.WaitFor(t, "interrupted", 5*time.Second)
}

func TestPanesAreIsolatedAndKilledAtCleanup(t *testing.T) {
	var pids []int
	t.Run("panes", func(t *testing.T) {
		a := tmuxdrive.Start(t, tmuxdrive.Options{Command: []string{"sh", "-c", "echo pane-A; exec sleep 600"}})
		b := tmuxdrive.Start(t, tmuxdrive.Options{Command: []string{"sh", "-c", "echo pane-B; exec sleep 600"}})
		a.WaitFor(t, "pane-A", 10*time.Second)
		b.WaitFor(t, "pane-B", 10*time.Second)
		if strings.Contains(a.Screen(), "pane-B") || strings.Contains(b.Screen(), "pane-A") {
			t.Fatalf("panes share a screen:\nA:\n%s\nB:\n%s", a.Screen(), b.Screen())
		}
		pids = append(pids, a.PID(t), b.PID(t))

		// A program that leaves a grandchild behind in a session of its
		// own, deaf to the hangup: it must not outlive the test either.
		pidFile := filepath.Join(t.TempDir(), "pid")
		c := tmuxdrive.Start(t, tmuxdrive.Options{Command: []string{"sh", "-c",
			`setsid sh -c 'trap "" HUP; echo $$ > "$1"; exec sleep 600' sh "$0" & wait`, pidFile}})
		var data []byte
		deadline := time.Now().Add(10 * time.Second)
		for len(strings.TrimSpace(string(data))) == 0 {
			if time.Now().After(deadline) {
				t.Fatalf("the detached child never wrote its pid; screen:\n%s", c.Screen())
			}
			time.Sleep(20 * time.Millisecond)
			data, _ = os.ReadFile(pidFile)
		}
		pid, err := strconv.Atoi(strings.TrimSpace(string(data)))
		if err != nil {
			t.Fatal(err)
		}
		pids = append(pids, pid)
	})
	deadline := time.Now().Add(10 * time.Second)
	for _, pid := range pids {
		for {
			err := syscall.Kill(pid, 0)
			if errors.Is(err, syscall.ESRCH) {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("process %d still runs after its test ended (kill: %v)", pid, err)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
}

func TestMergeEnv(t *testing.T) {
	got := tmuxdrive.MergeEnv([]string{"A=1", "B=2", "NOEQ"}, "B=3", "C=4", "A=")
	want := []string{"A=", "B=3", "NOEQ", "C=4"}
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("MergeEnv = %q, want %q", got, want)
	}
}

func TestGeminiEnvPreparesHome(t *testing.T) {
	home, tmp := t.TempDir(), t.TempDir()
	env := tmuxdrive.GeminiEnv(t, home, tmp, "http://127.0.0.1:9")
	data, err := os.ReadFile(filepath.Join(home, ".gemini", "settings.json"))
	if err != nil {
		t.Fatalf("settings.json: %v", err)
	}
	for _, want := range []string{`"selectedType": "gemini-api-key"`, `"enabled": true`} {
		if !strings.Contains(string(data), want) {
			t.Fatalf("settings.json lacks %s:\n%s", want, data)
		}
	}
	joined := strings.Join(env, "\n")
	for _, want := range []string{"HOME=" + home, "TMPDIR=" + tmp, "GOOGLE_GEMINI_BASE_URL=http://127.0.0.1:9",
		"GEMINI_API_KEY=dummy", "GEMINI_CLI_TRUST_WORKSPACE=true", "SSH_CONNECTION="} {
		if !strings.Contains(joined, want) {
			t.Fatalf("GeminiEnv lacks %q:\n%s", want, joined)
		}
	}
	bin := tmuxdrive.GeminiBin(t)
	if !strings.Contains(joined, "PATH="+filepath.Dir(bin)) {
		t.Fatalf("PATH does not start with the CLI's bin dir:\n%s", joined)
	}
}
