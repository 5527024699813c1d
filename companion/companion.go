// Package companion serves Gemini CLI's IDE protocol for one editor: an MCP
// server over Streamable HTTP on a loopback port (Server), announced by a
// discovery file, with the openDiff and closeDiff tools over the editor's
// proposals (package proposals) and the ide/* notifications, fanned out to
// every connected CLI session. What the user does arrives from the editor:
// context events through Engine, decisions through Proposals. The same
// endpoint, and /tools beside it, serve the editor tools (package edtools),
// answered by the editor set with SetToolEditor.
//
// Inside the package, files depend one way: companion.go (the Companion,
// which wires the parts) uses tools.go and server.go; server.go uses
// session.go and intake.go; sdkgap.go, under them all, holds what the MCP
// SDK does not do.
package companion

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/rs/zerolog"

	"github.com/gemini-ide-companion/gemini-ide-companion/companion/edtools"
	"github.com/gemini-ide-companion/gemini-ide-companion/companion/proposals"
	idectx "github.com/gemini-ide-companion/gemini-ide-companion/context"
	"github.com/gemini-ide-companion/gemini-ide-companion/discovery"
	"github.com/gemini-ide-companion/gemini-ide-companion/internal/dirwatch"
	"github.com/gemini-ide-companion/gemini-ide-companion/link/protocol"
)

// Announcer is implemented by editors that can tell the user things and
// show how many CLI sessions are connected.
type Announcer interface {
	proposals.Announcer
	ClientsChanged(connected int)
}

// Status is a summary for health checks and status lines.
type Status = protocol.Status

// Companion is one editor's companion: the context engine and its
// publisher, the proposals, and, once started, the MCP server and its
// discovery file.
type Companion struct {
	opts      Options
	log       zerolog.Logger
	engine    *idectx.Engine
	publisher *idectx.Publisher
	watcher   atomic.Pointer[idectx.Watcher]
	props     *proposals.Proposals
	server    *Server
	edtools   *edtools.Service

	mu         sync.Mutex
	editor     proposals.Editor
	toolEditor edtools.Editor
	id         Identity
	token      string
	port       int
	disc       discoveryFile
	started    bool
	closed     bool
	cancel     context.CancelFunc
	wg         sync.WaitGroup
}

// New returns a companion that is not yet listening. Context events may be
// fed to Engine before Start.
func New(opts Options) *Companion {
	opts = opts.withDefaults()
	c := &Companion{opts: opts, log: opts.Logger, disc: discoveryFile{dir: opts.DiscoveryDir}}
	c.engine = idectx.NewEngine(opts.Now, func() {
		c.watchOpenFiles()
		c.publisher.Changed()
	})
	c.publisher = idectx.NewPublisher(c.engine, opts.Quiet, opts.MaxWait)
	in := newIntake()
	c.edtools = edtools.NewService(toolWorkspace{c}, edtools.Options{Timeout: opts.EditorTimeout})
	c.server = newServer(opts, in, serverHooks{
		tools: func(srv *mcp.Server) {
			tools{props: c.props, intake: in}.add(srv)
			edtools.Register(srv, c.edtools.Call)
		},
		callTool: c.edtools.Call,
		context:  c.contextNow,
		orphan:   func(id string) { c.props.Orphan(id) },
		clients:  c.clientsChanged,
	})
	c.props = proposals.New(proposals.Options{
		EditorTimeout: opts.EditorTimeout,
		Workspace:     c.WorkspaceFolders,
		Sessions:      c.server,
		Logger:        opts.Logger,
	})
	return c
}

// Engine is the context engine the editor's events go to.
func (c *Companion) Engine() *idectx.Engine { return c.engine }

// Proposals are the proposals the CLI sessions make; the editor's
// decisions go to their Decide.
func (c *Companion) Proposals() *proposals.Proposals { return c.props }

// SetEditor sets what shows proposals and hears about CLIs connecting.
// Without one, openDiff fails.
func (c *Companion) SetEditor(e proposals.Editor) {
	c.props.SetEditor(e)
	c.mu.Lock()
	c.editor = e
	c.mu.Unlock()
}

// SetToolEditor sets the editor that answers the editor tools. Without
// one, each tool says so.
func (c *Companion) SetToolEditor(e edtools.Editor) {
	c.mu.Lock()
	c.toolEditor = e
	c.mu.Unlock()
}

// toolWorkspace is the companion as the editor tools see it.
type toolWorkspace struct{ c *Companion }

func (w toolWorkspace) Editor() edtools.Editor {
	w.c.mu.Lock()
	defer w.c.mu.Unlock()
	return w.c.toolEditor
}

func (w toolWorkspace) WorkspaceFolders() []string { return w.c.WorkspaceFolders() }

func (w toolWorkspace) Context() idectx.IdeContext { return w.c.engine.Snapshot() }

// Start listens on 127.0.0.1 on a free port, writes the discovery file and
// serves until Close. ctx bounds the companion's whole life. A Start that
// fails leaves the companion as it was: Start may be called again, and
// Close is safe.
func (c *Companion) Start(ctx context.Context, id Identity) (info Info, err error) {
	c.mu.Lock()
	switch {
	case c.closed:
		c.mu.Unlock()
		return Info{}, errors.New("companion already closed")
	case c.started:
		c.mu.Unlock()
		return Info{}, errors.New("companion already started")
	}
	c.started = true
	c.id = id
	c.mu.Unlock()
	defer func() {
		if err != nil {
			c.mu.Lock()
			c.started = false
			c.mu.Unlock()
		}
	}()
	if err := ctx.Err(); err != nil {
		return Info{}, fmt.Errorf("start companion: %w", err)
	}
	cctx, cancel := context.WithCancel(ctx)
	port, token, err := c.server.Start(cctx)
	if err != nil {
		cancel()
		return Info{}, err
	}
	c.mu.Lock()
	if c.closed {
		// Closed while starting: nothing of this start may outlive it.
		c.mu.Unlock()
		cancel()
		_ = c.server.Close()
		return Info{}, errors.New("companion closed while starting")
	}
	c.token, c.port, c.cancel = token, port, cancel
	c.mu.Unlock()

	dw, err := dirwatch.New()
	if err != nil {
		c.log.Warn().Err(err).Msg("files deleted on disk will not leave the context, and changes on disk under open proposals will not be noticed")
		dw = nil
	} else {
		onErr := func(err error) { c.log.Debug().Err(err).Msg("file watch") }
		w := idectx.NewWatcher(c.engine, dw, onErr)
		c.watcher.Store(w)
		c.goFunc(func() { dw.Run(cctx, onErr) })
		c.goFunc(func() { w.Run(cctx) })
		w.Sync()
	}
	c.props.Start(cctx, dw)
	c.goFunc(func() { c.publisher.Run(cctx, c.broadcast) })

	info = c.publish()
	c.log.Info().Int("port", info.Port).Int("idePid", id.IDEPID).Str("ide", id.IDE.DisplayName).
		Strs("workspace", id.Workspace).Str("discoveryFile", info.DiscoveryFile).Msg("companion listening")
	return info, nil
}

func (c *Companion) goFunc(f func()) {
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		f()
	}()
}

// fileLocked is the discovery file's content for the current identity; the
// caller holds c.mu.
func (c *Companion) fileLocked() discovery.File {
	return discovery.File{
		Port:          c.port,
		WorkspacePath: discovery.JoinWorkspace(c.id.Workspace),
		AuthToken:     c.token,
		IDEInfo:       c.id.IDE,
		PID:           os.Getpid(),
	}
}

// publish (re)writes the discovery file for the current identity.
func (c *Companion) publish() Info {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		// Close has removed the file (or is about to); never write one after.
		return Info{Port: c.port, AuthToken: c.token, IDEPID: c.id.IDEPID, DiscoveryErr: errors.New("companion closed")}
	}
	f := c.fileLocked()
	path, err := c.disc.write(f, c.id.IDEPID, c.log)
	return Info{
		Port:          c.port,
		AuthToken:     c.token,
		IDEPID:        c.id.IDEPID,
		DiscoveryFile: path,
		DiscoveryErr:  err,
		Env:           discovery.Env(f, c.id.IDEPID),
	}
}

// SetWorkspace changes the workspace folders and rewrites the discovery
// file. It returns the new connection info.
func (c *Companion) SetWorkspace(folders []string) Info {
	c.mu.Lock()
	c.id.Workspace = slices.Clone(folders)
	c.mu.Unlock()
	info := c.publish()
	c.log.Info().Strs("workspace", folders).Msg("workspace folders changed")
	return info
}

// Info returns the current connection info (what a terminal opened now
// needs) without rewriting the discovery file.
func (c *Companion) Info() Info {
	c.mu.Lock()
	defer c.mu.Unlock()
	f := c.fileLocked()
	return Info{
		Port:          c.port,
		AuthToken:     c.token,
		IDEPID:        c.id.IDEPID,
		DiscoveryFile: c.disc.path,
		Env:           discovery.Env(f, c.id.IDEPID),
	}
}

// WorkspaceFolders returns the editor's workspace folders as last set.
func (c *Companion) WorkspaceFolders() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.id.Workspace)
}

// Status reports the companion's current state.
func (c *Companion) Status() Status {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	sessions, connected := c.server.Counts()
	c.mu.Lock()
	defer c.mu.Unlock()
	return Status{
		Sessions:         sessions,
		Goroutines:       runtime.NumGoroutine(),
		HeapInuse:        ms.HeapInuse,
		ConnectedClients: connected,
		Port:             c.port,
		DiscoveryFile:    c.disc.path,
		IDEPID:           c.id.IDEPID,
		WorkspaceFolders: slices.Clone(c.id.Workspace),
		OpenDiffs:        c.props.Shown(),
	}
}

// Close deletes the discovery file first, then stops serving, ends every
// CLI session and waits for the companion's goroutines. It is safe to call
// more than once, before Start, and after a failed Start.
func (c *Companion) Close() error {
	c.mu.Lock()
	if c.closed || !c.started {
		c.closed = true
		c.mu.Unlock()
		return nil
	}
	c.closed = true
	cancel := c.cancel
	errs := []error{c.disc.remove()}
	c.mu.Unlock()

	if cancel != nil {
		cancel()
	}
	errs = append(errs, c.server.Close())
	c.wg.Wait()
	errs = append(errs, c.props.Close())
	c.log.Info().Msg("companion stopped")
	return errors.Join(errs...)
}

// contextNow is the context update a CLI gets when its event stream opens.
func (c *Companion) contextNow() json.RawMessage {
	snap := c.engine.Snapshot()
	c.watchOpenFiles()
	data, err := json.Marshal(snap)
	if err != nil {
		return nil
	}
	return data
}

// broadcast sends a context snapshot to every session.
func (c *Companion) broadcast(snap idectx.IdeContext) {
	c.watchOpenFiles()
	data, err := json.Marshal(snap)
	if err != nil {
		c.log.Error().Err(err).Msg("encode context")
		return
	}
	c.server.Broadcast(data)
}

// watchOpenFiles makes sure the files open now are watched on disk. It is
// called after a snapshot is taken and before it is sent: every file a
// client hears of that is still open is then watched before the client
// can act on it (delete it), even when the snapshot was taken between the
// engine's change and the watch the change asks for.
func (c *Companion) watchOpenFiles() {
	if w := c.watcher.Load(); w != nil {
		w.Sync()
	}
}

// clientsChanged tells the editor that a CLI connected or went.
func (c *Companion) clientsChanged(joined bool, connected int) {
	c.mu.Lock()
	a, ok := c.editor.(Announcer)
	c.mu.Unlock()
	if !ok {
		return
	}
	msg := "Gemini CLI disconnected"
	if joined {
		msg = "Gemini CLI connected"
	}
	a.Announce(protocol.LogParams{Level: protocol.LevelInfo, Message: msg})
	a.ClientsChanged(connected)
}
