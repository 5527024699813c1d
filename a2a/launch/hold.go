package launch

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"
)

// lifelineEnv tells the preload that the server's stdin is held by the
// program that started it, and that the server ends when it closes.
const lifelineEnv = "GEMINI_A2A_LIFELINE"

// HoldPath is the route of a server started by Start through which another
// program holds it (Hold). Like every route, it needs the launch's secret.
const HoldPath = "/.gemini-a2a/hold"

// ErrNotHoldable means the server at the URL cannot be held: it was not
// started by Start (or by a version of it without holds).
var ErrNotHoldable = errors.New("this A2A server cannot be held: it was not started by this user's programs")

// A Holding keeps a server that Start started (in another program) running
// after that program is gone, for as long as it is not released: the
// server ends when the last program that started or held it is gone (after
// the starter's Options.Linger).
type Holding struct {
	cancel context.CancelFunc
	done   chan struct{}
	once   sync.Once
}

// Hold holds the server at baseURL (http://127.0.0.1:PORT), with header
// (its launch's secret, from HeaderFor). It returns once the server has
// said it is held; the hold lasts until Release, or until this process
// ends (the system closes its connection, and the server no longer counts
// it).
func Hold(ctx context.Context, baseURL string, header http.Header) (*Holding, error) {
	hctx, cancel := context.WithCancel(context.Background())
	tr := &http.Transport{
		Proxy:             nil,
		DisableKeepAlives: true,
		DialContext:       (&net.Dialer{Timeout: 5 * time.Second}).DialContext,
	}
	req, err := http.NewRequestWithContext(hctx, http.MethodGet, strings.TrimRight(baseURL, "/")+HoldPath, nil)
	if err != nil {
		cancel()
		return nil, fmt.Errorf("holding the A2A server: %w", err)
	}
	for k, vs := range header {
		for _, v := range vs {
			req.Header.Add(k, v)
		}
	}
	type answer struct {
		resp *http.Response
		err  error
	}
	got := make(chan answer, 1)
	go func() {
		resp, err := (&http.Client{Transport: tr}).Do(req)
		if err == nil && resp.StatusCode == http.StatusOK {
			// The server answers a hold with a line at once.
			line, rerr := bufio.NewReader(io.LimitReader(resp.Body, 64)).ReadString('\n')
			if rerr != nil || strings.TrimSpace(line) != "held" {
				resp.Body.Close()
				err = ErrNotHoldable
			}
		}
		got <- answer{resp, err}
	}()
	var a answer
	select {
	case a = <-got:
	case <-ctx.Done():
		cancel()
		if a := <-got; a.resp != nil {
			a.resp.Body.Close()
		}
		return nil, ctx.Err()
	}
	if a.err != nil {
		cancel()
		if errors.Is(a.err, ErrNotHoldable) {
			return nil, a.err
		}
		return nil, fmt.Errorf("holding the A2A server at %s: %w", baseURL, a.err)
	}
	if a.resp.StatusCode != http.StatusOK {
		a.resp.Body.Close()
		cancel()
		return nil, fmt.Errorf("%w (%s answered %s)", ErrNotHoldable, baseURL, a.resp.Status)
	}
	h := &Holding{cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(h.done)
		defer a.resp.Body.Close()
		_, _ = io.Copy(io.Discard, a.resp.Body)
	}()
	return h, nil
}

// Done is closed when the hold has ended: released, or the server gone.
func (h *Holding) Done() <-chan struct{} { return h.done }

// Release lets the server go: if no other program holds it, it ends (after
// its Linger).
func (h *Holding) Release() {
	if h == nil {
		return
	}
	h.once.Do(func() {
		h.cancel()
		<-h.done
	})
}
