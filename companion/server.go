// Package companion serves Gemini CLI's IDE protocol: an MCP server over
// Streamable HTTP on a loopback port, announced by a discovery file, with the
// openDiff and closeDiff tools and the ide/* notifications, fanned out to
// every connected CLI session. What the user does arrives from an Editor.
package companion

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"runtime"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/rs/zerolog"

	"github.com/gemini-ide-companion/gemini-ide-companion/companion/connlimit"
	"github.com/gemini-ide-companion/gemini-ide-companion/companion/guard"
	"github.com/gemini-ide-companion/gemini-ide-companion/companion/protocol"
	idectx "github.com/gemini-ide-companion/gemini-ide-companion/context"
	"github.com/gemini-ide-companion/gemini-ide-companion/diffview"
	"github.com/gemini-ide-companion/gemini-ide-companion/discovery"
	"github.com/gemini-ide-companion/gemini-ide-companion/internal/dirwatch"
)

// Defaults for Options.
const (
	DefaultEditorTimeout = 10 * time.Second
	DefaultMaxBody       = 128 << 20
	DefaultKeepAlive     = 30 * time.Second
	DefaultMaxSessions   = 256
	DefaultStreamGrace   = 5 * time.Second
	// DefaultMaxConns caps open HTTP connections: enough for every session's
	// event stream and requests, far below any file descriptor limit. Past
	// it, the connection idle longest (no request yet, or between requests)
	// is closed to make room, so that a flood of idle connections cannot
	// keep a CLI waiting; when every connection is busy the new one is
	// closed at once (see package connlimit).
	DefaultMaxConns = 1024
	// Timeouts of the HTTP server: a request's headers, a POST's body going
	// without data, and a kept-alive connection with no request.
	headerTimeout = 10 * time.Second
	bodyTimeout   = 10 * time.Second
	idleTimeout   = 30 * time.Second
	endpoint      = "/mcp"
)

// Options configures a Server.
type Options struct {
	// Version is reported to the CLI as the server version.
	Version string
	// DiscoveryDir is where the discovery file goes; default discovery.Dir().
	DiscoveryDir string
	// EditorTimeout bounds how long the editor may take to show or close a
	// diff.
	EditorTimeout time.Duration
	// MaxBody is the largest HTTP request body accepted.
	MaxBody int64
	// KeepAlive is the interval of pings that detect CLIs that went away
	// without saying so.
	KeepAlive time.Duration
	// MaxSessions caps concurrent CLI sessions.
	MaxSessions int
	// MaxConns caps open HTTP connections.
	MaxConns int
	// StreamGrace is how long a session may be without its event stream
	// before it counts as gone. Gemini CLI never says goodbye: when it exits
	// or runs /ide disable it only drops the stream.
	StreamGrace time.Duration
	// Quiet and MaxWait pace context updates (see context.Publisher).
	Quiet, MaxWait time.Duration
	// Logger receives the server's logs.
	Logger zerolog.Logger
	// Now is the clock for context timestamps; nil means time.Now.
	Now func() time.Time
}

// Identity says who the server is serving: the editor and its folders.
type Identity struct {
	IDE       discovery.IDEInfo
	Workspace []string
	// IDEPID names the discovery file: the PID the CLI's process walk finds.
	IDEPID int
}

// Server is one companion: the context engine, the diff registry and, once
// started, the HTTP endpoint and its discovery file.
type Server struct {
	opts      Options
	log       zerolog.Logger
	engine    *idectx.Engine
	publisher *idectx.Publisher
	watcher   atomic.Pointer[idectx.Watcher]
	diffs     *diffview.Registry
	spool     *diffview.Spool // large texts of shown proposals
	disk      *diffview.DiskWatch
	lifts     liftStore

	mu            sync.Mutex
	editor        Editor
	sessions      map[string]*session
	starting      int // sessions counted against MaxSessions, not yet in sessions
	id            Identity
	token         string
	port          int
	discoveryPath string
	started       bool
	closed        bool

	ctx     context.Context
	cancel  context.CancelFunc
	httpSrv *http.Server
	wg      sync.WaitGroup

	// Connections that came at the connection cap since it was last
	// logged (unix ns in capLogged): idle ones closed, new ones refused.
	capEvicted, capRefused, capLogged atomic.Int64
}

// New returns a server that is not yet listening. Context events may be fed
// to Engine before Start.
func New(opts Options) *Server {
	if opts.DiscoveryDir == "" {
		opts.DiscoveryDir = discovery.Dir()
	}
	if opts.EditorTimeout <= 0 {
		opts.EditorTimeout = DefaultEditorTimeout
	}
	if opts.MaxBody <= 0 {
		opts.MaxBody = DefaultMaxBody
	}
	if opts.KeepAlive == 0 {
		opts.KeepAlive = DefaultKeepAlive
	}
	if opts.MaxSessions <= 0 {
		opts.MaxSessions = DefaultMaxSessions
	}
	if opts.MaxConns <= 0 {
		opts.MaxConns = DefaultMaxConns
	}
	if opts.StreamGrace <= 0 {
		opts.StreamGrace = DefaultStreamGrace
	}
	s := &Server{
		opts:     opts,
		log:      opts.Logger,
		diffs:    diffview.NewRegistry(),
		spool:    diffview.NewSpool(""),
		sessions: map[string]*session{},
	}
	s.engine = idectx.NewEngine(opts.Now, func() {
		s.publisher.Changed()
		if w := s.watcher.Load(); w != nil {
			w.Sync()
		}
	})
	s.publisher = idectx.NewPublisher(s.engine, opts.Quiet, opts.MaxWait)
	s.disk = diffview.NewDiskWatch(s.diffs, s.diskChanged, func(path string, err error) {
		s.log.Debug().Err(err).Str("path", path).Msg("cannot read a proposed file after a change on disk")
	})
	return s
}

// Engine is the context engine the editor's events go to.
func (s *Server) Engine() *idectx.Engine { return s.engine }

// SetEditor sets what shows diffs. Without one, openDiff fails.
func (s *Server) SetEditor(e Editor) {
	s.mu.Lock()
	s.editor = e
	s.mu.Unlock()
}

// Info is what the editor learns about a started server.
type Info struct {
	Port          int
	AuthToken     string
	IDEPID        int
	DiscoveryFile string
	// DiscoveryErr says why there is no discovery file, if there is none.
	DiscoveryErr error
	Env          map[string]string
}

// Start listens on 127.0.0.1 on a free port, writes the discovery file and
// serves until Close. ctx bounds the server's whole life. A Start that fails
// leaves the server as it was: Start may be called again, and Close is safe.
func (s *Server) Start(ctx context.Context, id Identity) (info Info, err error) {
	s.mu.Lock()
	switch {
	case s.closed:
		s.mu.Unlock()
		return Info{}, errors.New("companion already closed")
	case s.started:
		s.mu.Unlock()
		return Info{}, errors.New("companion already started")
	}
	s.started = true
	s.id = id
	s.mu.Unlock()
	defer func() {
		if err != nil {
			s.mu.Lock()
			s.started = false
			s.mu.Unlock()
		}
	}()
	if err := ctx.Err(); err != nil {
		return Info{}, fmt.Errorf("start companion: %w", err)
	}

	tok := make([]byte, 32)
	if _, err := rand.Read(tok); err != nil {
		return Info{}, fmt.Errorf("make auth token: %w", err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return Info{}, fmt.Errorf("listen on loopback: %w", err)
	}
	token, port := hex.EncodeToString(tok), ln.Addr().(*net.TCPAddr).Port
	sctx, cancel := context.WithCancel(ctx)

	srv := mcp.NewServer(&mcp.Implementation{Name: "gemini-ide-companion", Version: s.opts.Version}, &mcp.ServerOptions{
		KeepAlive:                 s.opts.KeepAlive,
		KeepAliveFailureThreshold: 2,
	})
	s.addTools(srv)
	srv.AddReceivingMiddleware(s.recoverPanics, s.resendContextAfterToolsList)
	handler := guard.Wrap(guard.Config{
		Token:       token,
		Port:        port,
		MaxBody:     s.opts.MaxBody,
		BodyTimeout: bodyTimeout,
		Path:        endpoint,
		OnReject: func(r guard.Rejection) {
			s.log.Warn().Int("status", r.Status).Str("reason", r.Reason).Str("method", r.Method).
				Str("path", r.Path).Str("remote", r.Remote).Msg("request refused")
		},
	}, &mcpHandler{s: s, srv: srv})
	limited := connlimit.New(ln, s.opts.MaxConns, s.connCapReached)
	httpSrv := &http.Server{
		Handler:           handler,
		ConnState:         limited.ConnState,
		ReadHeaderTimeout: headerTimeout,
		IdleTimeout:       idleTimeout,
		BaseContext:       func(net.Listener) context.Context { return sctx },
		ErrorLog:          nil,
	}

	s.mu.Lock()
	if s.closed {
		// Closed while starting: nothing of this start may outlive it.
		s.mu.Unlock()
		cancel()
		ln.Close()
		return Info{}, errors.New("companion closed while starting")
	}
	s.token, s.port = token, port
	s.ctx, s.cancel, s.httpSrv = sctx, cancel, httpSrv
	s.mu.Unlock()

	if dw, err := dirwatch.New(); err != nil {
		s.log.Warn().Err(err).Msg("files deleted on disk will not leave the context, and changes on disk under open proposals will not be noticed")
	} else {
		onErr := func(err error) { s.log.Debug().Err(err).Msg("file watch") }
		w := idectx.NewWatcher(s.engine, dw)
		s.watcher.Store(w)
		s.disk.Attach(dw)
		s.goFunc(func() { dw.Run(sctx, onErr) })
		s.goFunc(func() { w.Run(sctx, onErr) })
		w.Sync()
	}
	s.goFunc(func() {
		if err := httpSrv.Serve(limited); err != nil && !errors.Is(err, http.ErrServerClosed) {
			s.log.Error().Err(err).Msg("HTTP server stopped")
		}
	})
	s.goFunc(func() { s.publisher.Run(sctx, s.broadcastContext) })

	info = s.publish()
	s.log.Info().Int("port", info.Port).Int("idePid", id.IDEPID).Str("ide", id.IDE.DisplayName).
		Strs("workspace", id.Workspace).Str("discoveryFile", info.DiscoveryFile).Msg("companion listening")
	return info, nil
}

// connCapReached notes a connection that came at the connection cap, and
// logs it at most once a minute: a flood must not flood the log too.
func (s *Server) connCapReached(f connlimit.Full) {
	if f.Evicted {
		s.capEvicted.Add(1)
	} else {
		s.capRefused.Add(1)
	}
	now := time.Now().UnixNano()
	if last := s.capLogged.Load(); last != 0 && now-last < int64(time.Minute) {
		return
	}
	s.capLogged.Store(now)
	s.log.Warn().Int("maxConns", s.opts.MaxConns).Int64("idleClosed", s.capEvicted.Swap(0)).
		Int64("busyRefused", s.capRefused.Swap(0)).
		Msg("connection cap reached: the connections idle longest were closed to make room")
}

// recoverPanics turns a panic while handling one MCP request into an error
// answer for that request: no request may take down the companion and
// every other session with it.
func (s *Server) recoverPanics(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (res mcp.Result, err error) {
		defer func() {
			v := recover()
			if v == nil {
				return
			}
			s.log.Error().Str("method", method).Str("recovered", fmt.Sprint(v)).Bytes("stack", debug.Stack()).
				Msg("internal error while handling a request; answered with an error")
			if method == "tools/call" {
				res, err = toolError("internal error in the companion: %v", v), nil
				return
			}
			res, err = nil, fmt.Errorf("internal error in the companion handling %s: %v", method, v)
		}()
		return next(ctx, method, req)
	}
}

func (s *Server) goFunc(f func()) {
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		f()
	}()
}

// fileLocked is the discovery file's content for the current identity; the
// caller holds s.mu.
func (s *Server) fileLocked() discovery.File {
	return discovery.File{
		Port:          s.port,
		WorkspacePath: discovery.JoinWorkspace(s.id.Workspace),
		AuthToken:     s.token,
		IDEInfo:       s.id.IDE,
		PID:           os.Getpid(),
	}
}

// publish (re)writes the discovery file for the current identity.
func (s *Server) publish() Info {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		// Close has removed the file (or is about to); never write one after.
		return Info{Port: s.port, AuthToken: s.token, IDEPID: s.id.IDEPID, DiscoveryErr: errors.New("companion closed")}
	}
	f := s.fileLocked()
	if removed, err := discovery.RemoveStale(s.opts.DiscoveryDir, discovery.Alive); err != nil {
		s.log.Debug().Err(err).Msg("stale discovery files")
	} else if len(removed) > 0 {
		s.log.Info().Strs("files", removed).Msg("removed stale discovery files")
	}
	path, err := discovery.Write(s.opts.DiscoveryDir, s.id.IDEPID, f)
	if err != nil {
		s.log.Warn().Err(err).Msg("no discovery file; terminals with the companion's environment still connect")
		path = ""
	}
	if s.discoveryPath != "" && s.discoveryPath != path {
		_ = os.Remove(s.discoveryPath)
	}
	s.discoveryPath = path
	return Info{
		Port:          s.port,
		AuthToken:     s.token,
		IDEPID:        s.id.IDEPID,
		DiscoveryFile: path,
		DiscoveryErr:  err,
		Env:           discovery.Env(f, s.id.IDEPID),
	}
}

// SetWorkspace changes the workspace folders and rewrites the discovery
// file. It returns the new connection info.
func (s *Server) SetWorkspace(folders []string) Info {
	s.mu.Lock()
	s.id.Workspace = slices.Clone(folders)
	s.mu.Unlock()
	info := s.publish()
	s.log.Info().Strs("workspace", folders).Msg("workspace folders changed")
	return info
}

// Info returns the current connection info (what a terminal opened now
// needs) without rewriting the discovery file.
func (s *Server) Info() Info {
	s.mu.Lock()
	defer s.mu.Unlock()
	f := s.fileLocked()
	return Info{
		Port:          s.port,
		AuthToken:     s.token,
		IDEPID:        s.id.IDEPID,
		DiscoveryFile: s.discoveryPath,
		Env:           discovery.Env(f, s.id.IDEPID),
	}
}

// WorkspaceFolders returns the editor's workspace folders as last set.
func (s *Server) WorkspaceFolders() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.id.Workspace)
}

// DiffShown reports whether a proposal for path is on screen in the editor
// now. Unlike Status it costs no stop of the world, so it suits callers
// that ask on every event.
func (s *Server) DiffShown(path string) bool {
	_, ok := s.diffs.Get(path)
	return ok
}

// ShownID is the ID of the proposal on screen in the editor for path, or 0
// when there is none.
func (s *Server) ShownID(path string) uint64 {
	d, _ := s.diffs.Get(path)
	return d.ID
}

// Status is a summary for health checks and status lines.
type Status = protocol.Status

// Status reports the server's current state.
func (s *Server) Status() Status {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	s.mu.Lock()
	defer s.mu.Unlock()
	open := s.diffs.Paths()
	slices.Sort(open)
	return Status{
		Sessions:         len(s.sessions),
		Goroutines:       runtime.NumGoroutine(),
		HeapInuse:        ms.HeapInuse,
		ConnectedClients: s.connectedLocked(),
		Port:             s.port,
		DiscoveryFile:    s.discoveryPath,
		IDEPID:           s.id.IDEPID,
		WorkspaceFolders: slices.Clone(s.id.Workspace),
		OpenDiffs:        open,
	}
}

func (s *Server) connectedLocked() int {
	n := 0
	for _, sess := range s.sessions {
		if sess.isReady() {
			n++
		}
	}
	return n
}

// Close deletes the discovery file first, then stops serving, ends every
// CLI session and waits for the server's goroutines. It is safe to call
// more than once, before Start, and after a failed Start.
func (s *Server) Close() error {
	s.mu.Lock()
	if s.closed || !s.started {
		s.closed = true
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	s.disk.Attach(nil)
	path := s.discoveryPath
	s.discoveryPath = ""
	cancel, httpSrv := s.cancel, s.httpSrv
	sessions := make([]*session, 0, len(s.sessions))
	for _, sess := range s.sessions {
		sessions = append(sessions, sess)
	}
	s.mu.Unlock()

	var errs []error
	if path != "" {
		if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
			errs = append(errs, fmt.Errorf("remove discovery file: %w", err))
		}
	}
	if cancel != nil {
		cancel()
	}
	if httpSrv != nil {
		if err := httpSrv.Close(); err != nil {
			errs = append(errs, fmt.Errorf("close HTTP server: %w", err))
		}
	}
	for _, sess := range sessions {
		if sess.ss != nil {
			_ = sess.ss.Close()
		}
	}
	s.wg.Wait()
	if err := s.spool.Close(); err != nil {
		errs = append(errs, err)
	}
	s.log.Info().Msg("companion stopped")
	return errors.Join(errs...)
}

// broadcastContext sends a context snapshot to every session.
func (s *Server) broadcastContext(snap idectx.IdeContext) {
	data, err := json.Marshal(snap)
	if err != nil {
		s.log.Error().Err(err).Msg("encode context")
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, sess := range s.sessions {
		sess.pushContext(data)
	}
}

func (s *Server) announce(n Notice) {
	s.mu.Lock()
	e := s.editor
	s.mu.Unlock()
	if a, ok := e.(Announcer); ok {
		a.Announce(n)
	}
}

func (s *Server) clientsChanged() {
	s.mu.Lock()
	n := s.connectedLocked()
	e := s.editor
	s.mu.Unlock()
	if a, ok := e.(Announcer); ok {
		a.ClientsChanged(n)
	}
}

// mcpHandler routes MCP requests to sessions: a POST without a session
// starts one, anything else goes to its session's transport.
type mcpHandler struct {
	s   *Server
	srv *mcp.Server
}

const sessionHeader = "Mcp-Session-Id"

func (h *mcpHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s := h.s
	switch r.Method {
	case http.MethodPost:
		if ct := r.Header.Get("Content-Type"); !strings.HasPrefix(strings.ToLower(strings.TrimSpace(ct)), "application/json") {
			http.Error(w, "Content-Type must be application/json", http.StatusUnsupportedMediaType)
			return
		}
		sid := r.Header.Get(sessionHeader)
		if sid == "" {
			h.startSession(w, r)
			return
		}
		sess := s.lookup(sid)
		if sess == nil {
			http.Error(w, "session not found", http.StatusNotFound)
			return
		}
		key, ok := s.intake(w, r)
		if !ok {
			return
		}
		sess.transport.ServeHTTP(wholeAnswer{w}, r)
		if key != "" {
			s.lifts.take(key)
		}
	case http.MethodGet:
		if !strings.Contains(r.Header.Get("Accept"), "text/event-stream") {
			http.Error(w, "Accept must contain text/event-stream", http.StatusBadRequest)
			return
		}
		sess := s.lookup(r.Header.Get(sessionHeader))
		if sess == nil {
			http.Error(w, "session not found", http.StatusNotFound)
			return
		}
		sw := &streamWatch{ResponseWriter: w, ctx: r.Context(), onOpen: func() {
			sess.streamOpened()
			data, err := json.Marshal(s.engine.Snapshot())
			if err == nil {
				sess.pushContext(data)
			}
		}}
		sess.transport.ServeHTTP(sw, r)
		sess.streamClosed(s.opts.StreamGrace)
	case http.MethodDelete:
		sess := s.lookup(r.Header.Get(sessionHeader))
		if sess == nil {
			http.Error(w, "session not found", http.StatusNotFound)
			return
		}
		sess.abortConfirm()
		_ = sess.ss.Close()
		w.WriteHeader(http.StatusNoContent)
	default:
		w.Header().Set("Allow", "GET, POST, DELETE")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
	}
}

func (s *Server) lookup(id string) *session {
	if id == "" {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.sessions[id]
}

func (h *mcpHandler) startSession(w http.ResponseWriter, r *http.Request) {
	s := h.s
	// The whole body first: a client that sends it slowly holds only its
	// connection (until the body timeout), never a session slot.
	body, err := io.ReadAll(r.Body)
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			http.Error(w, fmt.Sprintf("request body over %d bytes", tooBig.Limit), http.StatusRequestEntityTooLarge)
			return
		}
		s.log.Warn().Err(err).Str("remote", r.RemoteAddr).Msg("session refused: request body not received in time")
		http.Error(w, "request body not received in time", http.StatusRequestTimeout)
		return
	}
	r.Body = io.NopCloser(bytes.NewReader(body))

	// Checking the cap and taking a slot is one step: concurrent
	// initializes cannot overshoot it.
	s.mu.Lock()
	full := len(s.sessions)+s.starting >= s.opts.MaxSessions
	closed := s.closed
	if !closed && !full {
		s.starting++
	}
	s.mu.Unlock()
	if closed {
		http.Error(w, "companion is shutting down", http.StatusServiceUnavailable)
		return
	}
	if full {
		s.log.Warn().Int("max", s.opts.MaxSessions).Msg("session refused: too many CLI sessions")
		http.Error(w, "too many sessions", http.StatusServiceUnavailable)
		return
	}
	id := rand.Text()
	t := &mcp.StreamableServerTransport{SessionID: id}
	c := &capture{inner: t}
	ss, err := h.srv.Connect(s.ctx, c, nil)
	if err != nil {
		s.mu.Lock()
		s.starting--
		s.mu.Unlock()
		s.log.Error().Err(err).Msg("start MCP session")
		http.Error(w, "cannot start session", http.StatusInternalServerError)
		return
	}
	sess := newSession(id, t, s.route)
	sess.conn, sess.ss = c.conn, ss

	sctx, cancel := context.WithCancel(s.ctx)
	s.mu.Lock()
	s.starting--
	s.sessions[id] = sess
	s.mu.Unlock()
	s.goFunc(func() { sess.run(sctx) })
	s.goFunc(func() {
		_ = ss.Wait()
		cancel()
		s.dropSession(sess)
	})

	t.ServeHTTP(w, r)

	if ss.InitializeParams() == nil {
		// Not an initialize, or a failed one: nobody can use this session.
		_ = ss.Close()
		return
	}
	sess.expectStream(s.opts.StreamGrace)
	sess.mu.Lock()
	sess.ready = true
	sess.mu.Unlock()
	client := ss.InitializeParams().ClientInfo
	name := ""
	if client != nil {
		name = client.Name + " " + client.Version
	}
	s.log.Info().Str("session", id).Str("client", name).Msg("Gemini CLI connected")
	s.announce(Notice{Level: "info", Message: "Gemini CLI connected"})
	s.clientsChanged()
}

// resendContextAfterToolsList sends the current context to a session right
// after it lists the tools. Gemini CLI registers its notification handlers
// only once connected, so it misses the update sent when its event stream
// opens; it lists the tools right after registering them.
func (s *Server) resendContextAfterToolsList(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		res, err := next(ctx, method, req)
		if method != "tools/list" || err != nil || req.GetSession() == nil {
			return res, err
		}
		if sess := s.lookup(req.GetSession().ID()); sess != nil {
			if data, merr := json.Marshal(s.engine.Snapshot()); merr == nil {
				sess.pushContext(data)
			}
		}
		return res, err
	}
}

func (s *Server) dropSession(sess *session) {
	sess.stopGrace()
	s.mu.Lock()
	_, ok := s.sessions[sess.id]
	delete(s.sessions, sess.id)
	s.mu.Unlock()
	// Decisions it never wrote are reported as undelivered; its open
	// proposals are orphaned.
	sess.end()
	s.orphanProposals(sess.id)
	if ok && sess.isReady() {
		s.log.Info().Str("session", sess.id).Msg("Gemini CLI disconnected")
		s.announce(Notice{Level: "info", Message: "Gemini CLI disconnected"})
		s.clientsChanged()
	}
}
