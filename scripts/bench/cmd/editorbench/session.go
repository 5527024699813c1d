//go:build linux

package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// A session is one running editor on its own terminal, with the plugin
// (and the sidecar behind the tap) or without it.
type session struct {
	ed     *editor
	plugin bool
	dir    string
	cmd    *exec.Cmd
	term   *terminal
	ctl    *control
	seq    int
	exited chan struct{}

	tapLn   net.Listener
	mu      sync.Mutex
	records []record
}

type sessionConfig struct {
	Root      string // the sandbox of this session
	PluginDir string
	Sidecar   string // the real sidecar binary
	Self      string // this driver's binary (the tap)
	File      string // the file to edit (in Workspace)
	Workspace string
	Extra     string
	Baseline  string
	Rows      int
	Cols      int
}

// startSession starts ed on a new terminal and waits until it is ready:
// its control channel connected and, with the plugin, the sidecar running
// and the file reported.
func startSession(ed *editor, plugin bool, c sessionConfig) (*session, error) {
	s := &session{ed: ed, plugin: plugin, dir: c.Root, exited: make(chan struct{})}
	for _, d := range []string{"home", "tmp", "bin", "pack"} {
		if err := os.MkdirAll(filepath.Join(c.Root, d), 0o700); err != nil {
			return nil, err
		}
	}
	ctl, err := listenControl()
	if err != nil {
		return nil, err
	}
	s.ctl = ctl
	p := initParams{Plugin: plugin, PluginDir: c.PluginDir, PackDir: filepath.Join(c.Root, "pack"),
		CtlPort: ctl.Port(), Workspace: c.Workspace, StateDir: c.Root, ExtraSetup: c.Extra, Baseline: c.Baseline}
	if plugin {
		sock := filepath.Join(c.Root, "tap.sock")
		s.tapLn, err = net.Listen("unix", sock)
		if err != nil {
			ctl.Close()
			return nil, fmt.Errorf("tap socket: %w", err)
		}
		go s.collect()
		wrapper := filepath.Join(c.Root, "bin", "gemini-ide-companion")
		script := fmt.Sprintf("#!/bin/sh\nexec %s tap --sidecar %s --report %s -- \"$@\"\n",
			shellQuote(c.Self), shellQuote(c.Sidecar), shellQuote(sock))
		if err := os.WriteFile(wrapper, []byte(script), 0o755); err != nil {
			s.Close()
			return nil, err
		}
		p.Sidecar = wrapper
	}
	if plugin && ed.install != nil {
		dir, err := ed.install(p)
		if err != nil {
			s.Close()
			return nil, fmt.Errorf("%s: installing the plugin: %w", ed.Name, err)
		}
		p.PluginDir = dir
	}
	name, text := ed.init(p)
	initPath := filepath.Join(c.Root, name)
	if err := os.WriteFile(initPath, []byte(text), 0o600); err != nil {
		s.Close()
		return nil, err
	}
	program, err := exec.LookPath(ed.Program)
	if err != nil {
		s.Close()
		return nil, fmt.Errorf("%s is not installed: %w", ed.Program, err)
	}
	cmd := exec.Command(program, ed.args(initPath, c.File)...)
	cmd.Dir = c.Workspace
	home := filepath.Join(c.Root, "home")
	cmd.Env = []string{
		"HOME=" + home, "TMPDIR=" + filepath.Join(c.Root, "tmp"), "TERM=xterm-256color",
		"LANG=C.UTF-8", "PATH=" + os.Getenv("PATH"),
		"XDG_CONFIG_HOME=" + filepath.Join(home, ".config"), "XDG_DATA_HOME=" + filepath.Join(home, ".local/share"),
		"XDG_STATE_HOME=" + filepath.Join(home, ".local/state"), "XDG_CACHE_HOME=" + filepath.Join(home, ".cache"),
	}
	s.cmd = cmd
	s.term, err = startOnTerminal(cmd, c.Rows, c.Cols)
	if err != nil {
		s.Close()
		return nil, err
	}
	go func() {
		_ = cmd.Wait()
		close(s.exited)
	}()
	if err := ctl.Accept(30 * time.Second); err != nil {
		s.Close()
		return nil, fmt.Errorf("%s: %w\nscreen tail: %q", s, err, s.term.Tail())
	}
	if plugin {
		if _, err := s.waitRecord(0, 30*time.Second, func(r record) bool { return r.Method == "context/fileFocused" && r.Line > 0 }); err != nil {
			s.Close()
			return nil, fmt.Errorf("%s: the plugin never reported the file: %w", s, err)
		}
	}
	return s, nil
}

// settle waits until the editor has finished what it does on its own
// after start-up (see editor.Settled).
func (s *session) settle(timeout time.Duration) error {
	if s.ed.Settled == "" {
		return nil
	}
	deadline := time.Now().Add(timeout)
	for {
		var done bool
		if err := s.ctl.Eval(s.ed.Settled, &done); err != nil {
			return fmt.Errorf("%s: %w", s, err)
		}
		if done {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s was still busy after %v (%s)", s, timeout, s.ed.Settled)
		}
		time.Sleep(500 * time.Millisecond)
	}
}

func (s *session) String() string {
	if s.plugin {
		return s.ed.Name + " with the plugin"
	}
	return s.ed.Name + " without the plugin"
}

func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// collect gathers the tap's records (one connection per sidecar started).
func (s *session) collect() {
	for {
		conn, err := s.tapLn.Accept()
		if err != nil {
			return
		}
		go func() {
			defer conn.Close()
			sc := bufio.NewScanner(conn)
			for sc.Scan() {
				var r record
				if json.Unmarshal(sc.Bytes(), &r) == nil {
					s.mu.Lock()
					s.records = append(s.records, r)
					s.mu.Unlock()
				}
			}
		}()
	}
}

// mark is the number of records so far.
func (s *session) mark() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.records)
}

// since returns the records from mark on.
func (s *session) since(mark int) []record {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]record(nil), s.records[mark:]...)
}

var errExited = errors.New("the editor exited")

// waitRecord waits for a record from mark on that matches ok.
func (s *session) waitRecord(mark int, timeout time.Duration, ok func(record) bool) (record, error) {
	deadline := time.Now().Add(timeout)
	for {
		for _, r := range s.since(mark) {
			if ok(r) {
				return r, nil
			}
		}
		select {
		case <-s.exited:
			return record{}, errExited
		default:
		}
		if time.Now().After(deadline) {
			return record{}, fmt.Errorf("no matching message within %v", timeout)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// sync types the sentinel key and waits until the editor has counted it,
// that is, until it has read and run every key typed before it.
func (s *session) sync(timeout time.Duration) error {
	if err := s.term.Type(sentinelKey); err != nil {
		return err
	}
	s.seq++
	deadline := time.Now().Add(timeout)
	for {
		var n int
		if err := s.ctl.Eval(s.ed.Seq, &n); err != nil {
			return fmt.Errorf("%s: %w", s, err)
		}
		if n >= s.seq {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s did not take the keys within %v (sentinel %d of %d)\nscreen tail: %q", s, timeout, n, s.seq, s.term.Tail())
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// reset ends any selection and puts the cursor on line 1, column 1, then
// waits for the editor (and the plugin's report of it) to settle.
func (s *session) reset(settle time.Duration) error {
	for i, chunk := range s.ed.Reset {
		if i > 0 {
			time.Sleep(60 * time.Millisecond)
		}
		if err := s.term.Type(chunk); err != nil {
			return err
		}
	}
	time.Sleep(60 * time.Millisecond)
	if err := s.sync(10 * time.Second); err != nil {
		return err
	}
	time.Sleep(settle)
	return nil
}

// cpu is the CPU time the editor has used so far (every thread).
func (s *session) cpu() (time.Duration, error) {
	return processCPU(s.cmd.Process.Pid)
}

// sidecarCPU is the CPU time of the sidecar behind the tap (0 without the
// plugin): the tap is the editor's child, the sidecar the tap's.
func (s *session) sidecarCPU() time.Duration {
	if !s.plugin {
		return 0
	}
	var total time.Duration
	for _, tap := range children(s.cmd.Process.Pid) {
		for _, sc := range children(tap) {
			if d, err := processCPU(sc); err == nil {
				total += d
			}
		}
	}
	return total
}

// children lists the processes whose parent is pid.
func children(pid int) []int {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	var out []int
	for _, e := range entries {
		child, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		data, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		i := strings.LastIndexByte(string(data), ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(string(data[i+1:]))
		if len(f) > 1 && f[1] == strconv.Itoa(pid) {
			out = append(out, child)
		}
	}
	return out
}

// processCPU sums the time on CPU of every thread of pid, from
// /proc/PID/task/*/schedstat (nanoseconds, unlike the clock ticks of
// /proc/PID/stat).
func processCPU(pid int) (time.Duration, error) {
	tasks, err := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
	if err != nil {
		return 0, fmt.Errorf("threads of pid %d: %w", pid, err)
	}
	var total int64
	for _, t := range tasks {
		data, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%s/schedstat", pid, t.Name()))
		if err != nil {
			continue // the thread ended
		}
		f := strings.Fields(string(data))
		if len(f) == 0 {
			continue
		}
		ns, err := strconv.ParseInt(f[0], 10, 64)
		if err != nil {
			return 0, fmt.Errorf("parse schedstat of pid %d: %w", pid, err)
		}
		total += ns
	}
	return time.Duration(total), nil
}

// Close quits the editor: a SIGTERM to it (its sidecar sees its stdin
// close and exits), then SIGKILL if it lingers.
func (s *session) Close() {
	if s.cmd != nil && s.cmd.Process != nil {
		_ = s.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-s.exited:
		case <-time.After(5 * time.Second):
			_ = s.cmd.Process.Kill()
			<-s.exited
		}
	}
	if s.term != nil {
		s.term.Close()
	}
	if s.ctl != nil {
		s.ctl.Close()
	}
	if s.tapLn != nil {
		s.tapLn.Close()
	}
}
