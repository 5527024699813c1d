package launch

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

func gitLog(t *testing.T, repo string) string {
	t.Helper()
	cmd := exec.Command("git", "--git-dir", filepath.Join(repo, ".git"), "log", "--format=%an <%ae> %s", "main")
	cmd.Env = shadowGitEnv(repo)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git log in %s: %v: %s", repo, err, out)
	}
	return strings.TrimSpace(string(out))
}

// Many servers starting at once for one workspace leave exactly the
// repository the A2A server would have made: branch main, one empty
// "Initial commit" by Gemini CLI, whatever the user's Git identity says.
func TestHistoryRepositoryIsMadeOnceAsTheServerWould(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("needs git")
	}
	t.Setenv("GIT_AUTHOR_NAME", "Someone Else")
	t.Setenv("GIT_DIR", "/nonexistent")
	home, ws := t.TempDir(), t.TempDir()
	env := []string{"HOME=/elsewhere", "USERPROFILE=/elsewhere", "HOME=" + home, "USERPROFILE=" + home}

	var wg sync.WaitGroup
	errs := make([]error, 6)
	for i := range errs {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			errs[i] = prepareHistory(context.Background(), ws, env)
		}(i)
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatalf("prepareHistory: %v", err)
		}
	}
	sum := sha256.Sum256([]byte(ws))
	repo := filepath.Join(home, ".gemini", "history", hex.EncodeToString(sum[:]))
	if got, want := gitLog(t, repo), "Gemini CLI <gemini-cli@google.com> Initial commit"; got != want {
		t.Fatalf("history log = %q; want %q", got, want)
	}
	leftovers, _ := filepath.Glob(filepath.Join(home, ".gemini", "history", ".*"))
	if len(leftovers) != 0 {
		t.Fatalf("temporary folders left behind: %v", leftovers)
	}

	// A later start leaves the existing repository alone.
	if err := prepareHistory(context.Background(), ws, env); err != nil {
		t.Fatal(err)
	}
	if got := gitLog(t, repo); strings.Count(got, "\n") != 0 {
		t.Fatalf("history log after a second start = %q", got)
	}
}

// GEMINI_CLI_HOME moves the server's home, and so its history.
func TestHistoryFollowsGeminiCLIHome(t *testing.T) {
	got, err := historyDir("/w", []string{"HOME=/h", "GEMINI_CLI_HOME=/g"})
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256([]byte("/w"))
	if want := filepath.Join("/g", ".gemini", "history", hex.EncodeToString(sum[:])); got != want {
		t.Fatalf("historyDir = %q; want %q", got, want)
	}
}
