//go:build linux

package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"sync"
	"syscall"
	"time"
)

// A record is one message the editor wrote to the sidecar, as the tap saw
// it cross the pipe.
type record struct {
	// At is when the tap read the message's last byte (Unix nanoseconds).
	At int64 `json:"t"`
	// Method is the message's method ("" for an answer to a request).
	Method string `json:"m"`
	// FromSidecar marks a message the sidecar wrote to the editor.
	FromSidecar bool `json:"r,omitempty"`
	// Bytes is the size of the message's body.
	Bytes int `json:"b"`
	// Line and Char are params.cursor of a context/* message (0: none).
	Line int `json:"l,omitempty"`
	Char int `json:"c,omitempty"`
	// Selected is the number of bytes of params.selectedText (-1: none).
	Selected int `json:"s"`
	// SelectedLines is the number of lines of params.selectedText.
	SelectedLines int `json:"n,omitempty"`
}

// runTap is the `tap` subcommand: it runs the sidecar with the arguments
// after "--", copies the editor's stdin to it unchanged, and reports each
// message it copied (LSP framing: the editor link as every plugin speaks it)
// to the driver's socket. The sidecar's stdout and stderr are the tap's own,
// so answers go straight back to the editor.
func runTap(args []string) int {
	var sidecar, report string
	for len(args) > 0 && args[0] != "--" {
		if len(args) < 2 {
			fmt.Fprintf(os.Stderr, "editorbench tap: %s needs a value\n", args[0])
			return 2
		}
		switch args[0] {
		case "--sidecar":
			sidecar = args[1]
		case "--report":
			report = args[1]
		default:
			fmt.Fprintf(os.Stderr, "editorbench tap: unknown flag %s\n", args[0])
			return 2
		}
		args = args[2:]
	}
	if len(args) > 0 {
		args = args[1:]
	}
	if sidecar == "" || report == "" {
		fmt.Fprintln(os.Stderr, "editorbench tap: --sidecar and --report are required")
		return 2
	}
	cmd := exec.Command(sidecar, args...)
	cmd.Stderr = os.Stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		fmt.Fprintf(os.Stderr, "editorbench tap: %v\n", err)
		return 1
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		fmt.Fprintf(os.Stderr, "editorbench tap: %v\n", err)
		return 1
	}
	// --version, --help and the like: no editor link, nothing to count.
	var conn net.Conn
	if hasFlag(args, "--stdio") {
		conn, err = net.Dial("unix", report)
		if err != nil {
			fmt.Fprintf(os.Stderr, "editorbench tap: report socket: %v\n", err)
			return 1
		}
		defer conn.Close()
	}
	if err := cmd.Start(); err != nil {
		fmt.Fprintf(os.Stderr, "editorbench tap: start %s: %v\n", sidecar, err)
		return 1
	}
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP)
	go func() {
		for s := range sigs {
			_ = cmd.Process.Signal(s)
		}
	}()
	var rep *reporter
	if conn != nil {
		rep = &reporter{w: bufio.NewWriter(conn)}
	}
	go func() {
		copyCounting(in, os.Stdin, rep, false)
		in.Close()
	}()
	// Wait reads nothing more once the process exited: the copy must end
	// first, at the pipe's EOF.
	copied := make(chan struct{})
	go func() {
		copyCounting(os.Stdout, out, rep, true)
		close(copied)
	}()
	<-copied
	err = cmd.Wait()
	signal.Stop(sigs)
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		if st, ok := exit.Sys().(syscall.WaitStatus); ok && st.Signaled() {
			return 128 + int(st.Signal())
		}
		return exit.ExitCode()
	}
	if err != nil {
		return 1
	}
	return 0
}

func hasFlag(args []string, flag string) bool {
	for _, a := range args {
		if a == flag {
			return true
		}
	}
	return false
}

// A reporter writes records to the driver, one JSON line each, from both
// directions of the pipe.
type reporter struct {
	mu sync.Mutex
	w  *bufio.Writer
}

func (r *reporter) send(recs []record) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, rec := range recs {
		line, _ := json.Marshal(rec)
		r.w.Write(line)
		r.w.WriteByte('\n')
	}
	r.w.Flush()
}

// copyCounting copies src to dst as it comes and, when rep is not nil,
// reports each complete message.
func copyCounting(dst io.Writer, src io.Reader, rep *reporter, fromSidecar bool) {
	var pending []byte
	buf := make([]byte, 64<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return
			}
			if rep != nil {
				now := time.Now().UnixNano()
				pending = append(pending, buf[:n]...)
				var recs []record
				recs, pending = parseFrames(pending, now)
				for i := range recs {
					recs[i].FromSidecar = fromSidecar
				}
				if len(recs) > 0 {
					rep.send(recs)
				}
			}
		}
		if err != nil {
			return
		}
	}
}

var contentLength = []byte("content-length:")

// parseFrames takes the complete LSP-framed messages off the front of buf
// and returns their records and the rest of buf.
func parseFrames(buf []byte, now int64) ([]record, []byte) {
	var recs []record
	for {
		end := bytes.Index(buf, []byte("\r\n\r\n"))
		if end < 0 {
			return recs, buf
		}
		size := -1
		for _, h := range bytes.Split(buf[:end], []byte("\r\n")) {
			if len(h) > len(contentLength) && bytes.EqualFold(h[:len(contentLength)], contentLength) {
				size, _ = strconv.Atoi(string(bytes.TrimSpace(h[len(contentLength):])))
			}
		}
		if size < 0 {
			// Not LSP framing: count nothing rather than guess.
			return recs, nil
		}
		if len(buf) < end+4+size {
			return recs, buf
		}
		body := buf[end+4 : end+4+size]
		recs = append(recs, describe(body, now))
		buf = buf[end+4+size:]
	}
}

// describe reads what the report needs from one message body.
func describe(body []byte, now int64) record {
	var msg struct {
		Method string `json:"method"`
		Params struct {
			Cursor *struct {
				Line      int `json:"line"`
				Character int `json:"character"`
			} `json:"cursor"`
			SelectedText *string `json:"selectedText"`
		} `json:"params"`
	}
	r := record{At: now, Bytes: len(body), Selected: -1}
	if err := json.Unmarshal(body, &msg); err != nil {
		r.Method = "(malformed)"
		return r
	}
	r.Method = msg.Method
	if msg.Params.Cursor != nil {
		r.Line, r.Char = msg.Params.Cursor.Line, msg.Params.Cursor.Character
	}
	if msg.Params.SelectedText != nil {
		r.Selected = len(*msg.Params.SelectedText)
		if r.Selected > 0 {
			r.SelectedLines = bytes.Count([]byte(*msg.Params.SelectedText), []byte("\n")) + 1
		}
	}
	return r
}
