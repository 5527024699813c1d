// Package launch starts Gemini CLI's A2A server for a folder, on 127.0.0.1
// only, with a private environment, and stops it again.
//
// The server (npm @google/gemini-cli-a2a-server 0.25) listens on every
// interface without authentication and has no host option; a Node preload
// (pin.cjs, written next to a temporary file and passed with
// NODE_OPTIONS=--require) makes its listen call bind 127.0.0.1. Anyone on
// this machine who can reach that port can still use the agent.
package launch

import (
	"bufio"
	"context"
	_ "embed"
	"errors"
	"fmt"
	"io"
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
	// Command is the server command and its arguments. Empty: find
	// gemini-cli-a2a-server on PATH or under node_modules/.bin upward from Dir,
	// else node_modules/@google/gemini-cli-a2a-server/dist/a2a-server.mjs.
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
}

// Server is a running A2A server.
type Server struct {
	// URL is its base URL on 127.0.0.1.
	URL string

	cmd  *exec.Cmd
	tmp  string
	done chan struct{}
	err  error
	once sync.Once
}

var startedRE = regexp.MustCompile(`Agent Server started on https?://[^:/\s]+:(\d+)`)

// Find returns the default server command for dir.
func Find(dir string) ([]string, error) {
	if p, err := exec.LookPath("gemini-cli-a2a-server"); err == nil {
		return []string{p}, nil
	}
	for d := dir; ; d = filepath.Dir(d) {
		for _, c := range []string{
			filepath.Join(d, "node_modules", ".bin", "gemini-cli-a2a-server"),
			filepath.Join(d, "node_modules", "@google", "gemini-cli-a2a-server", "dist", "a2a-server.mjs"),
		} {
			if _, err := os.Stat(c); err == nil {
				if strings.HasSuffix(c, ".mjs") {
					return []string{"node", c}, nil
				}
				return []string{c}, nil
			}
		}
		if filepath.Dir(d) == d {
			break
		}
	}
	return nil, errors.New("the Gemini CLI A2A server was not found: install it (npm install -g @google/gemini-cli-a2a-server) or pass --server-command")
}

// Start starts the server and waits until it listens.
func Start(ctx context.Context, o Options) (*Server, error) {
	dir, err := filepath.Abs(o.Dir)
	if err != nil {
		return nil, fmt.Errorf("workspace: %w", err)
	}
	command := o.Command
	if len(command) == 0 {
		if command, err = Find(dir); err != nil {
			return nil, err
		}
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
	env := append(os.Environ(), o.Env...)
	if err := prepareHistory(ctx, dir, env); err != nil {
		fmt.Fprintf(logw, "gemini-a2a-mcp: could not prepare the agent's history repository (%v); the server will make it itself\n", err)
	}
	cmd := exec.Command(command[0], command[1:]...)
	cmd.Dir = dir
	nodeOpts := "--require " + quoteNodeOpt(pin)
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "NODE_OPTIONS="); ok && v != "" {
			nodeOpts = v + " " + nodeOpts
		}
	}
	env = append(env, "NODE_OPTIONS="+nodeOpts, "CODER_AGENT_WORKSPACE_PATH="+dir, "GEMINI_A2A_LISTEN_HOST=127.0.0.1")
	cmd.Env = env
	osproc.OwnGroup(cmd)
	out, err := cmd.StdoutPipe()
	if err != nil {
		os.RemoveAll(tmp)
		return nil, err
	}
	cmd.Stderr = cmd.Stdout
	if err := cmd.Start(); err != nil {
		os.RemoveAll(tmp)
		return nil, fmt.Errorf("start %s: %w", command[0], err)
	}
	s := &Server{cmd: cmd, tmp: tmp, done: make(chan struct{})}
	port := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			line := sc.Text()
			fmt.Fprintln(logw, line)
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
		return s, nil
	case <-s.done:
		s.cleanup()
		return nil, fmt.Errorf("A2A server %s exited before listening: %v", command[0], s.err)
	case <-t.C:
		s.Stop()
		return nil, fmt.Errorf("A2A server %s did not start within %s", command[0], timeout)
	case <-ctx.Done():
		s.Stop()
		return nil, ctx.Err()
	}
}

// Done is closed when the server process has exited.
func (s *Server) Done() <-chan struct{} { return s.done }

// PID returns the server's process id.
func (s *Server) PID() int { return s.cmd.Process.Pid }

// Stop ends the server: a polite signal, then a kill after a few seconds.
func (s *Server) Stop() {
	s.once.Do(func() {
		osproc.TerminateGroup(s.cmd)
		t := time.NewTimer(3 * time.Second)
		select {
		case <-s.done:
		case <-t.C:
			osproc.KillGroup(s.cmd)
			<-s.done
		}
		t.Stop()
		s.cleanup()
	})
}

func (s *Server) cleanup() { os.RemoveAll(s.tmp) }

func quoteNodeOpt(p string) string {
	if strings.ContainsAny(p, " \"\\") {
		return `"` + strings.ReplaceAll(strings.ReplaceAll(p, `\`, `\\`), `"`, `\"`) + `"`
	}
	return p
}
