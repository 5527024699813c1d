// Package editorlink is the editor frontend of the sidecar: it serves one
// editor plugin over the editor link (docs/editor-link.md), turning the
// plugin's messages into calls on a companion.Companion and showing its
// proposals and notices through the plugin. The companion never refers
// back to it except through the small interfaces it owns
// (proposals.Editor, proposals.StateNotifier, companion.Announcer). The
// messages are the types of package protocol.
package editorlink

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/rs/zerolog"

	"github.com/gemini-ide-companion/gemini-ide-companion/companion"
	"github.com/gemini-ide-companion/gemini-ide-companion/companion/link"
	"github.com/gemini-ide-companion/gemini-ide-companion/companion/protocol"
	"github.com/gemini-ide-companion/gemini-ide-companion/companion/protocol/rpc"
	"github.com/gemini-ide-companion/gemini-ide-companion/internal/osproc"
)

// contextBatching is how often, at most, the link reads while the editor
// streams context/* notifications faster than that (see
// link.WithBatching): a plugin that reports every cursor move then costs
// one wake-up of the sidecar per 5 ms, not one per move. The last report
// is read at most 5 ms late, well inside the 50 ms quiet period that
// delays the update anyway.
const contextBatching = 5 * time.Millisecond

// getppid is the sidecar's parent, the editor when initialize names none.
var getppid = os.Getppid

// Config configures Serve.
type Config struct {
	// Options configure the companion behind the link.
	companion.Options
	// Framing is how messages are delimited (--framing).
	Framing link.Framing
	// Extensions add methods to the link, such as the agent panel's
	// agent/*.
	Extensions []Extension
}

// Peer is the plugin as an extension sees it: it can be sent
// notifications and requests (rpc.Plugin{Caller: peer} has a method for
// each), and it said in initialize what it can do.
type Peer interface {
	rpc.Caller
	// PluginCapabilities is what the plugin said it can do in initialize;
	// the zero value before initialize.
	PluginCapabilities() protocol.ClientCapabilities
}

// Extension adds methods to the editor link, such as a group of
// protocol.Methods (rpc.RegisterAgent). Its requests are served only after
// initialize, like every request but initialize and shutdown.
type Extension struct {
	// Capability is the initialize result capability it turns on: "agent"
	// (protocol.ServerCapabilities.Agent), or "" for none.
	Capability string
	// New makes the extension's handler, once, before the link reads
	// anything. peer sends to the plugin (e.g. agent/event notifications);
	// c is the companion the link serves.
	New func(peer Peer, c *companion.Companion) ExtensionHandler
}

// ExtensionHandler is an extension on one link. It may also implement:
//   - Decider: it is asked first about every diff/accepted and
//     diff/rejected, and takes the ones that are its own (proposals it
//     showed itself); the rest go to the companion's proposals;
//   - io.Closer: Close is called once, when the link has ended, before
//     Serve returns (to stop what the extension started).
type ExtensionHandler interface {
	// Register routes the extension's methods on m.
	Register(m *link.Mux)
}

// Decider is implemented by extension handlers that show proposals of
// their own: Decide takes the user's decision on one and reports whether
// it was theirs (diffID 0: a protocol-1 plugin named only the path).
type Decider interface {
	Decide(path string, diffID uint64, accepted bool, content string) bool
}

// EditorLink serves one editor plugin over the editor link: it turns the
// plugin's events into context and decisions, and shows diffs through it.
type EditorLink struct {
	c       *companion.Companion
	conn    *link.Conn
	plugin  rpc.Plugin // calls on conn
	mux     *link.Mux
	log     zerolog.Logger
	version string
	agent   bool // an extension answers agent/*
	// editorTimeout is how long the plugin may take to answer a request
	// (companion.Options.EditorTimeout), told to it in the policy.
	editorTimeout time.Duration
	// deciders and closers are the extension handlers that implement
	// Decider and io.Closer.
	deciders []Decider
	closers  []io.Closer

	// editorPID receives the editor's PID from initialize, for Serve to
	// watch it.
	editorPID chan int

	mu       sync.Mutex
	started  bool
	protocol int
	// diffStates: the plugin shows diff/state notifications; without it,
	// their message goes out as a log notification.
	diffStates bool
	// noDiffs: the plugin said it cannot show diffs (capabilities.diff false).
	noDiffs bool
	ideName string
	caps    protocol.ClientCapabilities
	// answered holds, per file (fspath.Key), the diffId of the last
	// diff/open the plugin answered: the view a decision without diffId
	// is about. A note goes once its proposal has ended (forgetEnded): a
	// decision without a note is refused, as one about an ended proposal
	// is.
	answered map[string]uint64
}

// Serve runs the sidecar for the plugin at the other end of r and w until
// the plugin asks for shutdown, closes r, or its process dies, or ctx ends.
// It always cleans up (discovery file removed) before returning.
func Serve(ctx context.Context, r io.Reader, w io.Writer, cfg Config) error {
	c := companion.New(cfg.Options)
	el := &EditorLink{c: c, log: cfg.Logger, version: cfg.Version, mux: link.NewMux(), editorTimeout: cfg.EditorTimeout, editorPID: make(chan int, 1)}
	if el.editorTimeout <= 0 {
		el.editorTimeout = companion.DefaultEditorTimeout
	}
	el.conn = link.New(r, w, el, link.WithFraming(cfg.Framing), link.WithMaxLine(protocol.MaxMessageBytes),
		link.WithBatching(contextBatching, func(method string) bool { return strings.HasPrefix(method, "context/") }),
		link.WithProblems(func(err error) {
			el.log.Warn().Err(err).Msg("editor link")
		}))
	el.plugin = rpc.Plugin{Caller: el.conn}
	rpc.RegisterLink(el.mux, linkMethods{el}, func(method string, err error) {
		el.log.Warn().Str("method", method).Err(err).Msg("editor event dropped")
	})
	el.mux.Unhandled = func(method string) {
		el.log.Debug().Str("method", method).Msg("unknown notification ignored")
	}
	for _, ext := range cfg.Extensions {
		h := ext.New(el, c)
		h.Register(el.mux)
		if ext.Capability == "agent" {
			el.agent = true
		}
		if d, ok := h.(Decider); ok {
			el.deciders = append(el.deciders, d)
		}
		if c, ok := h.(io.Closer); ok {
			el.closers = append(el.closers, c)
		}
	}
	c.SetEditor(el)
	c.SetToolEditor(el)

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	serveErr := make(chan error, 1)
	go func() { serveErr <- el.conn.Serve(ctx) }()

	// The editor's exit ends the sidecar even when its stdin lives on
	// elsewhere (a terminal the editor started inherited it). Watched
	// without polling where the system allows (osproc.WatchExit).
	var editorGone <-chan struct{}
	editorPID := 0
	var err error
	const linkEnded = "editor link closed or shutdown requested"
	reason := ""
loop:
	for {
		select {
		case err = <-serveErr:
			reason = linkEnded
			break loop
		case <-ctx.Done():
			reason = "stopped"
			break loop
		case editorPID = <-el.editorPID:
			editorGone = osproc.WatchExit(ctx, editorPID)
		case <-editorGone:
			reason = fmt.Sprintf("editor process %d is gone", editorPID)
			break loop
		}
	}
	for _, c := range el.closers {
		if cerr := c.Close(); cerr != nil {
			el.log.Warn().Err(cerr).Msg("editor link extension did not stop cleanly")
		}
	}
	// The discovery file goes first: the log below may be written to an
	// editor that is already gone.
	if cerr := c.Close(); cerr != nil {
		err = errors.Join(err, cerr)
	}
	el.log.Info().Str("reason", reason).Msg("shut down")
	if reason != linkEnded {
		// The reader may be blocked reading; closing the input (a pipe)
		// releases it. On Windows the close itself waits for a pending
		// read of a pipe, which a dead editor may never end (its stdin's
		// write end can live on in another process): the close runs
		// aside, and Serve returns after a second whatever it does.
		// Readers that cannot be closed end with the process.
		if c, ok := r.(io.Closer); ok {
			go func() { _ = c.Close() }()
			select {
			case <-serveErr:
			case <-time.After(time.Second):
			}
		}
	}
	return err
}

// HandleRequest implements link.Handler: before initialize only initialize
// and shutdown are served; everything goes through the dispatcher.
func (el *EditorLink) HandleRequest(ctx context.Context, method string, params json.RawMessage) (any, error) {
	if method != protocol.MethodInitialize && method != protocol.MethodShutdown && !el.isStarted() {
		return nil, link.Errorf(link.CodeInvalidRequest, "not initialized")
	}
	return el.mux.HandleRequest(ctx, method, params)
}

// HandleNotification implements link.Handler.
func (el *EditorLink) HandleNotification(ctx context.Context, method string, params json.RawMessage) {
	el.mux.HandleNotification(ctx, method, params)
}

func (el *EditorLink) isStarted() bool {
	el.mu.Lock()
	defer el.mu.Unlock()
	return el.started
}
