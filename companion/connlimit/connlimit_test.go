package connlimit_test

import (
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptrace"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gemini-ide-companion/gemini-ide-companion/companion/connlimit"
)

const wait = 10 * time.Second

// serve runs an HTTP server with h on a loopback Listener of limit
// connections; states, if not nil, sees every connection state change
// after the Listener has.
func serve(t *testing.T, limit int, h http.Handler, states func(http.ConnState)) (*connlimit.Listener, string, *atomic.Int64) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var full atomic.Int64
	l := connlimit.New(ln, limit, func(connlimit.Full) { full.Add(1) })
	srv := &http.Server{Handler: h, ConnState: func(c net.Conn, st http.ConnState) {
		l.ConnState(c, st)
		if states != nil {
			states(st)
		}
	}}
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = srv.Serve(l)
	}()
	t.Cleanup(func() {
		_ = srv.Close()
		<-done
	})
	return l, ln.Addr().String(), &full
}

func ok(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "ok") }

// dialIdle opens n connections that send nothing.
func dialIdle(t *testing.T, addr string, n int) []net.Conn {
	t.Helper()
	conns := make([]net.Conn, n)
	for i := range conns {
		c, err := net.DialTimeout("tcp", addr, wait)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		conns[i] = c
	}
	return conns
}

// closedByServer reports whether the server closed c (reading ends
// without data), waiting up to timeout.
func closedByServer(c net.Conn, timeout time.Duration) bool {
	_ = c.SetReadDeadline(time.Now().Add(timeout))
	_, err := c.Read(make([]byte, 1))
	var ne net.Error
	return err != nil && !(errors.As(err, &ne) && ne.Timeout())
}

func waitOpen(t *testing.T, l *connlimit.Listener, n int) {
	t.Helper()
	deadline := time.Now().Add(wait)
	for l.Open() != n {
		if time.Now().After(deadline) {
			t.Fatalf("the listener holds %d connections, want %d", l.Open(), n)
		}
		time.Sleep(time.Millisecond)
	}
}

func get(t *testing.T, client *http.Client, url string) *http.Response {
	t.Helper()
	resp, err := client.Get(url)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp
}

// A flood of connections that send nothing: the listener holds no more
// than its cap, and a client that comes after the flood is served at once,
// the connections idle longest making room.
func TestIdleConnectionsMakeRoomForAClient(t *testing.T) {
	l, addr, full := serve(t, 8, http.HandlerFunc(ok), nil)
	flood := dialIdle(t, addr, 50)
	waitOpen(t, l, 8)
	client := &http.Client{Timeout: wait}
	if resp := get(t, client, "http://"+addr+"/"); resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d", resp.StatusCode)
	}
	if n := l.Open(); n > 8 {
		t.Fatalf("the listener holds %d connections; its cap is 8", n)
	}
	// The flood's first connections went first; its last ones are held.
	if !closedByServer(flood[0], wait) {
		t.Fatal("the connection idle longest is still open")
	}
	if closedByServer(flood[len(flood)-1], 50*time.Millisecond) {
		t.Fatal("the newest idle connection was closed, not the oldest")
	}
	if full.Load() < 43 {
		t.Fatalf("%d connections came at the cap, want at least 43", full.Load())
	}
}

// Connections serving requests are never closed to make room: at the cap
// with every connection busy, a new one is closed at once and the busy
// ones finish.
func TestBusyConnectionsAreNeverClosed(t *testing.T) {
	release := make(chan struct{})
	entered := make(chan struct{}, 2)
	l, addr, _ := serve(t, 2, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		entered <- struct{}{}
		<-release
		ok(w, r)
	}), nil)
	client := &http.Client{Timeout: wait, Transport: &http.Transport{DisableKeepAlives: true}}
	results := make(chan int, 2)
	for range 2 {
		go func() {
			resp, err := client.Get("http://" + addr + "/")
			if err != nil {
				results <- 0
				return
			}
			resp.Body.Close()
			results <- resp.StatusCode
		}()
	}
	for range 2 {
		select {
		case <-entered:
		case <-time.After(wait):
			t.Fatal("the requests never reached the handler")
		}
	}
	extra := dialIdle(t, addr, 1)[0]
	if !closedByServer(extra, wait) {
		t.Fatal("a connection over the cap, with every connection busy, was kept")
	}
	close(release)
	for range 2 {
		if code := <-results; code != http.StatusOK {
			t.Fatalf("a busy request was cut: status %d", code)
		}
	}
	if n := l.Open(); n > 2 {
		t.Fatalf("the listener holds %d connections; its cap is 2", n)
	}
}

// A client's connection kept alive between its requests is closed only
// after every connection that never sent a request, however old it is.
func TestKeptAliveConnectionsGoAfterSilentOnes(t *testing.T) {
	idle := make(chan struct{}, 4)
	l, addr, _ := serve(t, 3, http.HandlerFunc(ok), func(st http.ConnState) {
		if st == http.StateIdle {
			idle <- struct{}{}
		}
	})
	reused := false
	trace := &httptrace.ClientTrace{GotConn: func(info httptrace.GotConnInfo) { reused = info.Reused }}
	client := &http.Client{Timeout: wait}
	req := func() {
		t.Helper()
		r, err := http.NewRequest(http.MethodGet, "http://"+addr+"/", nil)
		if err != nil {
			t.Fatal(err)
		}
		resp, err := client.Do(r.WithContext(httptrace.WithClientTrace(r.Context(), trace)))
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	req()
	select {
	case <-idle:
	case <-time.After(wait):
		t.Fatal("the client's connection never became idle")
	}
	silent := dialIdle(t, addr, 2)
	waitOpen(t, l, 3)
	newest := dialIdle(t, addr, 1)[0]
	if !closedByServer(silent[0], wait) {
		t.Fatal("the oldest silent connection was kept")
	}
	if closedByServer(newest, 50*time.Millisecond) {
		t.Fatal("the new connection was closed")
	}
	req()
	if !reused {
		t.Fatal("the client's kept-alive connection was closed to make room for a silent one")
	}
}

// The HTTP server half-closes a connection before closing it when it did
// not read the request to the end, so that the client gets the answer
// rather than a reset: the Listener's connections can.
func TestConnectionsCanBeHalfClosed(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	l := connlimit.New(ln, 1, nil)
	defer l.Close()
	client := dialIdle(t, ln.Addr().String(), 1)[0]
	c, err := l.Accept()
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	cw, ok := c.(interface{ CloseWrite() error })
	if !ok {
		t.Fatal("the connection cannot be half-closed")
	}
	if err := cw.CloseWrite(); err != nil {
		t.Fatal(err)
	}
	if !closedByServer(client, wait) {
		t.Fatal("the client reads no end of the answer")
	}
	if _, err := io.WriteString(client, "still sending"); err != nil {
		t.Fatalf("the client can no longer send: %v", err)
	}
	buf := make([]byte, 13)
	_ = c.SetReadDeadline(time.Now().Add(wait))
	if _, err := io.ReadFull(c, buf); err != nil || string(buf) != "still sending" {
		t.Fatalf("the server side reads %q, %v", buf, err)
	}
}
