package companion

import (
	"time"

	"github.com/rs/zerolog"

	"github.com/gemini-ide-companion/gemini-ide-companion/discovery"
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
)

// Options configures a Companion.
type Options struct {
	// Version is reported to the CLI as the server version.
	Version string
	// DiscoveryDir is where the discovery file goes; default discovery.Dir().
	DiscoveryDir string
	// EditorTimeout bounds how long the editor may take to show or close a
	// diff, and to answer an editor tool.
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
	// Logger receives the companion's logs.
	Logger zerolog.Logger
	// Now is the clock for context timestamps; nil means time.Now.
	Now func() time.Time
}

// withDefaults fills in the options left zero.
func (o Options) withDefaults() Options {
	if o.DiscoveryDir == "" {
		o.DiscoveryDir = discovery.Dir()
	}
	if o.EditorTimeout <= 0 {
		o.EditorTimeout = DefaultEditorTimeout
	}
	if o.MaxBody <= 0 {
		o.MaxBody = DefaultMaxBody
	}
	if o.KeepAlive == 0 {
		o.KeepAlive = DefaultKeepAlive
	}
	if o.MaxSessions <= 0 {
		o.MaxSessions = DefaultMaxSessions
	}
	if o.MaxConns <= 0 {
		o.MaxConns = DefaultMaxConns
	}
	if o.StreamGrace <= 0 {
		o.StreamGrace = DefaultStreamGrace
	}
	return o
}

// Identity says who the companion is serving: the editor and its folders.
type Identity struct {
	IDE       discovery.IDEInfo
	Workspace []string
	// IDEPID names the discovery file: the PID the CLI's process walk finds.
	IDEPID int
}

// Info is what the editor learns about a started companion.
type Info struct {
	Port          int
	AuthToken     string
	IDEPID        int
	DiscoveryFile string
	// DiscoveryErr says why there is no discovery file, if there is none.
	DiscoveryErr error
	Env          map[string]string
}
