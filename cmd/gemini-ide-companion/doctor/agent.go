package doctor

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/gemini-ide-companion/gemini-ide-companion/a2a/launch"
	"github.com/gemini-ide-companion/gemini-ide-companion/internal/osproc"
)

// TestedA2AServerVersion is the release of Gemini CLI's A2A server the
// agent panel is tested against.
const TestedA2AServerVersion = "0.25.2"

// AgentOptions are what the agent panel's checks read; zero values mean the
// real ones.
type AgentOptions struct {
	// Cwd is the folder the panel would start the server for.
	Cwd string
	// Command is the server command the user set in the plugin (empty: the
	// panel looks for the server as the sidecar does).
	Command []string
	// Setting names that option in the plugin, for the fixes.
	Setting string
	// SecretDir is where started servers keep their secret
	// (launch.SecretDir()).
	SecretDir string
}

// AgentReport is what Agent found, and whether the panel could start its
// server here.
type AgentReport struct {
	Cwd      string    `json:"cwd"`
	CanStart bool      `json:"canStart"`
	Findings []Finding `json:"findings"`
}

// Agent checks what the agent panel needs to start Gemini CLI's A2A server
// in o.Cwd: node, the server (found as the panel finds it, and its
// version), and the private folder of the started servers' secrets.
func Agent(ctx context.Context, o AgentOptions) AgentReport {
	if o.Cwd == "" {
		o.Cwd, _ = os.Getwd()
	}
	if o.SecretDir == "" {
		o.SecretDir = launch.SecretDir()
	}
	c := &checks{r: Report{Cwd: o.Cwd}}
	agentNode(ctx, c)
	agentServer(c, o)
	agentSecrets(c, o.SecretDir)
	r := AgentReport{Cwd: o.Cwd, CanStart: true, Findings: c.r.Findings}
	for _, f := range r.Findings {
		if f.Level == Fail {
			r.CanStart = false
		}
	}
	return r
}

func agentNode(ctx context.Context, c *checks) {
	node, err := exec.LookPath("node")
	if err != nil {
		c.add(Fail, "node", "no node on PATH: Gemini CLI's A2A server runs on Node.js", "install Node.js 20 or newer")
		return
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, node, "--version").Output()
	if err != nil {
		c.add(Warn, "node", node+": node --version failed: "+err.Error(), "")
		return
	}
	c.add(OK, "node", node+" "+strings.TrimSpace(string(out)), "")
}

func agentServer(c *checks, o AgentOptions) {
	command := o.Command
	how := "found"
	if len(command) > 0 {
		command = launch.Resolve(command, nil)
		how = "set in the plugin"
	} else {
		var err error
		command, err = launch.Find(o.Cwd, nil, o.Setting)
		var missing *launch.NotFoundError
		if errors.As(err, &missing) {
			c.add(Fail, "A2A server", "Gemini CLI's A2A server is not found", missing.Error())
			return
		}
		if err != nil {
			c.add(Fail, "A2A server", err.Error(), "")
			return
		}
	}
	run := strings.Join(command, " ")
	if _, err := exec.LookPath(command[0]); err != nil && !isFile(command[0]) {
		c.add(Fail, "A2A server", fmt.Sprintf("%s (%s): %s cannot be run", run, how, command[0]), "fix the server command in the plugin's settings, or unset it")
		return
	}
	v := serverVersion(command)
	switch {
	case v == "":
		c.add(OK, "A2A server", fmt.Sprintf("%s (%s); version unknown", run, how), "")
	case v == TestedA2AServerVersion:
		c.add(OK, "A2A server", fmt.Sprintf("%s (%s), version %s (the version the panel is tested with)", run, how, v), "")
	default:
		c.add(Info, "A2A server", fmt.Sprintf("%s (%s), version %s; tested with %s", run, how, v, TestedA2AServerVersion),
			"if the panel misbehaves, try: npm install -g @google/gemini-cli-a2a-server@"+TestedA2AServerVersion)
	}
}

// serverVersion reads the version of the server's npm package, from the
// package.json above the script command runs ("" when it cannot tell).
func serverVersion(command []string) string {
	for _, arg := range command {
		if !strings.HasSuffix(arg, ".mjs") && !strings.HasSuffix(arg, ".js") {
			continue
		}
		for d := filepath.Dir(arg); ; d = filepath.Dir(d) {
			b, err := os.ReadFile(filepath.Join(d, "package.json"))
			if err == nil {
				var p struct {
					Name    string `json:"name"`
					Version string `json:"version"`
				}
				if json.Unmarshal(b, &p) == nil && p.Name == "@google/gemini-cli-a2a-server" {
					return p.Version
				}
				return ""
			}
			if filepath.Dir(d) == d {
				return ""
			}
		}
	}
	return ""
}

func isFile(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.Mode().IsRegular()
}

func agentSecrets(c *checks, dir string) {
	fi, err := os.Lstat(dir)
	if errors.Is(err, os.ErrNotExist) {
		c.add(OK, "secret file", dir+" does not exist yet; it is made, private, when the panel starts a server", "")
		return
	}
	if err != nil {
		c.add(Fail, "secret file", err.Error(), "check the permissions of "+filepath.Dir(dir))
		return
	}
	switch {
	case !fi.IsDir():
		c.add(Fail, "secret file", dir+" is not a folder: started servers cannot keep their secret", "remove it: rm "+dir)
		return
	case !osproc.Mine(dir, fi):
		c.add(Fail, "secret file", fmt.Sprintf("%s belongs to %s, not to you", dir, osproc.Owner(dir, fi)), "remove it (it is not yours): the panel makes its own")
		return
	case osproc.OthersCanWrite(dir, fi) || runtime.GOOS != "windows" && fi.Mode().Perm()&0o077 != 0:
		c.add(Warn, "secret file", fmt.Sprintf("%s is open to other users (%v); the panel makes it private when it starts a server", dir, fi.Mode().Perm()), "")
		return
	}
	files, _ := filepath.Glob(filepath.Join(dir, "server-*.json"))
	c.add(OK, "secret file", fmt.Sprintf("%s is private (%d secret file(s) of started servers)", dir, len(files)), "")
}

// WriteAgent prints the agent panel's report for a person.
func WriteAgent(w io.Writer, r AgentReport) {
	writeFindings(w, r.Findings)
	if r.CanStart {
		fmt.Fprintf(w, "\nThe agent panel can start Gemini CLI's A2A server in %s.\n", r.Cwd)
	} else {
		fmt.Fprintf(w, "\nThe agent panel could NOT start Gemini CLI's A2A server in %s; see the FAIL lines above.\n", r.Cwd)
	}
}
