package transcript

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"
)

// A plugin replay plays the sidecar to the plugin's own code. The plugin
// starts what it takes for gemini-ide-companion: the test binary, run again
// as a relay between its stdin/stdout and a Unix socket of the test (the
// test's TestMain calls RelayMain first). The test then speaks the link
// with Content-Length framing on that socket (a Link), and closing it is
// the sidecar dying.

// RelayLost is the relay's exit code when the test closes its socket: how
// a replay makes "the sidecar" die.
const RelayLost = 3

// RelayMain runs the relay and exits when the environment variable env
// names a socket (the test binary was started by a plugin as its
// sidecar); otherwise it returns. Call it first in TestMain.
func RelayMain(env string) {
	if addr := os.Getenv(env); addr != "" {
		os.Exit(relay(addr))
	}
}

// relay tells the test its arguments, then copies bytes both ways until
// either side ends.
func relay(addr string) int {
	conn, err := net.Dial("unix", addr)
	if err != nil {
		fmt.Fprintf(os.Stderr, "replay relay: %v\n", err)
		return 1
	}
	args, _ := json.Marshal(os.Args[1:])
	if _, err := conn.Write(append(args, '\n')); err != nil {
		return 1
	}
	go func() {
		_, _ = io.Copy(conn, os.Stdin)
		os.Exit(0) // the plugin closed our stdin
	}()
	_, _ = io.Copy(os.Stdout, conn)
	return RelayLost
}

// Relays is the socket the relays of one replay connect to.
type Relays struct {
	// Sock is the socket's path, for the relay's environment variable.
	Sock string
	ln   net.Listener
}

// ListenRelays listens on a fresh socket (in a short temporary folder
// named after prefix: socket paths are limited to 108 bytes) until the
// test ends.
func ListenRelays(t testing.TB, prefix string) *Relays {
	t.Helper()
	dir, err := os.MkdirTemp("", prefix)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	sock := filepath.Join(dir, "relay.sock")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	return &Relays{Sock: sock, ln: ln}
}

// Accept waits up to timeout for the plugin's (next) sidecar process to
// connect and checks that the plugin runs it with --stdio --framing=lsp.
// diagnostics says what a failure shows of the editor.
func (r *Relays) Accept(t testing.TB, timeout time.Duration, diagnostics func() string) *Link {
	t.Helper()
	type res struct {
		c   net.Conn
		err error
	}
	ch := make(chan res, 1)
	go func() {
		c, err := r.ln.Accept()
		ch <- res{c, err}
	}()
	var got res
	select {
	case got = <-ch:
	case <-time.After(timeout):
		t.Fatalf("the plugin did not start its sidecar within %v\n%s", timeout, diagnostics())
	}
	if got.err != nil {
		t.Fatal(got.err)
	}
	t.Cleanup(func() { got.c.Close() })
	br := bufio.NewReader(got.c)
	line, err := br.ReadString('\n')
	if err != nil {
		t.Fatalf("relay: %v", err)
	}
	l := &Link{conn: got.c, msgs: make(chan map[string]any, 64), errc: make(chan error, 1)}
	if err := json.Unmarshal([]byte(line), &l.Args); err != nil {
		t.Fatalf("relay arguments %q: %v", line, err)
	}
	for _, want := range []string{"--stdio", "--framing=lsp"} {
		if !slices.Contains(l.Args, want) {
			t.Errorf("the plugin runs the sidecar with %q, without %s", l.Args, want)
		}
	}
	go l.read(br)
	return l
}

// Link is one life of the stand-in sidecar: the plugin's messages in, the
// test's out, with Content-Length framing.
type Link struct {
	// Args are the arguments the plugin started its sidecar with.
	Args []string
	conn net.Conn
	msgs chan map[string]any // from the plugin, in order; closed at the end
	errc chan error
	wmu  sync.Mutex
}

func (l *Link) read(br *bufio.Reader) {
	defer close(l.msgs)
	for {
		body, err := ReadFrame(br, LSP, false)
		if err != nil {
			if !errors.Is(err, io.EOF) && !errors.Is(err, net.ErrClosed) {
				l.errc <- fmt.Errorf("the plugin's output: %w", err)
			}
			return
		}
		var msg map[string]any
		if err := json.Unmarshal(body, &msg); err != nil {
			l.errc <- fmt.Errorf("the plugin sent %q: %w", body, err)
			return
		}
		l.msgs <- msg
	}
}

// Send writes msg to the plugin.
func (l *Link) Send(msg map[string]any) error {
	body, err := json.Marshal(msg)
	if err != nil {
		return fmt.Errorf("encode %v: %w", msg, err)
	}
	l.wmu.Lock()
	defer l.wmu.Unlock()
	if _, err := l.conn.Write(Frame(body, LSP)); err != nil {
		return fmt.Errorf("send to the plugin: %w", err)
	}
	return nil
}

// Close ends this life of the sidecar: the relay exits with RelayLost.
func (l *Link) Close() error { return l.conn.Close() }

// ErrLinkClosed is Next's error when the link ended before a message.
var ErrLinkClosed = errors.New("the link closed")

// ErrNoMessage is Next's error when no message came in time.
var ErrNoMessage = errors.New("no message from the plugin")

// Next returns the plugin's next message, waiting up to timeout.
func (l *Link) Next(timeout time.Duration) (map[string]any, error) {
	select {
	case m, ok := <-l.msgs:
		if !ok {
			return nil, ErrLinkClosed
		}
		return m, nil
	case err := <-l.errc:
		return nil, fmt.Errorf("reading the plugin's messages: %w", err)
	case <-time.After(timeout):
		return nil, fmt.Errorf("%w within %v", ErrNoMessage, timeout)
	}
}
