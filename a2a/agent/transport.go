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

	"github.com/a2aproject/a2a-go/a2a"
	"github.com/a2aproject/a2a-go/a2aclient"
)

// MaxEventSize bounds one streamed event. a2a-go's own reader stops at
// 64 KiB, less than one edit of a 20 KB file; this one allows far more but
// still refuses an endless line.
const MaxEventSize = 64 << 20

// transport is a2a-go's JSON-RPC transport with the two streaming methods
// replaced by ones whose SSE reader has no 64 KiB line limit.
type transport struct {
	a2aclient.Transport
	url string
	hc  *http.Client
}

var requestID atomic.Int64

func (t *transport) SendStreamingMessage(ctx context.Context, p *a2a.MessageSendParams) iter.Seq2[a2a.Event, error] {
	return t.stream(ctx, "message/stream", p)
}

func (t *transport) ResubscribeToTask(ctx context.Context, p *a2a.TaskIDParams) iter.Seq2[a2a.Event, error] {
	return t.stream(ctx, "tasks/resubscribe", p)
}

type rpcError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

func (e *rpcError) Error() string { return fmt.Sprintf("%s (code %d)", e.Message, e.Code) }

func (t *transport) stream(ctx context.Context, method string, params any) iter.Seq2[a2a.Event, error] {
	return func(yield func(a2a.Event, error) bool) {
		body, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": requestID.Add(1), "method": method, "params": params})
		if err != nil {
			yield(nil, fmt.Errorf("encode %s: %w", method, err))
			return
		}
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, t.url, bytes.NewReader(body))
		if err != nil {
			yield(nil, err)
			return
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "text/event-stream")
		resp, err := t.hc.Do(req)
		if err != nil {
			yield(nil, err)
			return
		}
		defer resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			yield(nil, fmt.Errorf("HTTP %s", resp.Status))
			return
		}
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
				return
			}
		}
	}
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
