package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// kind names one of the two companions under test.
type kind string

const (
	kindOurs      kind = "ours"
	kindReference kind = "reference"
)

// launchSpec says how to start one companion with its editor link on stdio.
type launchSpec struct {
	kind kind
	argv []string
	env  []string // added to the driver's environment
}

// initResult is the part of the initialize result the driver uses.
type initResult struct {
	Port          int    `json:"port"`
	AuthToken     string `json:"authToken"`
	DiscoveryFile string `json:"discoveryFile"`
	PID           int    `json:"pid"`
}

type rpcError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

func (e *rpcError) Error() string { return fmt.Sprintf("rpc error %d: %s", e.Code, e.Message) }

// wireMessage is any JSON-RPC 2.0 message on the editor link.
type wireMessage struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id,omitempty"`
	Method  string          `json:"method,omitempty"`
	Params  json.RawMessage `json:"params,omitempty"`
	Result  json.RawMessage `json:"result,omitempty"`
	Error   *rpcError       `json:"error,omitempty"`
}

type rpcReply struct {
	result json.RawMessage
	err    error
}

// companion is one running companion process seen from the editor's side of
// the editor link. The driver plays an editor that answers diff/open and
// diff/close at once.
type companion struct {
	kind  kind
	cmd   *exec.Cmd
	pid   int
	tmp   string // TMPDIR of the process
	init  initResult
	start time.Time // just before exec

	sdkCalls bool // CLI sessions call openDiff through the SDK client
	// headOnly: read only the head of large requests (--editor-reads head).
	headOnly atomic.Bool
	// params is the buffer handleLine decodes params into, kept from line
	// to line; only the reading goroutine uses it.
	params json.RawMessage

	writeMu sync.Mutex
	w       *bufio.Writer
	stdin   io.WriteCloser

	mu      sync.Mutex
	pending map[string]chan rpcReply
	nextID  int64

	diffOpens  atomic.Int64
	diffCloses atomic.Int64
	protoErrs  atomic.Int64 // error responses with id null: the companion did not understand us
	exited     chan struct{}
	exitErr    error
	readerDone chan struct{}
}

// startCompanion execs the companion with a fresh TMPDIR under runDir and
// starts reading its stdout. It does not initialize it.
func startCompanion(spec launchSpec, runDir string, seq int) (*companion, error) {
	tmp := filepath.Join(runDir, fmt.Sprintf("tmp-%s-%d", spec.kind, seq))
	if err := os.MkdirAll(tmp, 0o700); err != nil {
		return nil, fmt.Errorf("create TMPDIR for %s: %w", spec.kind, err)
	}
	logFile, err := os.Create(filepath.Join(runDir, fmt.Sprintf("%s-%d.log", spec.kind, seq)))
	if err != nil {
		return nil, fmt.Errorf("create log file for %s: %w", spec.kind, err)
	}
	cmd := exec.Command(spec.argv[0], spec.argv[1:]...)
	cmd.Env = append(append(os.Environ(), "TMPDIR="+tmp), spec.env...)
	cmd.Stderr = logFile
	stdin, err := cmd.StdinPipe()
	if err != nil {
		_ = logFile.Close()
		return nil, fmt.Errorf("stdin pipe for %s: %w", spec.kind, err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		_ = logFile.Close()
		return nil, fmt.Errorf("stdout pipe for %s: %w", spec.kind, err)
	}
	c := &companion{
		kind:       spec.kind,
		cmd:        cmd,
		tmp:        tmp,
		stdin:      stdin,
		w:          bufio.NewWriterSize(stdin, 64<<10),
		pending:    make(map[string]chan rpcReply),
		exited:     make(chan struct{}),
		readerDone: make(chan struct{}),
	}
	c.start = time.Now()
	if err := cmd.Start(); err != nil {
		_ = logFile.Close()
		return nil, fmt.Errorf("start %s (%s): %w", spec.kind, spec.argv[0], err)
	}
	c.pid = cmd.Process.Pid
	go c.readLoop(stdout)
	go func() {
		<-c.readerDone
		c.exitErr = cmd.Wait()
		_ = logFile.Close()
		close(c.exited)
	}()
	return c, nil
}

// readLoop reads messages from the companion until its stdout closes.
func (c *companion) readLoop(stdout io.Reader) {
	defer close(c.readerDone)
	r := bufio.NewReaderSize(stdout, 1<<20)
	// A line longer than the reader's buffer (a large diff/open) is
	// gathered in long, kept from line to line: the driver shares the
	// cores with the companion it measures, so it allocates no new 34 MB
	// per 16 MiB proposal. handleLine keeps nothing of the line.
	var long []byte
	for {
		line, err := readLine(r, &long)
		if len(line) > 0 {
			c.handleLine(line)
		}
		if err != nil {
			c.failPending(fmt.Errorf("%s closed its stdout: %w", c.kind, err))
			return
		}
	}
}

func (c *companion) handleLine(line []byte) {
	// The params (nothing the driver's editor looks at) are copied into the
	// buffer of the last line's: a 33 MB diff/open line then costs no new
	// 33 MB, whose page faults varied a 16 MiB proposal's time by hundreds
	// of milliseconds from call to call.
	m := wireMessage{Params: c.params[:0]}
	if !(c.headOnly.Load() && len(line) > headOnlyMin && readHead(line, &m)) {
		if err := json.Unmarshal(line, &m); err != nil {
			c.protoErrs.Add(1)
			return
		}
	}
	if cap(m.Params) > cap(c.params) {
		c.params = m.Params
	}
	hasID := len(m.ID) > 0 && string(m.ID) != "null"
	switch {
	case m.Method != "" && hasID:
		c.answerRequest(m)
	case m.Method != "":
		// status and log notifications: nothing to do.
	case hasID:
		c.mu.Lock()
		ch := c.pending[string(m.ID)]
		delete(c.pending, string(m.ID))
		c.mu.Unlock()
		if ch == nil {
			return
		}
		if m.Error != nil {
			ch <- rpcReply{err: m.Error}
		} else {
			ch <- rpcReply{result: m.Result}
		}
	case m.Error != nil:
		c.protoErrs.Add(1)
	}
}

// headOnlyMin is the line length from which --editor-reads head reads only
// the head of a request.
const headOnlyMin = 1 << 20

// readHead decodes the jsonrpc, id and method members of a request that
// come before its params, and reports whether it found a request there.
// The params are not read.
func readHead(line []byte, m *wireMessage) bool {
	dec := json.NewDecoder(bytes.NewReader(line))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return false
	}
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return false
		}
		switch t {
		case "jsonrpc":
			err = dec.Decode(&m.JSONRPC)
		case "id":
			err = dec.Decode(&m.ID)
		case "method":
			err = dec.Decode(&m.Method)
		default:
			return m.JSONRPC == "2.0" && len(m.ID) > 0 && m.Method != ""
		}
		if err != nil {
			return false
		}
	}
	return false
}

// answerRequest plays the editor: diff/open is shown at once, diff/close
// returns the proposed side.
func (c *companion) answerRequest(m wireMessage) {
	var result any
	var rerr *rpcError
	switch m.Method {
	case "diff/open":
		c.diffOpens.Add(1)
		result = struct{}{}
	case "diff/close":
		c.diffCloses.Add(1)
		result = map[string]any{"content": "closed by the benchmark editor\n"}
	default:
		rerr = &rpcError{Code: -32601, Message: "method not found: " + m.Method}
	}
	reply := map[string]any{"jsonrpc": "2.0", "id": m.ID}
	if rerr != nil {
		reply["error"] = rerr
	} else {
		reply["result"] = result
	}
	if err := c.send(reply); err != nil {
		c.protoErrs.Add(1)
	}
}

func (c *companion) failPending(err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for id, ch := range c.pending {
		ch <- rpcReply{err: err}
		delete(c.pending, id)
	}
}

// send writes one message as one line.
func (c *companion) send(msg any) error {
	data, err := json.Marshal(msg)
	if err != nil {
		return fmt.Errorf("encode message: %w", err)
	}
	c.writeMu.Lock()
	defer c.writeMu.Unlock()
	if _, err := c.w.Write(append(data, '\n')); err != nil {
		return fmt.Errorf("write to %s: %w", c.kind, err)
	}
	if err := c.w.Flush(); err != nil {
		return fmt.Errorf("write to %s: %w", c.kind, err)
	}
	return nil
}

// sendBatch writes several notifications in one write, as an editor that
// queued them in one event-loop turn would.
func (c *companion) sendBatch(msgs [][]byte) error {
	c.writeMu.Lock()
	defer c.writeMu.Unlock()
	for _, m := range msgs {
		if _, err := c.w.Write(m); err != nil {
			return fmt.Errorf("write to %s: %w", c.kind, err)
		}
	}
	if err := c.w.Flush(); err != nil {
		return fmt.Errorf("write to %s: %w", c.kind, err)
	}
	return nil
}

func (c *companion) notify(method string, params any) error {
	return c.send(map[string]any{"jsonrpc": "2.0", "method": method, "params": params})
}

// call sends a request and waits for its response.
func (c *companion) call(ctx context.Context, method string, params any) (json.RawMessage, error) {
	c.mu.Lock()
	c.nextID++
	id := strconv.FormatInt(c.nextID, 10)
	ch := make(chan rpcReply, 1)
	c.pending[id] = ch
	c.mu.Unlock()
	if err := c.send(map[string]any{"jsonrpc": "2.0", "id": json.RawMessage(id), "method": method, "params": params}); err != nil {
		c.mu.Lock()
		delete(c.pending, id)
		c.mu.Unlock()
		return nil, err
	}
	select {
	case r := <-ch:
		if r.err != nil {
			return nil, fmt.Errorf("%s %s: %w", c.kind, method, r.err)
		}
		return r.result, nil
	case <-ctx.Done():
		c.mu.Lock()
		delete(c.pending, id)
		c.mu.Unlock()
		return nil, fmt.Errorf("%s %s: %w", c.kind, method, ctx.Err())
	}
}

// initialize sends initialize and returns the time from exec to its
// response. The discovery file exists before that response (editor link
// lifecycle), and the driver checks that it does.
func (c *companion) initialize(ctx context.Context, workspace string) (time.Duration, error) {
	params := map[string]any{
		"protocolVersion":  1,
		"ide":              map[string]string{"name": "bench", "displayName": "Benchmark Editor"},
		"processId":        os.Getpid(),
		"workspaceFolders": []string{workspace},
		"isTrusted":        true,
		// Like VS Code, which computes the diff itself, the driver's
		// editor shows no unified diff (the reference sends it empty).
		"capabilities": map[string]bool{"unifiedDiff": false},
	}
	res, err := c.call(ctx, "initialize", params)
	if err != nil {
		return 0, err
	}
	elapsed := time.Since(c.start)
	if err := json.Unmarshal(res, &c.init); err != nil {
		return 0, fmt.Errorf("%s initialize result: %w", c.kind, err)
	}
	if c.init.Port == 0 || c.init.AuthToken == "" {
		return 0, fmt.Errorf("%s initialize result lacks port or authToken: %s", c.kind, res)
	}
	if c.init.DiscoveryFile == "" {
		return 0, fmt.Errorf("%s wrote no discovery file", c.kind)
	}
	if _, err := os.Stat(c.init.DiscoveryFile); err != nil {
		return 0, fmt.Errorf("%s discovery file missing after initialize: %w", c.kind, err)
	}
	if dir := filepath.Join(c.tmp, "gemini", "ide"); filepath.Dir(c.init.DiscoveryFile) != dir {
		return 0, fmt.Errorf("%s discovery file %s is not in %s", c.kind, c.init.DiscoveryFile, dir)
	}
	return elapsed, nil
}

// shutdown asks the companion to stop and waits for it to exit. It checks
// that the discovery file is gone.
func (c *companion) shutdown(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	_, callErr := c.call(ctx, "shutdown", nil)
	_ = c.stdin.Close()
	select {
	case <-c.exited:
	case <-ctx.Done():
		_ = c.cmd.Process.Kill()
		<-c.exited
		return fmt.Errorf("%s did not exit within 5 s of shutdown", c.kind)
	}
	var errs []error
	// The process may exit before its answer is read; then only a clean exit
	// counts. An error answer is a failure.
	if ee := (*rpcError)(nil); errors.As(callErr, &ee) {
		errs = append(errs, callErr)
	}
	if c.exitErr != nil {
		errs = append(errs, fmt.Errorf("%s exit: %w", c.kind, c.exitErr))
	}
	if c.init.DiscoveryFile != "" {
		if _, err := os.Stat(c.init.DiscoveryFile); err == nil {
			errs = append(errs, fmt.Errorf("%s left its discovery file %s", c.kind, c.init.DiscoveryFile))
		}
	}
	return errors.Join(errs...)
}

// kill stops the process without ceremony (after a failure).
func (c *companion) kill() {
	_ = c.cmd.Process.Kill()
	<-c.exited
}

func (c *companion) alive() error {
	select {
	case <-c.exited:
		return fmt.Errorf("%s exited: %v", c.kind, c.exitErr)
	default:
		return nil
	}
}
