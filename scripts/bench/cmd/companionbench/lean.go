package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
)

// leanCaller sends tools/call requests on an existing MCP session as plain
// HTTP POSTs, the way any Streamable HTTP client does, without the SDK
// client's own per-message costs. The load phases use it so that the
// driver, which shares the machine's cores with the server, spends as little
// CPU as possible per call; the session itself (initialize, the GET stream,
// notifications) stays with the SDK client.
type leanCaller struct {
	hc        *http.Client
	endpoint  string
	token     string
	sessionID string
	version   string
	nextID    atomic.Int64

	mu sync.Mutex
	// spare is the buffer of the last request, kept for the next: a 16 MiB
	// proposal then costs the driver no new 17 MB buffer and no page faults
	// to fill it. A sync.Pool would not do: the driver's collector, busy
	// with the calls before, empties it.
	spare *bytes.Buffer
	// The last openDiff arguments encoded (see openDiffArgs).
	argsPath, argsContent string
	args                  []byte
}

// buffer returns an empty buffer for a request body.
func (l *leanCaller) buffer() *bytes.Buffer {
	l.mu.Lock()
	b := l.spare
	l.spare = nil
	l.mu.Unlock()
	if b == nil {
		return new(bytes.Buffer)
	}
	b.Reset()
	return b
}

// keep takes back the buffer of a request the server has read whole.
func (l *leanCaller) keep(b *bytes.Buffer) {
	l.mu.Lock()
	l.spare = b
	l.mu.Unlock()
}

func newLeanCaller(s *cliSession, c *companion) (*leanCaller, error) {
	init := s.cs.InitializeResult()
	if init == nil || s.cs.ID() == "" {
		return nil, fmt.Errorf("%s: session has no id or initialize result", c.kind)
	}
	return &leanCaller{
		hc:        &http.Client{Transport: s.httpTransport},
		endpoint:  fmt.Sprintf("http://127.0.0.1:%d/mcp", c.init.Port),
		token:     c.init.AuthToken,
		sessionID: s.cs.ID(),
		version:   init.ProtocolVersion,
	}, nil
}

// toolResponse is the part of the answer the driver checks.
type toolResponse struct {
	ID     string `json:"id"`
	Result *struct {
		IsError bool `json:"isError"`
		Content []struct {
			Text string `json:"text"`
		} `json:"content"`
	} `json:"result"`
	Error *struct {
		Message string `json:"message"`
	} `json:"error"`
}

// openDiff calls the openDiff tool, as callTool does.
func (l *leanCaller) openDiff(ctx context.Context, path, content string) error {
	args, err := l.openDiffArgs(path, content)
	if err != nil {
		return err
	}
	return l.callTool(ctx, "openDiff", args)
}

// openDiffArgs returns the encoded arguments of an openDiff. The driver
// proposes the same text many times over (the payload phase sends each
// size three times, the load phases one small text throughout), so it
// encodes a text once and keeps it until the next: the CLI's own encoding
// is not what the runs measure, and a 16 MiB text would otherwise cost the
// driver, on the cores it shares with the companion, a 17 MB buffer to
// grow and fill on every call.
func (l *leanCaller) openDiffArgs(path, content string) ([]byte, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.argsPath != path || l.argsContent != content {
		args, err := json.Marshal(map[string]string{"filePath": path, "newContent": content})
		if err != nil {
			return nil, fmt.Errorf("encode openDiff arguments: %w", err)
		}
		l.argsPath, l.argsContent, l.args = path, content, args
	}
	return l.args, nil
}

// callTool calls a tool with arguments already encoded as a JSON object,
// and fails on a transport error, a JSON-RPC error or a tool error.
func (l *leanCaller) callTool(ctx context.Context, name string, args []byte) error {
	id := "bench-" + strconv.FormatInt(l.nextID.Add(1), 10)
	quotedName, err := json.Marshal(name)
	if err != nil {
		return fmt.Errorf("encode %s: %w", name, err)
	}
	body := l.buffer()
	body.WriteString(`{"jsonrpc":"2.0","id":"` + id + `","method":"tools/call","params":{"name":`)
	body.Write(quotedName)
	body.WriteString(`,"arguments":`)
	body.Write(args)
	body.WriteString("}}")
	hreq, err := http.NewRequestWithContext(ctx, http.MethodPost, l.endpoint, bytes.NewReader(body.Bytes()))
	if err != nil {
		return fmt.Errorf("%s request: %w", name, err)
	}
	hreq.Header.Set("Content-Type", "application/json")
	hreq.Header.Set("Accept", "application/json, text/event-stream")
	hreq.Header.Set("Mcp-Session-Id", l.sessionID)
	hreq.Header.Set("Mcp-Protocol-Version", l.version)
	resp, err := l.hc.Do(hreq)
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		msg, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		return fmt.Errorf("%s: HTTP %d: %s", name, resp.StatusCode, strings.TrimSpace(string(msg)))
	}
	var answer toolResponse
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		answer, err = readSSEAnswer(resp.Body, id)
	} else {
		err = json.NewDecoder(resp.Body).Decode(&answer)
	}
	if err != nil {
		return fmt.Errorf("%s answer: %w", name, err)
	}
	// Drain so the connection is reused.
	_, _ = io.Copy(io.Discard, resp.Body)
	switch {
	case answer.Error != nil:
		return fmt.Errorf("%s: JSON-RPC error: %s", name, answer.Error.Message)
	case answer.Result == nil:
		return fmt.Errorf("%s: answer without result", name)
	case answer.Result.IsError:
		text := ""
		if len(answer.Result.Content) > 0 {
			text = answer.Result.Content[0].Text
		}
		return fmt.Errorf("%s: tool error: %s", name, text)
	}
	// Answered: the server has read the whole body, so the buffer is free.
	l.keep(body)
	return nil
}

// sseReaders holds the readers of answers between calls: a call allocates
// no read buffer, so that the driver's own garbage, on the cores it shares
// with the server, stays small.
var sseReaders = sync.Pool{New: func() any { return bufio.NewReaderSize(nil, 4<<10) }}

// readSSEAnswer reads server-sent events until the response to id.
func readSSEAnswer(r io.Reader, id string) (toolResponse, error) {
	br := sseReaders.Get().(*bufio.Reader)
	br.Reset(r)
	defer func() {
		br.Reset(nil)
		sseReaders.Put(br)
	}()
	var data, long []byte
	for {
		line, err := readLine(br, &long)
		line = bytes.TrimRight(line, "\r\n")
		switch {
		case bytes.HasPrefix(line, []byte("data:")):
			data = append(data, bytes.TrimPrefix(line[len("data:"):], []byte(" "))...)
		case len(line) == 0 && len(data) > 0:
			var answer toolResponse
			if err := json.Unmarshal(data, &answer); err == nil && answer.ID == id {
				return answer, nil
			}
			data = data[:0]
		}
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return toolResponse{}, err
		}
	}
	return toolResponse{}, fmt.Errorf("stream ended without the answer to %s", id)
}

// readLine reads a line from br. One longer than br's buffer (a large
// diff/open or closeDiff answer) is gathered in *long, which the caller
// keeps from line to line so that a long line costs no new buffer each
// time. The line is valid until the next call.
func readLine(br *bufio.Reader, long *[]byte) ([]byte, error) {
	line, err := br.ReadSlice('\n')
	if !errors.Is(err, bufio.ErrBufferFull) {
		return line, err
	}
	*long = append((*long)[:0], line...)
	for errors.Is(err, bufio.ErrBufferFull) {
		line, err = br.ReadSlice('\n')
		*long = append(*long, line...)
	}
	return *long, err
}
