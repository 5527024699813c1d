package launch

import (
	"io"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
)

// ServerBin is the command npm installs for Gemini CLI's A2A server.
const ServerBin = "gemini-cli-a2a-server"

// serverPackage and serverScript locate the server's entry point in a
// node_modules folder.
var (
	serverPackage = filepath.Join("@google", "gemini-cli-a2a-server")
	serverScript  = filepath.Join(serverPackage, "dist", "a2a-server.mjs")
)

// Find returns the command that starts the server for the workspace dir:
// gemini-cli-a2a-server on the PATH of env (this process's PATH when env
// has none), else node_modules/.bin/gemini-cli-a2a-server or
// node_modules/@google/gemini-cli-a2a-server/dist/a2a-server.mjs searched
// upward from dir. The command is always `node <the server's .mjs>` when
// that script can be told: npm's command for the server (0.25.2) is a link
// (a .cmd shim on Windows) to that script, and the script only starts when
// it is run under its own name, so run through the link it loads and exits
// at once. setting says how the user of the calling program gives the
// command instead; it goes into the error when nothing is found.
func Find(dir string, env []string, setting string) ([]string, error) {
	path := envPath(env)
	if p, ok := lookPath(ServerBin, path); ok {
		return nodeCommand(p, nil, path), nil
	}
	for d := dir; ; d = filepath.Dir(d) {
		nm := filepath.Join(d, "node_modules")
		for _, c := range binNames(filepath.Join(nm, ".bin", ServerBin)) {
			if isFile(c) {
				return nodeCommand(c, nil, path), nil
			}
		}
		if s := filepath.Join(nm, serverScript); isFile(s) {
			return []string{nodePath("", path), s}, nil
		}
		if filepath.Dir(d) == d {
			break
		}
	}
	return nil, &NotFoundError{Setting: setting}
}

// Resolve returns command as it can run: when its program is a link or an
// npm shim of a Node script (such as gemini-cli-a2a-server), that script
// run with node; otherwise command unchanged. env gives PATH, as for Find.
func Resolve(command []string, env []string) []string {
	if len(command) == 0 {
		return command
	}
	prog := command[0]
	if base := strings.ToLower(strings.TrimSuffix(filepath.Base(prog), ".exe")); base == "node" {
		return command
	}
	path := envPath(env)
	if !strings.ContainsAny(prog, `/\`) {
		p, ok := lookPath(prog, path)
		if !ok {
			return command
		}
		prog = p
	}
	return nodeCommand(prog, command[1:], path)
}

// nodeCommand is `node <script> args…` when bin is a link or shim of a Node
// script, else bin and args unchanged.
func nodeCommand(bin string, args []string, path string) []string {
	if script, ok := nodeScript(bin); ok {
		return append([]string{nodePath(filepath.Dir(bin), path), script}, args...)
	}
	return append([]string{bin}, args...)
}

// nodeScript finds the Node script that bin (a command on PATH or in
// node_modules/.bin) runs: the target of a link, the server's script in the
// npm layout around the server's own command, or the script an npm, pnpm or
// yarn shim names.
func nodeScript(bin string) (string, bool) {
	if real, err := filepath.EvalSymlinks(bin); err == nil && isNodeScript(real) && isFile(real) {
		return real, true
	}
	dir := filepath.Dir(bin)
	if strings.EqualFold(trimExt(filepath.Base(bin)), ServerBin) {
		for _, c := range []string{
			filepath.Join(dir, "..", "lib", "node_modules", serverScript), // npm -g on Unix: PREFIX/bin
			filepath.Join(dir, "node_modules", serverScript),              // npm -g on Windows: PREFIX
			filepath.Join(dir, "..", serverScript),                        // node_modules/.bin
		} {
			if isFile(c) {
				return filepath.Clean(c), true
			}
		}
	}
	return shimTarget(bin)
}

// shimRE finds the script a shim runs, relative to the shim's folder:
// npm's cmd-shim writes "%dp0%\…\x.mjs" (.cmd) and "$basedir/…/x.mjs"
// (sh, .ps1); pnpm and yarn write the same forms.
var shimRE = regexp.MustCompile(`(?:%~?dp0%?\\|\$basedir[/\\])([^"'\s%$]+\.(?:mjs|cjs|js))`)

// shimTarget reads bin as a shim script and returns the Node script it runs.
func shimTarget(bin string) (string, bool) {
	f, err := os.Open(bin)
	if err != nil {
		return "", false
	}
	defer f.Close()
	head, err := io.ReadAll(io.LimitReader(f, 64<<10))
	if err != nil {
		return "", false
	}
	for _, m := range shimRE.FindAllSubmatch(head, -1) {
		rel := strings.ReplaceAll(strings.ReplaceAll(string(m[1]), `\`, "/"), "/", string(filepath.Separator))
		if c := filepath.Join(filepath.Dir(bin), rel); isFile(c) {
			return c, true
		}
	}
	return "", false
}

// nodePath is the node to run a script with: the node.exe next to an npm
// prefix's shims (npm's own shims prefer it), else node on path.
func nodePath(binDir, path string) string {
	if binDir != "" {
		for _, c := range binNames(filepath.Join(binDir, "node")) {
			if isFile(c) {
				return c
			}
		}
	}
	if p, ok := lookPath("node", path); ok {
		return p
	}
	return "node"
}

func isNodeScript(p string) bool {
	switch strings.ToLower(filepath.Ext(p)) {
	case ".mjs", ".cjs", ".js":
		return true
	}
	return false
}

func trimExt(name string) string {
	switch strings.ToLower(filepath.Ext(name)) {
	case ".cmd", ".ps1", ".exe", ".bat":
		return strings.TrimSuffix(name, filepath.Ext(name))
	}
	return name
}

func isFile(p string) bool {
	st, err := os.Stat(p)
	return err == nil && !st.IsDir()
}

// binNames are the names a command can have: on Windows with each of the
// executable extensions npm writes (its .cmd shim first), elsewhere as is.
func binNames(p string) []string {
	if runtime.GOOS != "windows" {
		return []string{p}
	}
	return []string{p + ".cmd", p + ".exe", p + ".bat", p + ".ps1", p}
}

// lookPath finds name in the folders of path the way a shell does: an
// executable file (on Windows, with an extension of PATHEXT).
func lookPath(name, path string) (string, bool) {
	for _, dir := range filepath.SplitList(path) {
		if dir == "" {
			continue
		}
		for _, c := range lookNames(filepath.Join(dir, name)) {
			st, err := os.Stat(c)
			if err != nil || st.IsDir() {
				continue
			}
			if runtime.GOOS != "windows" && st.Mode().Perm()&0o111 == 0 {
				continue
			}
			abs, err := filepath.Abs(c)
			if err != nil {
				continue
			}
			return abs, true
		}
	}
	return "", false
}

func lookNames(p string) []string {
	if runtime.GOOS != "windows" || filepath.Ext(p) != "" {
		return []string{p}
	}
	exts := os.Getenv("PATHEXT")
	if exts == "" {
		exts = ".COM;.EXE;.BAT;.CMD"
	}
	var out []string
	for _, e := range strings.Split(exts, ";") {
		if e != "" {
			out = append(out, p+strings.ToLower(e))
		}
	}
	return out
}

// envPath is PATH as env sets it (the last entry wins, as for exec.Cmd;
// names compared without case on Windows), else this process's.
func envPath(env []string) string {
	v, found := "", false
	for _, kv := range env {
		k, val, ok := strings.Cut(kv, "=")
		if ok && (k == "PATH" || (runtime.GOOS == "windows" && strings.EqualFold(k, "PATH"))) {
			v, found = val, true
		}
	}
	if !found {
		return os.Getenv("PATH")
	}
	return v
}
