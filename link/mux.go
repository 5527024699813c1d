package link

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
)

// RequestFunc answers one request; see Handler.HandleRequest.
type RequestFunc func(ctx context.Context, params json.RawMessage) (any, error)

// NotificationFunc takes one notification; see Handler.HandleNotification.
type NotificationFunc func(ctx context.Context, params json.RawMessage)

// Mux is a Handler that routes each message by its method name: to the
// handler registered for that exact name, or else to the one registered for
// the longest namespace prefix of it (a pattern ending in "/", such as
// "agent/"). A request nobody handles is answered with CodeMethodNotFound; a
// notification nobody handles is given to the Unhandled func, if set, and
// otherwise dropped (JSON-RPC: unknown notifications are ignored).
//
// A method namespace added by another package (the agent panel's agent/*)
// is one call: mux.Register("agent/", handler).
type Mux struct {
	// Unhandled, if set, is told about notifications nobody handles.
	Unhandled func(method string)

	mu     sync.RWMutex
	routes map[string]Handler
}

// NewMux returns an empty Mux.
func NewMux() *Mux { return &Mux{routes: map[string]Handler{}} }

// Register routes pattern to h: an exact method name, or a namespace
// prefix ending in "/" that takes every method under it. It panics if
// pattern is empty or already registered, which is a programming error.
func (m *Mux) Register(pattern string, h Handler) {
	if pattern == "" || h == nil {
		panic("link: Register needs a pattern and a handler")
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, dup := m.routes[pattern]; dup {
		panic(fmt.Sprintf("link: %q registered twice", pattern))
	}
	m.routes[pattern] = h
}

// HandleFunc registers f as the request method's handler.
func (m *Mux) HandleFunc(method string, f RequestFunc) { m.Register(method, requestOnly(f)) }

// NotifyFunc registers f as the notification method's handler.
func (m *Mux) NotifyFunc(method string, f NotificationFunc) {
	m.Register(method, notificationOnly(f))
}

// lookup returns the handler of method, or nil.
func (m *Mux) lookup(method string) Handler {
	m.mu.RLock()
	defer m.mu.RUnlock()
	if h, ok := m.routes[method]; ok {
		return h
	}
	var best Handler
	bestLen := 0
	for p, h := range m.routes {
		if strings.HasSuffix(p, "/") && strings.HasPrefix(method, p) && len(p) > bestLen {
			best, bestLen = h, len(p)
		}
	}
	return best
}

// HandleRequest implements Handler.
func (m *Mux) HandleRequest(ctx context.Context, method string, params json.RawMessage) (any, error) {
	if h := m.lookup(method); h != nil {
		return h.HandleRequest(ctx, method, params)
	}
	return nil, Errorf(CodeMethodNotFound, "unknown method %q", method)
}

// HandleNotification implements Handler.
func (m *Mux) HandleNotification(ctx context.Context, method string, params json.RawMessage) {
	if h := m.lookup(method); h != nil {
		h.HandleNotification(ctx, method, params)
		return
	}
	if m.Unhandled != nil {
		m.Unhandled(method)
	}
}

// requestOnly is a Handler for one request method.
type requestOnly RequestFunc

func (f requestOnly) HandleRequest(ctx context.Context, _ string, params json.RawMessage) (any, error) {
	return f(ctx, params)
}

func (f requestOnly) HandleNotification(context.Context, string, json.RawMessage) {}

// notificationOnly is a Handler for one notification method; a request
// of that name is not a method the link has.
type notificationOnly NotificationFunc

func (f notificationOnly) HandleRequest(_ context.Context, method string, _ json.RawMessage) (any, error) {
	return nil, Errorf(CodeMethodNotFound, "%s is a notification, not a request", method)
}

func (f notificationOnly) HandleNotification(ctx context.Context, _ string, params json.RawMessage) {
	f(ctx, params)
}
