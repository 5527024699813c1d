package agent

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"iter"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/a2aproject/a2a-go/a2a"
)

// MaxEventSize bounds one streamed event. a2a-go's own reader stops at
// 64 KiB, less than one edit of a 20 KB file; this one allows far more but
// still refuses an endless line.
const MaxEventSize = 64 << 20

// rpcClient speaks A2A's JSON-RPC binding to one agent endpoint.
type rpcClient struct {
	url    string
	hc     *http.Client
	header http.Header // added to every request (see WithHeader)
}

// request makes a request to the agent with the client's headers.
func (c *rpcClient) request(ctx context.Context, method, url string, body io.Reader) (*http.Request, error) {
	req, err := http.NewRequestWithContext(ctx, method, url, body)
	if err != nil {
		return nil, err
	}
	for k, vs := range c.header {
		req.Header[k] = append([]string(nil), vs...)
	}
	return req, nil
}

var requestID atomic.Int64

// post sends one JSON-RPC request and returns the response, which the
// caller closes.
func (c *rpcClient) post(ctx context.Context, method string, params any, accept string) (*http.Response, error) {
	body, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": requestID.Add(1), "method": method, "params": params})
	if err != nil {
		return nil, fmt.Errorf("encode %s: %w", method, err)
	}
	req, err := c.request(ctx, http.MethodPost, c.url, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", accept)
	resp, err := c.hc.Do(req)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		resp.Body.Close()
		return nil, fmt.Errorf("HTTP %s", resp.Status)
	}
	return resp, nil
}

// call makes a request that has one answer and decodes its result into out.
func (c *rpcClient) call(ctx context.Context, method string, params, out any) error {
	resp, err := c.post(ctx, method, params, "application/json")
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	var msg struct {
		Result json.RawMessage `json:"result"`
		Error  *rpcError       `json:"error"`
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, MaxEventSize)).Decode(&msg); err != nil {
		return fmt.Errorf("malformed answer: %w", err)
	}
	if msg.Error != nil {
		return msg.Error
	}
	if len(msg.Result) == 0 {
		return errors.New("malformed answer: no result")
	}
	if err := json.Unmarshal(msg.Result, out); err != nil {
		return fmt.Errorf("malformed result: %w", err)
	}
	return nil
}

type rpcError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

func (e *rpcError) Error() string { return fmt.Sprintf("%s (code %d)", e.Message, e.Code) }

// drainLimit and drainTime bound what is read after the event that ends a
// turn, before the answer's body is closed.
const (
	drainLimit = 1 << 20
	drainTime  = 5 * time.Second
)

// stream makes a request answered with server-sent events and yields them.
//
// When the caller stops after the event that ends the turn, the rest of the
// answer (the server ends it right after that event) is read before the
// body is closed: closing it unread would close the connection, and the
// server aborts whatever runs under the connection that started a turn.
func (c *rpcClient) stream(ctx context.Context, method string, params any) iter.Seq2[a2a.Event, error] {
	return func(yield func(a2a.Event, error) bool) {
		rctx, cancel := context.WithCancel(ctx)
		defer cancel()
		resp, err := c.post(rctx, method, params, "text/event-stream")
		if err != nil {
			yield(nil, err)
			return
		}
		defer resp.Body.Close()
		for data, err := range readSSE(resp.Body) {
			if err != nil {
				yield(nil, err)
				return
			}
			var msg struct {
				Result json.RawMessage `json:"result"`
				Error  *rpcError       `json:"error"`
			}
			if err := json.Unmarshal(data, &msg); err != nil {
				yield(nil, fmt.Errorf("malformed event: %w", err))
				return
			}
			if msg.Error != nil {
				yield(nil, msg.Error)
				return
			}
			ev, err := a2a.UnmarshalEventJSON(msg.Result)
			if err != nil {
				yield(nil, fmt.Errorf("malformed event: %w", err))
				return
			}
			if !yield(ev, nil) {
				if endsTurn(ev) && ctx.Err() == nil {
					t := time.AfterFunc(drainTime, cancel)
					_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, drainLimit))
					t.Stop()
				}
				return
			}
		}
	}
}

// endsTurn reports whether ev is the last event of a turn.
func endsTurn(ev a2a.Event) bool {
	switch e := ev.(type) {
	case *a2a.TaskStatusUpdateEvent:
		return e.Final
	case *a2a.Task:
		return e.Status.State.Terminal()
	case *a2a.Message:
		return true
	}
	return false
}

// readSSE yields the data of each server-sent event in r.
func readSSE(r io.Reader) iter.Seq2[[]byte, error] {
	return func(yield func([]byte, error) bool) {
		br := bufio.NewReaderSize(r, 64<<10)
		var data []byte
		for {
			line, err := readLine(br)
			if err != nil {
				if errors.Is(err, io.EOF) {
					if len(data) > 0 {
						yield(data, nil)
					}
					return
				}
				yield(nil, err)
				return
			}
			switch {
			case len(line) == 0:
				if len(data) > 0 {
					if !yield(data, nil) {
						return
					}
					data = nil
				}
			case bytes.HasPrefix(line, []byte("data:")):
				v := bytes.TrimPrefix(bytes.TrimPrefix(line, []byte("data:")), []byte(" "))
				if len(data) > 0 {
					data = append(data, '\n')
				}
				data = append(data, v...)
				if len(data) > MaxEventSize {
					yield(nil, fmt.Errorf("event larger than %d bytes", MaxEventSize))
					return
				}
			}
		}
	}
}

// readLine reads one line of any length up to MaxEventSize, without the
// line ending.
func readLine(br *bufio.Reader) ([]byte, error) {
	var line []byte
	for {
		chunk, err := br.ReadSlice('\n')
		line = append(line, chunk...)
		if len(line) > MaxEventSize {
			return nil, fmt.Errorf("event line larger than %d bytes", MaxEventSize)
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if err != nil {
			if errors.Is(err, io.EOF) && len(line) > 0 {
				return bytes.TrimRight(line, "\r\n"), nil
			}
			return nil, err
		}
		return bytes.TrimRight(line, "\r\n"), nil
	}
}
