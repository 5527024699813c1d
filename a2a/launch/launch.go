// Package launch finds Gemini CLI's A2A server as npm installed it, starts
// it for a folder, on 127.0.0.1 only, with a private environment, and stops
// it again. It is the one way the bridge and the agent panel start it.
//
// npm's command for the server is a link (a shim on Windows) to its script,
// which does not start when run under another name; Find and Resolve turn
// such a command into `node <script>`. A server that exits before it
// listens is an ExitError that says what was run, how it ended and what to
// do, in the words of the calling program (Options.Setting).
//
// The server (npm @google/gemini-cli-a2a-server 0.25) listens on every
// interface without authentication and has no host option; a Node preload
// (pin.cjs, written to a private temporary folder and passed with
// NODE_OPTIONS=--require) makes its listen call bind 127.0.0.1, and makes
// the server answer 401 to every request that does not carry the launch's
// secret (Authorization: Bearer, see Server.Header) before the server sees
// it. The secret is random for each launch and reaches the preload through
// the environment, never a command line; the preload takes it out of the
// environment, so the agent's shell commands do not inherit it. While the
// server runs, the secret is also kept in a file only the user can read
// (SecretDir), so that another program of the same user can attach to it
// (HeaderFor): a sidecar that adopts the server an earlier one started.
//
// The server ends with the program that started it, however that program
// ends (killed included), on every OS: it holds the server's stdin, and the
// preload stops the server, with the commands it runs, when stdin closes.
// Another program of the user's can take the server over first (Hold);
// Options.Linger is how long the server waits for one. The preload also
// makes a cancelled turn's command that the server spawns late (after the
// cancel reached it) be killed as it starts, which the server 0.25 does
// not do by itself.
package launch

import (
	"bufio"
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/gemini-ide-companion/gemini-ide-companion/internal/osproc"
)

//go:embed pin.cjs
var pinScript []byte

// Options say how to start the server.
type Options struct {
	// Command is the server command and its arguments. Empty: Find's.
	// A program that is a link or an npm shim of a Node script is run as
	// `node <script>` (see Resolve).
	Command []string
	// Dir is the workspace the agent works in.
	Dir string
	// Env is added to the server's environment (e.g. GEMINI_API_KEY,
	// GOOGLE_GEMINI_BASE_URL, HOME).
	Env []string
	// Log receives the server's output; nil discards it.
	Log io.Writer
	// StartTimeout bounds the wait for the server's "started" line.
	StartTimeout time.Duration
	// Setting says how the user of the calling program gives the server
	// command (the bridge's --server-command, an editor plugin's option);
	// errors tell the user to set it.
	Setting string
	// Linger is how long the server waits, once the program that started
	// it is gone (exited or killed without Stop), for another program to
	// take it over with Hold before it ends. Zero: it ends at once. A
	// program that resumes the server's tasks after a restart (the agent
	// panel's sidecar) sets the time its restart takes.
	Linger time.Duration
	// MCPServers are MCP servers the agent gets besides the user's, as
	// settings entries by name (see MCPHome); the private home that
	// carries them is removed when the server has exited.
	MCPServers map[string]any
}

// Server is a running A2A server.
type Server struct {
	// URL is its base URL on 127.0.0.1.
	URL string

	secret   string
	record   string   // the secret file, "" when it could not be written
	lifeline *os.File // the server's stdin: it ends when this closes
	cmd      *exec.Cmd
	tmp      string
	home     string // the private GEMINI_CLI_HOME of Options.MCPServers, or ""
	done     chan struct{}
	read     chan struct{} // closed when its output has been read to the end
	err      error
	once     sync.Once

	mu     sync.Mutex
	exited bool
}

var startedRE = regexp.MustCompile(`Agent Server started on https?://[^:/\s]+:(\d+)`)

// Start starts the server and waits until it listens.
func Start(ctx context.Context, o Options) (*Server, error) {
	dir, err := filepath.Abs(o.Dir)
	if err != nil {
		return nil, fmt.Errorf("workspace: %w", err)
	}
	env := append(os.Environ(), o.Env...)
	command := Resolve(o.Command, env)
	if len(command) == 0 {
		if command, err = Find(dir, env, o.Setting); err != nil {
			return nil, err
		}
	}
	secret, err := newSecret()
	if err != nil {
		return nil, err
	}
	tmp, err := os.MkdirTemp("", "gemini-a2a-mcp-")
	if err != nil {
		return nil, fmt.Errorf("temp dir: %w", err)
	}
	pin := filepath.Join(tmp, "pin.cjs")
	if err := os.WriteFile(pin, pinScript, 0o600); err != nil {
		os.RemoveAll(tmp)
		return nil, fmt.Errorf("write preload: %w", err)
	}
	logw := o.Log
	if logw == nil {
		logw = io.Discard
	}
	if err := prepareHistory(ctx, dir, env); err != nil {
		fmt.Fprintf(logw, "gemini-a2a-mcp: could not prepare the agent's history repository (%v); the server will make it itself\n", err)
	}
	cmd := exec.Command(command[0], command[1:]...)
	cmd.Dir = dir
	// The user's NODE_OPTIONS come first and are given back to the server's
	// environment by the preload, so the agent's commands get only them.
	userNodeOpts := lookupEnv(env, "NODE_OPTIONS")
	nodeOpts := "--require " + quoteNodeOpt(pin)
	if userNodeOpts != "" {
		nodeOpts = userNodeOpts + " " + nodeOpts
	}
	userNodeOptsJSON, _ := json.Marshal(userNodeOpts)
	linger := o.Linger
	if linger < 0 {
		linger = 0
	}
	env = append(env, "NODE_OPTIONS="+nodeOpts, "GEMINI_A2A_NODE_OPTIONS="+string(userNodeOptsJSON),
		"CODER_AGENT_WORKSPACE_PATH="+dir, "GEMINI_A2A_LISTEN_HOST=127.0.0.1", secretEnv+"="+secret,
		lifelineEnv+"=stdin", fmt.Sprintf("GEMINI_A2A_LINGER_MS=%d", linger.Milliseconds()),
		"GEMINI_A2A_SECRET_DIR="+secretDirIn(tempDirOf(o.Env)))
	home := ""
	if len(o.MCPServers) > 0 {
		if home, err = MCPHome(env, o.MCPServers); err != nil {
			os.RemoveAll(tmp)
			return nil, fmt.Errorf("giving the agent its MCP servers: %w", err)
		}
		// The preload removes it too when the server ends without us.
		env = append(env, "GEMINI_CLI_HOME="+home, "GEMINI_A2A_PRIVATE_HOME="+home)
	}
	drop := func() {
		os.RemoveAll(tmp)
		if home != "" {
			os.RemoveAll(home)
		}
	}
	cmd.Env = env
	osproc.OwnGroup(cmd)
	// The server's output goes to a pipe of ours that Wait does not close,
	// so that what it says before it exits is read to the end.
	out, pw, err := os.Pipe()
	if err != nil {
		drop()
		return nil, fmt.Errorf("output pipe: %w", err)
	}
	// Its stdin is a pipe whose other end only this process holds: the
	// system closes it when this process ends, however it ends, and the
	// preload then stops the server.
	lifeR, lifeW, err := os.Pipe()
	if err != nil {
		out.Close()
		pw.Close()
		drop()
		return nil, fmt.Errorf("lifeline pipe: %w", err)
	}
	// Only this process may hold the write end (on Windows, handles are
	// made inheritable, and not every launcher limits what a child gets).
	if err := osproc.KeepFromChildren(lifeW); err != nil {
		out.Close()
		pw.Close()
		lifeR.Close()
		lifeW.Close()
		drop()
		return nil, fmt.Errorf("lifeline pipe: %w", err)
	}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = lifeR, pw, pw
	if err := cmd.Start(); err != nil {
		out.Close()
		pw.Close()
		lifeR.Close()
		lifeW.Close()
		drop()
		return nil, &ExitError{Command: command, Dir: dir, Status: err.Error(), Code: -1, Setting: o.Setting}
	}
	pw.Close()
	lifeR.Close()
	s := &Server{secret: secret, lifeline: lifeW, cmd: cmd, tmp: tmp, home: home, done: make(chan struct{}), read: make(chan struct{})}
	said := &tail{}
	port := make(chan string, 1)
	go func() {
		defer close(s.read)
		defer out.Close()
		sc := bufio.NewScanner(out)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			line := sc.Text()
			fmt.Fprintln(logw, line)
			said.add(line)
			if m := startedRE.FindStringSubmatch(line); m != nil {
				select {
				case port <- m[1]:
				default:
				}
			}
		}
		_, _ = io.Copy(logw, out)
	}()
	go func() {
		s.err = cmd.Wait()
		_ = lifeW.Close()
		s.mu.Lock()
		if s.record != "" {
			forget(s.record, cmd.Process.Pid)
		}
		s.exited = true
		s.mu.Unlock()
		close(s.done)
	}()
	timeout := o.StartTimeout
	if timeout == 0 {
		timeout = 60 * time.Second
	}
	t := time.NewTimer(timeout)
	defer t.Stop()
	select {
	case p := <-port:
		s.URL = "http://127.0.0.1:" + p
		s.mu.Lock()
		if !s.exited {
			path, err := remember(secretDirIn(tempDirOf(o.Env)), record{URL: s.URL, PID: cmd.Process.Pid, Secret: secret})
			if err != nil {
				fmt.Fprintf(logw, "gemini-a2a-mcp: could not keep the A2A server's secret for a later program to attach to it (%v); only this one can use it\n", err)
			} else {
				s.record = path
			}
		}
		s.mu.Unlock()
		return s, nil
	case <-s.done:
		s.cleanup()
		// What it said last, unless a process it started still holds the pipe.
		select {
		case <-s.read:
		case <-time.After(2 * time.Second):
		}
		status, code := exitStatus(cmd.ProcessState, s.err)
		return nil, &ExitError{Command: command, Dir: dir, Status: status, Code: code, Output: said.lines(), Setting: o.Setting}
	case <-t.C:
		s.Stop()
		return nil, fmt.Errorf("the Gemini CLI A2A server did not start listening within %s; it was run as %s in %s", timeout, quoteCommand(command), dir)
	case <-ctx.Done():
		s.Stop()
		return nil, ctx.Err()
	}
}

// Header is what every request to the server must carry: the launch's
// secret, as "Authorization: Bearer <secret>". Without it the server
// answers 401 and does nothing. Give it to the A2A client
// (agent.Load(ctx, s.URL, hc, agent.WithHeader(s.Header()))).
func (s *Server) Header() http.Header { return bearer(s.secret) }

// Done is closed when the server process has exited.
func (s *Server) Done() <-chan struct{} { return s.done }

// PID returns the server's process id.
func (s *Server) PID() int { return s.cmd.Process.Pid }

// Stop ends the server and the commands it runs: it asks the server to
// stop (on its stdin), and if it has not within a second and a half, kills
// it with its group (on Windows: its process tree) and every process under
// it (the commands it runs are in sessions of their own).
func (s *Server) Stop() {
	s.once.Do(func() {
		_, _ = s.lifeline.WriteString("stop\n")
		_ = s.lifeline.Close()
		t := time.NewTimer(stopWait)
		defer t.Stop()
		select {
		case <-s.done:
		case <-t.C:
			under := descendants(s.cmd.Process.Pid)
			osproc.KillGroup(s.cmd)
			for _, pid := range under {
				if p, err := os.FindProcess(pid); err == nil {
					_ = p.Kill()
				}
			}
			<-s.done
		}
		s.cleanup()
	})
}

// stopWait is how long Stop waits for the server after asking it to stop.
// It ends in a fraction of that, but on a loaded machine its JavaScript
// has been seen to take seconds to hear it, and an editor gives its plugin
// a few seconds to quit.
const stopWait = 1500 * time.Millisecond

// descendants returns the processes under pid, deepest last.
func descendants(pid int) []int {
	parents, err := osproc.Parents()
	if err != nil {
		return nil
	}
	children := map[int][]int{}
	for c, p := range parents {
		children[p] = append(children[p], c)
	}
	var out []int
	queue := []int{pid}
	seen := map[int]bool{pid: true}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		for _, c := range children[p] {
			if !seen[c] {
				seen[c] = true
				out = append(out, c)
				queue = append(queue, c)
			}
		}
	}
	return out
}

func (s *Server) cleanup() {
	_ = s.lifeline.Close()
	os.RemoveAll(s.tmp)
	if s.home != "" {
		os.RemoveAll(s.home)
	}
}

func quoteNodeOpt(p string) string {
	if strings.ContainsAny(p, " \"\\") {
		return `"` + strings.ReplaceAll(strings.ReplaceAll(p, `\`, `\\`), `"`, `\"`) + `"`
	}
	return p
}
