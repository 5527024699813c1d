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
	"runtime/debug"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/rs/zerolog"

	"github.com/gemini-ide-companion/gemini-ide-companion/companion/connlimit"
	"github.com/gemini-ide-companion/gemini-ide-companion/companion/edtools"
	"github.com/gemini-ide-companion/gemini-ide-companion/companion/guard"
	"github.com/gemini-ide-companion/gemini-ide-companion/companion/proposals"
)

// Timeouts of the HTTP server: a request's headers, a POST's body going
// without data, and a kept-alive connection with no request.
const (
	headerTimeout = 10 * time.Second
	bodyTimeout   = 10 * time.Second
	idleTimeout   = 30 * time.Second
	endpoint      = "/mcp"
	// toolsEndpoint answers the editor tools with plain JSON, for the
	// stdio server of `gemini-ide-companion tools`: one POST per call, no
	// MCP session (it is no CLI, and counts as none).
	toolsEndpoint = "/tools"
	// maxToolsBody is the largest body of a call to toolsEndpoint.
	maxToolsBody  = 1 << 20
	sessionHeader = "Mcp-Session-Id"
)

// serverHooks are what the Server needs from the companion around it.
type serverHooks struct {
	// tools adds the MCP tools to a new MCP server.
	tools func(*mcp.Server)
	// context is the context update a CLI gets when its event stream
	// opens, or nil.
	context func() json.RawMessage
	// orphan: the session id ended; what it proposed can reach nobody.
	orphan func(id string)
	// clients: a CLI connected (finished initialize) or went; connected is
	// how many are connected now.
	clients func(joined bool, connected int)
	// callTool answers a call of an editor tool on toolsEndpoint.
	callTool edtools.CallFunc
}

// Server is the MCP endpoint Gemini CLI connects to, and its table of
// sessions: Streamable HTTP on a loopback port behind the guard (token,
// Host, Origin, body size) and the connection cap, one session per CLI,
// and the notifications each session is due: every context update, and
// the decisions on its own proposals (Deliver).
type Server struct {
	opts   Options
	log    zerolog.Logger
	hooks  serverHooks
	intake *intake

	mu       sync.Mutex
	sessions map[string]*session
	starting int // sessions counted against MaxSessions, not yet in sessions
	closed   bool
	mcp      *mcp.Server
	ctx      context.Context
	cancel   context.CancelFunc
	httpSrv  *http.Server
	wg       sync.WaitGroup

	// Connections that came at the connection cap since it was last
	// logged (unix ns in capLogged): idle ones closed, new ones refused.
	capEvicted, capRefused, capLogged atomic.Int64
}

func newServer(opts Options, in *intake, hooks serverHooks) *Server {
	return &Server{opts: opts, log: opts.Logger, hooks: hooks, intake: in, sessions: map[string]*session{}}
}

// Start listens on 127.0.0.1 on a free port and serves until Close or the
// end of ctx. It returns the port and the token a CLI must present.
func (s *Server) Start(ctx context.Context) (port int, token string, err error) {
	tok := make([]byte, 32)
	if _, err := rand.Read(tok); err != nil {
		return 0, "", fmt.Errorf("make auth token: %w", err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, "", fmt.Errorf("listen on loopback: %w", err)
	}
	token, port = hex.EncodeToString(tok), ln.Addr().(*net.TCPAddr).Port
	sctx, cancel := context.WithCancel(ctx)

	srv := mcp.NewServer(&mcp.Implementation{Name: "gemini-ide-companion", Version: s.opts.Version}, &mcp.ServerOptions{
		KeepAlive:                 s.opts.KeepAlive,
		KeepAliveFailureThreshold: 2,
	})
	s.hooks.tools(srv)
	srv.AddReceivingMiddleware(s.recoverPanics, s.resendContextAfterToolsList)
	handler := guard.Wrap(guard.Config{
		Token:       token,
		Port:        port,
		MaxBody:     s.opts.MaxBody,
		BodyTimeout: bodyTimeout,
		Path:        endpoint,
		OtherPaths:  []string{toolsEndpoint},
		OnReject: func(r guard.Rejection) {
			s.log.Warn().Int("status", r.Status).Str("reason", r.Reason).Str("method", r.Method).
				Str("path", r.Path).Str("remote", r.Remote).Msg("request refused")
		},
	}, s)
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
		return 0, "", errors.New("companion closed while starting")
	}
	s.mcp, s.ctx, s.cancel, s.httpSrv = srv, sctx, cancel, httpSrv
	s.mu.Unlock()
	s.goFunc(func() {
		if err := httpSrv.Serve(limited); err != nil && !errors.Is(err, http.ErrServerClosed) {
			s.log.Error().Err(err).Msg("HTTP server stopped")
		}
	})
	return port, token, nil
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
				res, err = &mcp.CallToolResult{IsError: true, Content: []mcp.Content{
					&mcp.TextContent{Text: fmt.Sprintf("internal error in the companion: %v", v)}}}, nil
				return
			}
			res, err = nil, fmt.Errorf("internal error in the companion handling %s: %v", method, v)
		}()
		return next(ctx, method, req)
	}
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
			if data := s.hooks.context(); data != nil {
				sess.pushContext(data)
			}
		}
		return res, err
	}
}

func (s *Server) goFunc(f func()) {
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		f()
	}()
}

// Counts returns how many sessions there are (including ones still
// initializing) and how many CLIs are connected.
func (s *Server) Counts() (sessions, connected int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, sess := range s.sessions {
		if sess.isReady() {
			connected++
		}
	}
	return len(s.sessions), connected
}

// Close stops serving, ends every CLI session and waits for the server's
// goroutines. It is safe to call more than once, and before Start.
func (s *Server) Close() error {
	s.mu.Lock()
	s.closed = true
	cancel, httpSrv := s.cancel, s.httpSrv
	sessions := make([]*session, 0, len(s.sessions))
	for _, sess := range s.sessions {
		sessions = append(sessions, sess)
	}
	s.mu.Unlock()

	var err error
	if cancel != nil {
		cancel()
	}
	if httpSrv != nil {
		if cerr := httpSrv.Close(); cerr != nil {
			err = fmt.Errorf("close HTTP server: %w", cerr)
		}
	}
	// Each session's Close waits for its handlers and its stream to end;
	// closed together, a busy session does not hold up the others, and
	// the whole shutdown takes as long as the slowest one.
	var closing sync.WaitGroup
	for _, sess := range sessions {
		if sess.ss != nil {
			closing.Go(func() { _ = sess.ss.Close() })
		}
	}
	closing.Wait()
	s.wg.Wait()
	return err
}

// Broadcast sends a context update to every session.
func (s *Server) Broadcast(params json.RawMessage) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, sess := range s.sessions {
		sess.pushContext(params)
	}
}

// Deliver implements proposals.Sessions: the decision is queued on its
// owner's session and counts as delivered once the CLI has read it.
func (s *Server) Deliver(owner string, d proposals.Delivery, lost func()) {
	method, params := methodDiffRejected, map[string]string{"filePath": d.FilePath}
	if d.Accepted {
		method, params = methodDiffAccepted, map[string]string{"filePath": d.FilePath, "content": d.Content}
	}
	data, err := json.Marshal(params)
	if err != nil {
		s.log.Error().Err(err).Msg("encode decision")
		return
	}
	n := note{method: method, params: data, fate: &fate{lost: lost}}
	s.mu.Lock()
	sess := s.sessions[owner]
	if s.closed || sess == nil {
		s.mu.Unlock()
		lost()
		return
	}
	// Queued while s.mu is held, so that a session ending meanwhile hands
	// it back (to lost) instead of dropping it.
	sess.push(n)
	s.mu.Unlock()
}

// ServeHTTP routes MCP requests to sessions: a POST without a session
// starts one, anything else goes to its session's transport.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path == toolsEndpoint {
		s.serveTools(w, r)
		return
	}
	switch r.Method {
	case http.MethodPost:
		if ct := r.Header.Get("Content-Type"); !strings.HasPrefix(strings.ToLower(strings.TrimSpace(ct)), "application/json") {
			http.Error(w, "Content-Type must be application/json", http.StatusUnsupportedMediaType)
			return
		}
		sid := r.Header.Get(sessionHeader)
		if sid == "" {
			s.startSession(w, r)
			return
		}
		sess := s.lookup(sid)
		if sess == nil {
			http.Error(w, "session not found", http.StatusNotFound)
			return
		}
		sess.post.ServeHTTP(w, r)
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
			if data := s.hooks.context(); data != nil {
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

func (s *Server) startSession(w http.ResponseWriter, r *http.Request) {
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
	ss, err := s.mcp.Connect(s.ctx, c, nil)
	if err != nil {
		s.mu.Lock()
		s.starting--
		s.mu.Unlock()
		s.log.Error().Err(err).Msg("start MCP session")
		http.Error(w, "cannot start session", http.StatusInternalServerError)
		return
	}
	sess := newSession(id, t, func(n note) {
		// Every decision carries its own fate; nothing else needs a CLI.
		s.log.Warn().Str("method", n.method).Msg("notification not delivered: its session ended")
	})
	sess.conn, sess.ss = c.conn, ss
	sess.post = s.intake.wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		t.ServeHTTP(wholeAnswer{w}, r)
	}))

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
	_, connected := s.Counts()
	s.hooks.clients(true, connected)
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
	s.hooks.orphan(sess.id)
	if ok && sess.isReady() {
		s.log.Info().Str("session", sess.id).Msg("Gemini CLI disconnected")
		_, connected := s.Counts()
		s.hooks.clients(false, connected)
	}
}

// toolCall is the body of a POST to toolsEndpoint.
type toolCall struct {
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
}

// serveTools answers one call of an editor tool: a POST of a toolCall,
// answered with an edtools.Result (status 200 even when the tool fails:
// the failure is the model's to read).
func (s *Server) serveTools(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		http.Error(w, "POST a tool call", http.StatusMethodNotAllowed)
		return
	}
	if ct := r.Header.Get("Content-Type"); !strings.HasPrefix(strings.ToLower(strings.TrimSpace(ct)), "application/json") {
		http.Error(w, "Content-Type must be application/json", http.StatusUnsupportedMediaType)
		return
	}
	var call toolCall
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, maxToolsBody)).Decode(&call); err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			http.Error(w, fmt.Sprintf("a tool call is at most %d bytes", maxToolsBody), http.StatusRequestEntityTooLarge)
			return
		}
		http.Error(w, "the body must be a JSON object {name, arguments}: "+err.Error(), http.StatusBadRequest)
		return
	}
	res := s.callToolSafely(r.Context(), call)
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(res)
}

// callToolSafely answers a tool call; a panic becomes the call's error,
// never the companion's end.
func (s *Server) callToolSafely(ctx context.Context, call toolCall) (res edtools.Result) {
	defer func() {
		if v := recover(); v != nil {
			s.log.Error().Str("tool", call.Name).Str("recovered", fmt.Sprint(v)).Bytes("stack", debug.Stack()).
				Msg("internal error while answering an editor tool")
			res = edtools.Result{Text: fmt.Sprintf("internal error in the companion: %v", v), IsError: true}
		}
	}()
	return s.hooks.callTool(ctx, call.Name, call.Arguments)
}
