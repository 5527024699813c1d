//go:build linux

package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net"
	"strings"
	"time"
)

// A control is the line channel an editor opens to the driver at start-up
// (from the init file the driver wrote): the driver sends one expression in
// the editor's own language per line, the editor evaluates it and answers
// [ok, value] as one JSON line. Evaluating never moves the cursor, so the
// events the benchmark counts come from typed keys only.
type control struct {
	ln   net.Listener
	conn net.Conn
	r    *bufio.Reader
}

func listenControl() (*control, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("control listener: %w", err)
	}
	return &control{ln: ln}, nil
}

func (c *control) Port() int { return c.ln.Addr().(*net.TCPAddr).Port }

// Accept waits for the editor to connect.
func (c *control) Accept(timeout time.Duration) error {
	type result struct {
		conn net.Conn
		err  error
	}
	done := make(chan result, 1)
	go func() {
		conn, err := c.ln.Accept()
		done <- result{conn, err}
	}()
	select {
	case r := <-done:
		if r.err != nil {
			return fmt.Errorf("accept the editor's control connection: %w", r.err)
		}
		c.conn, c.r = r.conn, bufio.NewReader(r.conn)
		return nil
	case <-time.After(timeout):
		c.ln.Close()
		return fmt.Errorf("the editor did not connect its control channel within %v", timeout)
	}
}

// Eval evaluates expr in the editor and decodes its value into v.
func (c *control) Eval(expr string, v any) error {
	if strings.ContainsRune(expr, '\n') {
		return fmt.Errorf("control expression holds a newline: %q", expr)
	}
	if err := c.conn.SetDeadline(time.Now().Add(20 * time.Second)); err != nil {
		return err
	}
	if _, err := fmt.Fprintf(c.conn, "%s\n", expr); err != nil {
		return fmt.Errorf("send %q: %w", expr, err)
	}
	line, err := c.r.ReadBytes('\n')
	if err != nil {
		return fmt.Errorf("answer to %q: %w", expr, err)
	}
	var answer []json.RawMessage
	if err := json.Unmarshal(line, &answer); err != nil || len(answer) == 0 {
		return fmt.Errorf("answer to %q: not [ok, value]: %q", expr, line)
	}
	var ok any
	_ = json.Unmarshal(answer[0], &ok)
	if ok != true && ok != float64(1) {
		return fmt.Errorf("%q failed in the editor: %s", expr, line)
	}
	if v == nil || len(answer) < 2 {
		return nil
	}
	if err := json.Unmarshal(answer[1], v); err != nil {
		return fmt.Errorf("answer to %q: %w (%s)", expr, err, answer[1])
	}
	return nil
}

func (c *control) Close() {
	if c.conn != nil {
		c.conn.Close()
	}
	c.ln.Close()
}
