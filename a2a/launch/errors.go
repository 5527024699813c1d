package launch

import (
	"fmt"
	"os"
	"strings"
	"sync"
)

// InstallCommand is how a user installs Gemini CLI's A2A server.
const InstallCommand = "npm install -g @google/gemini-cli-a2a-server"

// defaultSetting names the command option when the caller gave none.
const defaultSetting = "the server command of the program that starts it"

func settingOr(s string) string {
	if strings.TrimSpace(s) == "" {
		return defaultSetting
	}
	return s
}

// NotFoundError says the server's command was found nowhere.
type NotFoundError struct {
	// Setting is how the user gives the server command instead (see
	// Options.Setting).
	Setting string
}

func (e *NotFoundError) Error() string {
	return fmt.Sprintf("Gemini CLI's A2A server (%s) is not on PATH or in a node_modules folder here: install it (%s) or set %s",
		ServerBin, InstallCommand, settingOr(e.Setting))
}

// ExitError says the server exited (or could not be run) before it listened.
type ExitError struct {
	// Command is what was run, Dir where.
	Command []string
	Dir     string
	// Status is how it ended ("exit status 1", "signal: killed"), or why it
	// could not run.
	Status string
	// Code is its exit code (-1 when it did not exit normally or never ran).
	Code int
	// Output is the last lines it wrote that say what went wrong.
	Output []string
	// Setting is how the user gives the server command (Options.Setting).
	Setting string
}

func (e *ExitError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "Gemini CLI's A2A server exited before it listened (%s); it was run as %s in %s.", e.Status, quoteCommand(e.Command), e.Dir)
	if len(e.Output) > 0 {
		fmt.Fprintf(&b, " It said: %s.", strings.TrimRight(strings.Join(e.Output, " / "), "."))
	}
	switch {
	case e.Code == 0:
		b.WriteString(" It ended without starting, which the server does when it is not run as its own script (a link or wrapper under another name):")
		fmt.Fprintf(&b, " give a command that runs node with @google/gemini-cli-a2a-server/dist/a2a-server.mjs, with %s.", settingOr(e.Setting))
	case e.Code < 0 && len(e.Output) == 0:
		fmt.Fprintf(&b, " Check that Node.js 20 or newer is installed and that the command runs; install the server with %s, or set %s.", InstallCommand, settingOr(e.Setting))
	default:
		b.WriteString(" It needs GEMINI_API_KEY (or USE_CCPA with a Code Assist login) in its environment and Node.js 20 or newer;")
		fmt.Fprintf(&b, " run the same command in a terminal to see all it says, or set %s.", settingOr(e.Setting))
	}
	return b.String()
}

func exitStatus(ps *os.ProcessState, err error) (string, int) {
	if ps == nil {
		if err != nil {
			return err.Error(), -1
		}
		return "no exit status", -1
	}
	return ps.String(), ps.ExitCode()
}

func quoteCommand(cmd []string) string {
	q := make([]string, len(cmd))
	for i, a := range cmd {
		if a == "" || strings.ContainsAny(a, " \t\"'") {
			a = `"` + strings.ReplaceAll(a, `"`, `\"`) + `"`
		}
		q[i] = a
	}
	return "`" + strings.Join(q, " ") + "`"
}

// tail keeps the last lines of the server's output that say what went
// wrong: its error lines when it wrote some, else its last lines.
type tail struct {
	mu     sync.Mutex
	errors []string
	last   []string
}

const tailLines = 3

func (t *tail) add(line string) {
	line = strings.TrimSpace(line)
	if line == "" || strings.HasPrefix(line, "{") || strings.HasPrefix(line, "}") || strings.HasPrefix(line, "\"") {
		return // the server's multi-line JSON dumps
	}
	if len(line) > 300 {
		line = line[:300] + "…"
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if strings.Contains(line, "[ERROR]") || strings.HasPrefix(line, "Error") {
		t.errors = keepLast(append(t.errors, line), tailLines)
	}
	t.last = keepLast(append(t.last, line), tailLines)
}

func (t *tail) lines() []string {
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(t.errors) > 0 {
		return append([]string(nil), t.errors...)
	}
	return append([]string(nil), t.last...)
}

func keepLast(s []string, n int) []string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}
