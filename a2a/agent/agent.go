// Package agent is a small client for A2A agents over A2A's JSON-RPC
// binding, on a2a-go's protocol types, with what Gemini CLI's A2A server
// (0.25.x) needs: JSON-RPC always (the server's card names no transport),
// one long-lived keep-alive HTTP client, and each task's turns on a
// connection of their own (closing the connection that started a turn
// aborts it: see Line), and streamed events read by an SSE reader
// without a line limit (a2a-go 0.3's stops at 64 KiB). It does not use
// a2a-go's client package, whose gRPC transport would more than double the
// sidecar's binary and idle memory for a transport the server does not
// speak. It knows nothing of MCP, so the editor's agent panel can use it too.
package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"iter"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/a2aproject/a2a-go/a2a"
)

// CardPath is where an A2A agent publishes its agent card.
const CardPath = "/.well-known/agent-card.json"

// NewHTTPClient returns the HTTP client an [Agent] should use: keep-alive,
// no overall timeout (turns stream for minutes; callers bound them with a
// context), short dial and header timeouts so an unreachable agent fails fast.
func NewHTTPClient() *http.Client {
	return &http.Client{Transport: &http.Transport{
		Proxy:                 nil,
		DialContext:           (&net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		MaxIdleConnsPerHost:   16,
		IdleConnTimeout:       5 * time.Minute,
		ResponseHeaderTimeout: 2 * time.Minute,
	}}
}

// Agent is one loaded A2A agent: its card and a client bound to its JSON-RPC
// endpoint.
type Agent struct {
	// Name is the agent's alias (the card's name unless the caller chose one).
	Name string
	// URL is the agent's base URL, as used for calls.
	URL string
	// Card is the agent card as the agent published it.
	Card *a2a.AgentCard

	rpc *rpcClient
}

// Option changes how [Load] talks to an agent.
type Option func(*options)

type options struct {
	header http.Header
}

// WithHeader adds h to every request to the agent: the card, every
// JSON-RPC call and stream, each turn's connection and its keep-alive
// requests, and [Agent.Do]. It is how a client proves it may use a server
// that wants credentials (the secret of a server launch started, a token
// the user gave). h is copied; nil adds nothing.
func WithHeader(h http.Header) Option {
	h = h.Clone()
	return func(o *options) {
		if o.header == nil {
			o.header = http.Header{}
		}
		for k, vs := range h {
			for _, v := range vs {
				o.header.Add(k, v)
			}
		}
	}
}

// BaseURL turns what a user gives (a base URL or a card URL) into the
// agent's base URL.
func BaseURL(raw string) (string, error) {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", fmt.Errorf("agent url %q: want an http(s) URL such as http://127.0.0.1:41242", raw)
	}
	u.Path = strings.TrimSuffix(strings.TrimSuffix(u.Path, CardPath), "/")
	u.RawQuery, u.Fragment = "", ""
	return u.String(), nil
}

// Load fetches the agent card at raw (base or card URL) and returns a
// connected Agent. hc should come from [NewHTTPClient] and be shared; opts
// say what goes with every request (see [WithHeader]).
func Load(ctx context.Context, raw string, hc *http.Client, opts ...Option) (*Agent, error) {
	base, err := BaseURL(raw)
	if err != nil {
		return nil, err
	}
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	rpc := &rpcClient{url: base + "/", hc: hc, header: o.header}
	req, err := rpc.request(ctx, http.MethodGet, base+CardPath, nil)
	if err != nil {
		return nil, fmt.Errorf("agent card request: %w", err)
	}
	resp, err := hc.Do(req)
	if err != nil {
		return nil, fmt.Errorf("agent at %s unreachable: %w", base, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden {
		if len(o.header) == 0 {
			return nil, fmt.Errorf("agent at %s (HTTP %s): %w", base, resp.Status, ErrUnauthorized)
		}
		return nil, fmt.Errorf("agent at %s refused the credentials given for it (HTTP %s): %w", base, resp.Status, ErrUnauthorized)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("agent card at %s: HTTP %s", base+CardPath, resp.Status)
	}
	var card a2a.AgentCard
	if err := json.NewDecoder(io.LimitReader(resp.Body, 4<<20)).Decode(&card); err != nil {
		return nil, fmt.Errorf("agent card at %s: %w", base+CardPath, err)
	}
	// The card's own URL may say "localhost" (which can resolve to ::1 while
	// the server is pinned to 127.0.0.1); call the address the user gave.
	name := card.Name
	if name == "" {
		name = base
	}
	return &Agent{Name: name, URL: base, Card: &card, rpc: rpc}, nil
}

// Resubscribe follows task id again (A2A tasks/resubscribe): the agent
// first sends the task as it keeps it (with its whole history), then the
// live events of a turn still running, if any. Events are not parsed, so
// the caller can read the task's history.
func (a *Agent) Resubscribe(ctx context.Context, id string) iter.Seq2[a2a.Event, error] {
	return func(yield func(a2a.Event, error) bool) {
		for ev, err := range a.rpc.stream(ctx, "tasks/resubscribe", &a2a.TaskIDParams{ID: a2a.TaskID(id)}) {
			if err != nil {
				yield(nil, a.wrap("tasks/resubscribe", err))
				return
			}
			if !yield(ev, nil) {
				return
			}
		}
	}
}

// GetTask returns the task id as the agent knows it (A2A tasks/get).
func (a *Agent) GetTask(ctx context.Context, id string) (*a2a.Task, error) {
	var t a2a.Task
	if err := a.rpc.call(ctx, "tasks/get", &a2a.TaskQueryParams{ID: a2a.TaskID(id)}, &t); err != nil {
		return nil, a.wrap("tasks/get", err)
	}
	return &t, nil
}

// TaskHistory returns the task id with its whole history (A2A tasks/get
// with a historyLength: without one, the a2a-js server Gemini CLI's A2A
// server is built on sends the task with an empty history).
func (a *Agent) TaskHistory(ctx context.Context, id string) (*a2a.Task, error) {
	n := 1 << 30
	var t a2a.Task
	if err := a.rpc.call(ctx, "tasks/get", &a2a.TaskQueryParams{ID: a2a.TaskID(id), HistoryLength: &n}, &t); err != nil {
		return nil, a.wrap("tasks/get", err)
	}
	return &t, nil
}

// Cancel asks the agent to cancel task id (A2A tasks/cancel).
func (a *Agent) Cancel(ctx context.Context, id string) (*a2a.Task, error) {
	var t a2a.Task
	if err := a.rpc.call(ctx, "tasks/cancel", &a2a.TaskIDParams{ID: a2a.TaskID(id)}, &t); err != nil {
		return nil, a.wrap("tasks/cancel", err)
	}
	return &t, nil
}

// Do sends req, a request of the caller's to the agent's server (such as
// Gemini CLI's plain-HTTP routes /listCommands and /executeCommand), with
// the agent's headers (see [WithHeader]) on the agent's client. The caller
// closes the response's body.
func (a *Agent) Do(req *http.Request) (*http.Response, error) {
	for k, vs := range a.rpc.header {
		req.Header[k] = append([]string(nil), vs...)
	}
	return a.rpc.hc.Do(req)
}

// Close releases the agent. Its HTTP client is the caller's, shared, and
// stays open.
func (a *Agent) Close() error { return nil }

func (a *Agent) wrap(method string, err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("agent %s %s: %w", a.Name, method, err)
}

// TextMessage is a user message with text, in task/context when given.
func TextMessage(taskID, contextID, text string) *a2a.Message {
	m := a2a.NewMessage(a2a.MessageRoleUser, a2a.TextPart{Text: text})
	m.TaskID, m.ContextID = a2a.TaskID(taskID), contextID
	return m
}

// ConfirmMessage answers the tool call callID with outcome (proceed_once,
// cancel, proceed_always, ...), the way Gemini CLI's A2A server expects it.
func ConfirmMessage(taskID, contextID, callID, outcome string) *a2a.Message {
	m := a2a.NewMessage(a2a.MessageRoleUser, a2a.DataPart{Data: map[string]any{"callId": callID, "outcome": outcome}})
	m.TaskID, m.ContextID = a2a.TaskID(taskID), contextID
	return m
}

// ErrUnauthorized reports an agent that refused the client: it wants
// credentials (see [WithHeader]) that were not given, or not these.
var ErrUnauthorized = errors.New("the agent wants credentials")

// ErrStreamEnded reports a stream that closed before the agent ended its turn.
var ErrStreamEnded = errors.New("the agent's event stream ended before the turn did")

// ReadHeaderFile reads HTTP headers to send to an agent from a file of
// "Name: value" lines (blank lines and lines starting with # are skipped),
// so that a credential never has to appear on a command line.
func ReadHeaderFile(path string) (http.Header, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("header file: %w", err)
	}
	h := http.Header{}
	for i, line := range strings.Split(string(data), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		name, value, ok := strings.Cut(line, ":")
		name, value = strings.TrimSpace(name), strings.TrimSpace(value)
		if !ok || !validHeaderName(name) || value == "" {
			return nil, fmt.Errorf("header file %s, line %d: want \"Name: value\"", path, i+1)
		}
		h.Add(name, value)
	}
	if len(h) == 0 {
		return nil, fmt.Errorf("header file %s has no \"Name: value\" line", path)
	}
	return h, nil
}

// UserCredentials reads what a user gives a command for an agent they
// started themselves, never on the command line: headers from file (see
// [ReadHeaderFile]) and a bearer token from the environment variable
// tokenEnv. Either may be ""; with neither it returns nil.
func UserCredentials(file, tokenEnv string) (http.Header, error) {
	h := http.Header{}
	if file != "" {
		fh, err := ReadHeaderFile(file)
		if err != nil {
			return nil, err
		}
		for k, vs := range fh {
			h[k] = vs
		}
	}
	if tokenEnv != "" {
		token := strings.TrimSpace(os.Getenv(tokenEnv))
		if token == "" {
			return nil, fmt.Errorf("the environment variable %s is not set or empty", tokenEnv)
		}
		h.Set("Authorization", "Bearer "+token)
	}
	if len(h) == 0 {
		return nil, nil
	}
	return h, nil
}

// BearerHeader is the header that presents token as a bearer token
// (Authorization: Bearer token).
func BearerHeader(token string) http.Header {
	return http.Header{"Authorization": {"Bearer " + token}}
}

// validHeaderName reports whether name is an HTTP token (RFC 9110 5.1).
func validHeaderName(name string) bool {
	if name == "" {
		return false
	}
	for _, c := range name {
		if c > 0x7e || c <= ' ' || strings.ContainsRune("\"(),/:;<=>?@[\\]{}", c) {
			return false
		}
	}
	return true
}
