package launch

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
)

// The A2A server (0.25.2) keeps a "shadow" Git repository per workspace,
// ~/.gemini/history/<sha256 of the workspace path>, and creates it the first
// time a task is about to edit a file, whether or not checkpointing is on.
// Two tasks that make their first edit at the same moment both run
// `git init` and the initial commit there, and one of them fails with
// "Failed to initialize checkpointing: ... cannot lock ref 'HEAD'", which
// fails its whole task. Creating that repository before the server starts,
// exactly as the server would, leaves the server nothing to race on: it
// finds the repository and goes on.

// shadowGitConfig is what the server writes as the repository's private Git
// configuration, so its commits never use the user's identity or signing.
const shadowGitConfig = "[user]\n  name = Gemini CLI\n  email = gemini-cli@google.com\n[commit]\n  gpgsign = false\n"

// historyDir is where the server keeps the shadow repository for the
// workspace dir when run with env (later entries win, as for exec.Cmd).
func historyDir(dir string, env []string) (string, error) {
	home := lookupEnv(env, "GEMINI_CLI_HOME")
	if home == "" {
		if runtime.GOOS == "windows" {
			home = lookupEnv(env, "USERPROFILE")
		} else {
			home = lookupEnv(env, "HOME")
		}
	}
	if home == "" {
		h, err := os.UserHomeDir()
		if err != nil {
			return "", fmt.Errorf("no home directory for the agent: %w", err)
		}
		home = h
	}
	sum := sha256.Sum256([]byte(dir))
	return filepath.Join(home, ".gemini", "history", hex.EncodeToString(sum[:])), nil
}

func lookupEnv(env []string, key string) string {
	v := ""
	for _, kv := range env {
		if k, val, ok := strings.Cut(kv, "="); ok && k == key {
			v = val
		}
	}
	return v
}

// prepareHistory creates the server's shadow repository for dir if it does
// not exist yet. It builds the repository in a temporary sibling and renames
// it into place, so concurrent callers (two servers for one workspace) and
// a server that gets there first are all fine. Without git it does nothing:
// the server reports that itself.
func prepareHistory(ctx context.Context, dir string, env []string) error {
	final, err := historyDir(dir, env)
	if err != nil {
		return err
	}
	if _, err := os.Stat(filepath.Join(final, ".git")); err == nil {
		return nil
	}
	gitPath, err := exec.LookPath("git")
	if err != nil {
		return nil
	}
	parent := filepath.Dir(final)
	if err := os.MkdirAll(parent, 0o700); err != nil {
		return fmt.Errorf("agent history folder: %w", err)
	}
	tmp, err := os.MkdirTemp(parent, "."+filepath.Base(final)[:12]+"-")
	if err != nil {
		return fmt.Errorf("agent history folder: %w", err)
	}
	defer os.RemoveAll(tmp)
	if err := os.WriteFile(filepath.Join(tmp, ".gitconfig"), []byte(shadowGitConfig), 0o600); err != nil {
		return fmt.Errorf("agent history git config: %w", err)
	}
	git := func(args ...string) error {
		cmd := exec.CommandContext(ctx, gitPath, args...)
		cmd.Dir = tmp
		cmd.Env = shadowGitEnv(tmp)
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("git %s: %w: %s", args[0], err, strings.TrimSpace(string(out)))
		}
		return nil
	}
	if err := git("init", "--quiet", "--initial-branch=main"); err != nil {
		// Git before 2.28 has no --initial-branch.
		if err := git("init", "--quiet"); err != nil {
			return fmt.Errorf("agent history repository: %w", err)
		}
		if err := git("symbolic-ref", "HEAD", "refs/heads/main"); err != nil {
			return fmt.Errorf("agent history repository: %w", err)
		}
	}
	if err := git("commit", "--quiet", "--allow-empty", "--no-verify", "-m", "Initial commit"); err != nil {
		return fmt.Errorf("agent history repository: %w", err)
	}
	if err := os.Rename(tmp, final); err != nil {
		if _, statErr := os.Stat(filepath.Join(final, ".git")); statErr == nil {
			return nil // someone else made it first
		}
		return fmt.Errorf("agent history repository: %w", err)
	}
	return nil
}

// shadowGitEnv is the environment for git in the shadow repository: the
// user's Git configuration and any inherited repository variables are left
// out, as the server does for its own commits.
func shadowGitEnv(repo string) []string {
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(k, "GIT_") || k == "HOME" || k == "XDG_CONFIG_HOME" {
			continue
		}
		env = append(env, kv)
	}
	return append(env, "HOME="+repo, "XDG_CONFIG_HOME="+repo, "GIT_CONFIG_NOSYSTEM=1")
}
