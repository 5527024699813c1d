//go:build linux

// Package install_test runs the install instructions of the plugins'
// READMEs as written, in a throwaway HOME, and then starts the real editor
// in tmux the way a user would after following them: the plugin loads, its
// help is there, and it starts the sidecar that the instructions built.
//
// The only change to the instructions is the clone's URL, which points at
// this checkout (no network in tests). Plugin managers that fetch from
// GitHub themselves (lazy.nvim, packer, vim-plug, minpac, straight.el,
// package-vc) cannot run here; what they run (the same `go build` line, and
// the plugin folder on the runtime path) is what these tests exercise.
package install_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// upstream is the clone URL the READMEs give.
const upstream = "https://github.com/gemini-ide-companion/gemini-ide-companion"

func repoRoot(t *testing.T) string {
	t.Helper()
	out, err := exec.Command("git", "rev-parse", "--show-toplevel").Output()
	if err != nil {
		need(t, "a git checkout of the project (git rev-parse failed: %v)", err)
	}
	return strings.TrimSpace(string(out))
}

// need skips, or under CI fails, when something the test needs is missing.
func need(t *testing.T, format string, args ...any) {
	t.Helper()
	msg := "needs " + fmt.Sprintf(format, args...)
	if os.Getenv("CI") != "" {
		t.Fatal(msg)
	}
	t.Skip(msg)
}

func needTools(t *testing.T, tools ...string) {
	t.Helper()
	for _, tool := range tools {
		if _, err := exec.LookPath(tool); err != nil {
			need(t, "%s on PATH (Debian: apt-get install neovim vim emacs-nox elpa-use-package tmux git)", tool)
		}
	}
}

// section returns the text of a README from the line starting with heading
// up to the next heading of any level.
func section(t *testing.T, readme, heading string) string {
	t.Helper()
	data, err := os.ReadFile(readme)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(data), "\n")
	start := -1
	for i, l := range lines {
		if start < 0 {
			if strings.HasPrefix(l, heading) {
				start = i + 1
			}
			continue
		}
		if strings.HasPrefix(l, "#") && !strings.HasPrefix(l, "#!") && !inFence(lines[start:i]) {
			return strings.Join(lines[start:i], "\n")
		}
	}
	if start < 0 {
		t.Fatalf("%s has no section %q: the README changed, update this test with it", readme, heading)
	}
	return strings.Join(lines[start:], "\n")
}

func inFence(lines []string) bool {
	n := 0
	for _, l := range lines {
		if strings.HasPrefix(l, "```") {
			n++
		}
	}
	return n%2 == 1
}

// block returns the first fenced block of the given language in text.
func block(t *testing.T, text, lang string) string {
	t.Helper()
	re := regexp.MustCompile("(?s)```" + regexp.QuoteMeta(lang) + "\n(.*?)```")
	m := re.FindStringSubmatch(text)
	if m == nil {
		t.Fatalf("no ```%s block in:\n%s", lang, text)
	}
	return m[1]
}

// sandbox is a user's HOME, TMPDIR and tmux server, empty at the start.
type sandbox struct {
	root, home, tmp, sock string
	env                   []string
}

func newSandbox(t *testing.T) *sandbox {
	t.Helper()
	root := t.TempDir()
	// t.TempDir is <test's own dir>/001: the test's folder makes the name unique.
	s := &sandbox{root: root, home: filepath.Join(root, "home"), tmp: filepath.Join(root, "tmp"), sock: "install-" + filepath.Base(filepath.Dir(root))}
	for _, d := range []string{s.home, s.tmp} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	gocache, _ := exec.Command("go", "env", "GOCACHE").Output()
	gomod, _ := exec.Command("go", "env", "GOMODCACHE").Output()
	s.env = []string{
		"HOME=" + s.home, "TMPDIR=" + s.tmp, "PATH=" + pathWithoutSidecar(), "TERM=xterm-256color",
		"LANG=C.UTF-8", "SHELL=/bin/bash",
		// The user's Go caches: offline, and no second download or build.
		"GOCACHE=" + strings.TrimSpace(string(gocache)), "GOMODCACHE=" + strings.TrimSpace(string(gomod)),
		"GOFLAGS=-mod=mod", "GOPROXY=off", "GOTOOLCHAIN=local",
	}
	t.Cleanup(func() {
		_ = exec.Command("tmux", "-L", s.sock, "kill-server").Run()
	})
	return s
}

// pathWithoutSidecar is PATH without any folder that holds a
// gemini-ide-companion, so that only what the instructions build is found.
func pathWithoutSidecar() string {
	var keep []string
	for _, dir := range filepath.SplitList(os.Getenv("PATH")) {
		if _, err := os.Stat(filepath.Join(dir, "gemini-ide-companion")); err == nil {
			continue
		}
		keep = append(keep, dir)
	}
	return strings.Join(keep, string(os.PathListSeparator))
}

func (s *sandbox) tmux(args ...string) ([]byte, error) {
	cmd := exec.Command("tmux", append([]string{"-L", s.sock}, args...)...)
	cmd.Env = s.env
	return cmd.CombinedOutput()
}

// window starts command in a new tmux window of 120×40 in dir and returns
// its target.
func (s *sandbox) window(t *testing.T, name, dir, command string) string {
	t.Helper()
	args := []string{"new-window", "-d", "-t", "main", "-n", name, "-c", dir, command}
	if _, err := s.tmux("has-session", "-t", "main"); err != nil {
		args = []string{"new-session", "-d", "-x", "120", "-y", "40", "-s", "main", "-n", name, "-c", dir, command}
	}
	if out, err := s.tmux(args...); err != nil {
		t.Fatalf("tmux %v: %v: %s", args, err, out)
	}
	_, _ = s.tmux("set-option", "-t", "main", "remain-on-exit", "on")
	return "main:" + name
}

func (s *sandbox) screen(target string) string {
	out, _ := s.tmux("capture-pane", "-p", "-t", target)
	return string(out)
}

// shell runs script with bash -e in a tmux window (editors in it get a
// terminal, as in the user's shell) and fails the test with the screen if
// it does not exit 0 within limit.
func (s *sandbox) shell(t *testing.T, name, script string, limit time.Duration) {
	t.Helper()
	file := filepath.Join(s.root, name+".sh")
	rc := filepath.Join(s.root, name+".rc")
	if err := os.WriteFile(file, []byte("set -e\n"+script), 0o600); err != nil {
		t.Fatal(err)
	}
	target := s.window(t, name, s.home, fmt.Sprintf("bash %s; echo $? > %s", file, rc))
	var code []byte
	waitFor(t, limit, "the instructions ("+name+") to finish", func() bool {
		code, _ = os.ReadFile(rc)
		return len(bytes.TrimSpace(code)) > 0
	}, func() string { return s.screen(target) })
	if string(bytes.TrimSpace(code)) != "0" {
		t.Fatalf("the instructions failed (exit %s):\n%s\nscreen:\n%s", bytes.TrimSpace(code), script, s.screen(target))
	}
}

// waitFor polls cond (a state, not a duration) until limit.
func waitFor(t *testing.T, limit time.Duration, what string, cond func() bool, show func() string) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s\n%s", limit, what, show())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

type discovered struct {
	file string
	Port int `json:"port"`
	Info struct {
		Name        string `json:"name"`
		DisplayName string `json:"displayName"`
	} `json:"ideInfo"`
	Workspace string `json:"workspacePath"`
}

// discovery returns the discovery files of sidecars started in the sandbox.
func (s *sandbox) discovery() []discovered {
	files, _ := filepath.Glob(filepath.Join(s.tmp, "gemini", "ide", "*.json"))
	var out []discovered
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		var d discovered
		if json.Unmarshal(data, &d) == nil {
			d.file = f
			out = append(out, d)
		}
	}
	return out
}

// sidecarsRunning returns the executables of running gemini-ide-companion
// processes whose TMPDIR is the sandbox's.
func (s *sandbox) sidecarsRunning() []string {
	procs, _ := filepath.Glob("/proc/[0-9]*")
	var out []string
	for _, p := range procs {
		exe, err := os.Readlink(filepath.Join(p, "exe"))
		if err != nil || filepath.Base(exe) != "gemini-ide-companion" {
			continue
		}
		env, _ := os.ReadFile(filepath.Join(p, "environ"))
		if bytes.Contains(env, []byte("TMPDIR="+s.tmp+"\x00")) {
			out = append(out, exe)
		}
	}
	return out
}

// editorSession starts the editor command in the workspace, checks that the
// plugin's sidecar comes up as the instructions built it (wantBinary) and
// names the editor, runs check, then quits the editor with quitKeys and
// checks that the sidecar and its discovery file are gone.
func (s *sandbox) editorSession(t *testing.T, name, command, displayName, wantBinary string, quitKeys []string, check func(target string)) {
	t.Helper()
	ws := filepath.Join(s.home, "project")
	if err := os.MkdirAll(ws, 0o700); err != nil {
		t.Fatal(err)
	}
	target := s.window(t, name, ws, command)
	show := func() string {
		return fmt.Sprintf("screen:\n%s\ndiscovery: %+v\nsidecars: %v", s.screen(target), s.discovery(), s.sidecarsRunning())
	}
	waitFor(t, 60*time.Second, displayName+"'s sidecar to write its discovery file", func() bool {
		for _, d := range s.discovery() {
			if d.Info.DisplayName == displayName {
				return true
			}
		}
		return false
	}, show)
	want, err := filepath.EvalSymlinks(wantBinary)
	if err != nil {
		t.Fatalf("the instructions did not build %s: %v", wantBinary, err)
	}
	running := s.sidecarsRunning()
	if len(running) != 1 || running[0] != want {
		t.Fatalf("running sidecars %v; want exactly the one the instructions built, %s\n%s", running, want, show())
	}
	if check != nil {
		check(target)
	}
	for _, k := range quitKeys {
		if out, err := s.tmux("send-keys", "-t", target, k); err != nil {
			t.Fatalf("send-keys: %v: %s", err, out)
		}
	}
	waitFor(t, 30*time.Second, displayName+" to quit and its sidecar to stop", func() bool {
		return len(s.sidecarsRunning()) == 0 && len(s.discovery()) == 0
	}, show)
}

// helpOpens checks, with the editor on screen, that :help for the plugin
// opens its help file from the installed plugin folder (so the help tags
// step of the instructions worked).
func (s *sandbox) helpOpens(t *testing.T, target, helpDir string) {
	t.Helper()
	out := filepath.Join(s.root, "help-"+strings.ReplaceAll(target, ":", "-"))
	for _, keys := range []string{":help gemini-companion", fmt.Sprintf(`:call writefile([expand('%%:p')], '%s')`, out)} {
		if o, err := s.tmux("send-keys", "-t", target, "Escape", keys, "Enter"); err != nil {
			t.Fatalf("send-keys: %v: %s", err, o)
		}
	}
	var got []byte
	waitFor(t, 20*time.Second, ":help gemini-companion", func() bool {
		got, _ = os.ReadFile(out)
		return len(got) > 0
	}, func() string { return s.screen(target) })
	file := strings.TrimSpace(string(got))
	dir, _ := filepath.EvalSymlinks(helpDir)
	if real, _ := filepath.EvalSymlinks(file); filepath.Dir(real) != dir {
		t.Fatalf(":help gemini-companion opened %q; want the plugin's help in %s\n%s", file, dir, s.screen(target))
	}
}

func cloneLine(t *testing.T, script string) string {
	t.Helper()
	if !strings.Contains(script, "git clone "+upstream) {
		t.Fatalf("the instructions no longer clone %s; update this test:\n%s", upstream, script)
	}
	return strings.ReplaceAll(script, "git clone "+upstream, "git clone -q "+repoRoot(t))
}

// TestNeovimPlainPackages follows plugins/nvim/README.md "Plain packages
// (no plugin manager)": clone, build the sidecar into plugins/nvim/bin,
// link the plugin into ~/.local/share/nvim/site/pack, generate help tags,
// and put the setup line in init.lua.
func TestNeovimPlainPackages(t *testing.T) {
	t.Parallel()
	needTools(t, "git", "go", "tmux", "nvim")
	sec := section(t, filepath.Join(repoRoot(t), "plugins", "nvim", "README.md"), "### Plain packages")
	init := regexp.MustCompile("in `init.lua`: `([^`]+)`").FindStringSubmatch(sec)
	if init == nil {
		t.Fatalf("the section no longer names the init.lua line:\n%s", sec)
	}
	packageInstall(t, "nvim", "Neovim", sec, filepath.Join(".config", "nvim", "init.lua"), init[1])
}

// TestVimNativePackages follows plugins/vim/README.md "Native packages":
// clone, build into plugins/vim/bin, link into ~/.vim/pack, help tags.
func TestVimNativePackages(t *testing.T) {
	t.Parallel()
	needTools(t, "git", "go", "tmux", "vim")
	sec := section(t, filepath.Join(repoRoot(t), "plugins", "vim", "README.md"), "### Native packages")
	packageInstall(t, "vim", "Vim", sec, "", "")
}

// packageInstall runs the shell block of a README section for an editor's
// native packages, writes init (if any) to the HOME-relative initFile, and
// checks the editor (plugin folder plugins/<editor>) as a user would.
func packageInstall(t *testing.T, editor, displayName, sec, initFile, init string) {
	t.Helper()
	s := newSandbox(t)
	s.shell(t, "install", cloneLine(t, block(t, sec, "sh")), 5*time.Minute)
	if initFile != "" {
		path := filepath.Join(s.home, initFile)
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(init+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	plugin := filepath.Join(s.home, "src", "gemini-ide-companion", "plugins", editor)
	s.editorSession(t, editor, editor, displayName, filepath.Join(plugin, "bin", "gemini-ide-companion"),
		[]string{"Escape", ":qa!", "Enter"}, func(target string) {
			s.helpOpens(t, target, filepath.Join(plugin, "doc"))
		})
}

// TestEmacsFromAClone follows plugins/emacs/README.md "From a clone
// (Emacs 28 and later)": clone, build into plugins/emacs/bin, and the plain
// load-path and require lines (no use-package, which Emacs 28 lacks) as
// the whole init file.
func TestEmacsFromAClone(t *testing.T) {
	t.Parallel()
	needTools(t, "git", "go", "tmux", "emacs")
	sec := section(t, filepath.Join(repoRoot(t), "plugins", "emacs", "README.md"), "### From a clone")
	elisp := block(t, sec, "elisp")
	if strings.Contains(elisp, "use-package") {
		t.Fatalf("the form for Emacs 28 uses use-package, which Emacs 28 does not have:\n%s", elisp)
	}
	emacsFromClone(t, cloneLine(t, block(t, sec, "sh")), elisp)
}

// TestEmacsUsePackage follows "use-package with :load-path": the same
// clone and build, and the use-package form as the whole init file.
func TestEmacsUsePackage(t *testing.T) {
	t.Parallel()
	needTools(t, "git", "go", "tmux", "emacs")
	readme := filepath.Join(repoRoot(t), "plugins", "emacs", "README.md")
	clone := section(t, readme, "### From a clone")
	sec := section(t, readme, "### use-package with :load-path")
	if out, err := exec.Command("emacs", "--batch", "--eval", "(progn (package-activate-all) (require 'use-package))").CombinedOutput(); err != nil {
		need(t, "use-package for Emacs (Debian: apt-get install elpa-use-package): %s", out)
	}
	emacsFromClone(t, cloneLine(t, block(t, clone, "sh")), block(t, sec, "elisp"))
}

// emacsFromClone runs the install script (clone and build into
// plugins/emacs/bin), writes elisp as the whole init file, and checks
// Emacs as a user would.
func emacsFromClone(t *testing.T, script, elisp string) {
	t.Helper()
	s := newSandbox(t)
	s.shell(t, "install", script, 5*time.Minute)
	writeEmacsInit(t, s, elisp)
	clone := filepath.Join(s.home, "src", "gemini-ide-companion")
	s.editorSession(t, "emacs", "emacs -nw", "Emacs", filepath.Join(clone, "plugins", "emacs", "bin", "gemini-ide-companion"),
		[]string{"C-x", "C-c"}, func(target string) { s.emacsRunsCompiled(t, target) })
}

// emacsRunsCompiled checks, with Emacs on screen, that the package runs
// compiled, as M-x gemini-companion-doctor tells the user.
func (s *sandbox) emacsRunsCompiled(t *testing.T, target string) {
	t.Helper()
	said := regexp.MustCompile(`package: (\S+)`)
	var m []string
	var asked time.Time
	// Emacs compiles the libraries it loaded in the background on its
	// first start and pops up their compiler's warnings when done, over
	// whatever the other window shows: then the user asks again.
	waitFor(t, 90*time.Second, "M-x gemini-companion-doctor to say how the package is loaded", func() bool {
		if m = said.FindStringSubmatch(s.screen(target)); m != nil {
			return true
		}
		if time.Since(asked) > 10*time.Second {
			asked = time.Now()
			for _, k := range []string{"M-x", "gemini-companion-doctor", "Enter"} {
				if out, err := s.tmux("send-keys", "-t", target, k); err != nil {
					t.Fatalf("send-keys: %v: %s", err, out)
				}
			}
		}
		return false
	}, func() string { return s.screen(target) })
	if m[1] != "byte-compiled" && m[1] != "native-compiled" {
		t.Fatalf("after the README's install, M-x gemini-companion-doctor says %q; want the package compiled\n%s", m[0], s.screen(target))
	}
}

// TestEmacsManual follows "Manual": the .el files copied into a folder on
// load-path, and the sidecar from the top-level README's go install line on
// PATH.
func TestEmacsManual(t *testing.T) {
	t.Parallel()
	needTools(t, "git", "go", "tmux", "emacs")
	root := repoRoot(t)
	readme := filepath.Join(root, "plugins", "emacs", "README.md")
	sec := section(t, readme, "### Manual")
	elisp := block(t, sec, "elisp")
	dir := regexp.MustCompile(`\(add-to-list 'load-path "([^"]+)"\)`).FindStringSubmatch(elisp)
	if dir == nil {
		t.Fatalf("the Manual section no longer adds a folder to load-path:\n%s", elisp)
	}
	install := regexp.MustCompile("(?m)^go install ./cmd/gemini-ide-companion").FindString(string(must(os.ReadFile(filepath.Join(root, "README.md")))))
	if install == "" {
		t.Fatal("README.md lost its go install line")
	}
	s := newSandbox(t)
	gobin := filepath.Join(s.home, "go", "bin")
	for i, kv := range s.env {
		if v, ok := strings.CutPrefix(kv, "PATH="); ok {
			s.env[i] = "PATH=" + gobin + string(os.PathListSeparator) + v
		}
	}
	site := strings.Replace(dir[1], "~", s.home, 1)
	// The copy the section asks for, then its compile line as written.
	s.shell(t, "install", fmt.Sprintf("cd %s\n%s\nmkdir -p %s\ncp %s/plugins/emacs/*.el %s/\n%s\n",
		root, install, site, root, site, block(t, sec, "sh")), 5*time.Minute)
	writeEmacsInit(t, s, elisp)
	s.editorSession(t, "emacs", "emacs -nw", "Emacs", filepath.Join(gobin, "gemini-ide-companion"), []string{"C-x", "C-c"},
		func(target string) { s.emacsRunsCompiled(t, target) })
}

func writeEmacsInit(t *testing.T, s *sandbox, elisp string) {
	t.Helper()
	dir := filepath.Join(s.home, ".emacs.d")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "init.el"), []byte(elisp), 0o600); err != nil {
		t.Fatal(err)
	}
}

func must(b []byte, err error) []byte {
	if err != nil {
		panic(err)
	}
	return b
}
