package companion

// What the MCP Go SDK does not do for the companion, done around it. The
// SDK has no public way to send a server-to-client notification of a
// method of one's own (modelcontextprotocol/go-sdk#745): a ServerSession
// sends only the MCP methods it knows, yet Gemini CLI listens for
// ide/contextUpdate, ide/diffAccepted and ide/diffRejected. So the
// companion keeps each session's connection (capture) and writes its own
// notifications to it (writeNote), which lands them on the CLI's GET event
// stream; it must know when that stream opens and whether an event
// really left for the socket (streamWatch); and it hides the per-event
// flush the SDK does on a POST's answer (wholeAnswer). Once the SDK can
// send custom notifications, this file goes.

import (
	"context"
	"encoding/json"
	"net/http"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// capture is an mcp.Transport that hands the SDK a streamable server
// transport and keeps the connection it makes, so the companion can write
// its own notifications (ide/*) to it.
type capture struct {
	inner *mcp.StreamableServerTransport
	conn  mcp.Connection
}

// Connect implements mcp.Transport.
func (c *capture) Connect(ctx context.Context) (mcp.Connection, error) {
	conn, err := c.inner.Connect(ctx)
	c.conn = conn
	return conn, err
}

// writeNote writes a notification of the companion's own to a session's
// connection. A detached context routes it to the standalone SSE stream,
// which is where the CLI listens for notifications; it fails while the CLI
// has no such stream open.
func writeNote(conn mcp.Connection, method string, params json.RawMessage) error {
	return conn.Write(context.Background(), &jsonrpc.Request{Method: method, Params: params})
}

// streamWatch tells when the SDK has started an SSE stream on a GET: it
// writes the 200 header while it sets the stream up, and the stream takes
// writes from then on.
type streamWatch struct {
	http.ResponseWriter
	ctx    context.Context // the GET's: ends when the CLI drops the stream
	once   sync.Once
	onOpen func()
}

// Write sends an event to the CLI and reports whether it left for the
// socket. The SDK ignores flush errors and would otherwise count an event
// written into the buffer of a stream the CLI has already dropped as
// delivered; failing here makes the session keep it for the next stream.
func (w *streamWatch) Write(p []byte) (int, error) {
	if err := w.ctx.Err(); err != nil {
		return 0, err
	}
	n, err := w.ResponseWriter.Write(p)
	if err == nil {
		err = http.NewResponseController(w.ResponseWriter).Flush()
	}
	return n, err
}

func (w *streamWatch) WriteHeader(status int) {
	if status == http.StatusOK {
		w.once.Do(w.onOpen)
	}
	w.ResponseWriter.WriteHeader(status)
}

// Flush lets the SDK flush the event stream through the wrapper.
func (w *streamWatch) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// Unwrap gives http.ResponseController the real writer.
func (w *streamWatch) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// wholeAnswer is the writer of a POST's answer. It hides Flush from the
// SDK, which flushes after every event it writes to the stream of a POST:
// one chunk and one more write to the socket each time, although every
// tool here answers at once with one event. Unflushed, net/http sends a
// small answer in one write that carries its length, and a large one in
// chunks as it is written. Notifications never wait behind it: the
// companion writes them to the CLI's GET stream.
type wholeAnswer struct{ http.ResponseWriter }
