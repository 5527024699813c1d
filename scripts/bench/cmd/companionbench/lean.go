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

// toolRequest is a JSON-RPC tools/call request.
type toolRequest struct {
	JSONRPC string `json:"jsonrpc"`
	ID      string `json:"id"`
	Method  string `json:"method"`
	Params  struct {
		Name      string         `json:"name"`
		Arguments map[string]any `json:"arguments"`
	} `json:"params"`
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

// callTool calls a tool and fails on a transport error, a JSON-RPC error or
// a tool error.
func (l *leanCaller) callTool(ctx context.Context, name string, args map[string]any) error {
	var req toolRequest
	req.JSONRPC = "2.0"
	req.ID = "bench-" + strconv.FormatInt(l.nextID.Add(1), 10)
	req.Method = "tools/call"
	req.Params.Name = name
	req.Params.Arguments = args
	body := requestBuffers.Get().(*bytes.Buffer)
	body.Reset()
	enc := json.NewEncoder(body)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(&req); err != nil {
		return fmt.Errorf("encode %s: %w", name, err)
	}
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
		answer, err = readSSEAnswer(resp.Body, req.ID)
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
	requestBuffers.Put(body)
	return nil
}

// requestBuffers holds the encoded bodies of requests between calls, so
// that a 16 MiB proposal does not cost the driver a new 17 MB buffer (and
// its page faults) each time.
var requestBuffers = sync.Pool{New: func() any { return new(bytes.Buffer) }}

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
		line, err := br.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			// A line longer than the buffer (a large closeDiff answer).
			long = append(long[:0], line...)
			for errors.Is(err, bufio.ErrBufferFull) {
				line, err = br.ReadSlice('\n')
				long = append(long, line...)
			}
			line = long
		}
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
