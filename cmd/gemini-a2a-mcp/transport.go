package main

import (
	"context"
	"errors"
	"io"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// answeringTransport is an MCP transport whose connection, when its input
// ends, first waits for the answers to the requests it has already read,
// then reports the end: a client may write its requests and close its end
// at once (`printf … | gemini-a2a-mcp`), and still gets every answer.
type answeringTransport struct {
	mcp.Transport
	// wait bounds how long the answers are waited for.
	wait time.Duration
}

// Connect implements mcp.Transport.
func (t answeringTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	c, err := t.Transport.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return &answeringConn{Connection: c, wait: t.wait, open: map[any]bool{}, changed: make(chan struct{})}, nil
}

// answeringConn counts the requests read and not yet answered.
type answeringConn struct {
	mcp.Connection
	wait time.Duration

	mu      sync.Mutex
	open    map[any]bool // ids of requests read and not answered
	changed chan struct{}
}

// Read implements mcp.Connection.
func (c *answeringConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	msg, err := c.Connection.Read(ctx)
	if err == nil {
		if req, ok := msg.(*jsonrpc.Request); ok && req.ID.IsValid() {
			c.mu.Lock()
			c.open[req.ID.Raw()] = true
			c.mu.Unlock()
		}
		return msg, nil
	}
	if errors.Is(err, io.EOF) {
		c.waitAnswered(ctx)
	}
	return nil, err
}

// Write implements mcp.Connection.
func (c *answeringConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	err := c.Connection.Write(ctx, msg)
	if resp, ok := msg.(*jsonrpc.Response); ok {
		c.mu.Lock()
		delete(c.open, resp.ID.Raw())
		close(c.changed)
		c.changed = make(chan struct{})
		c.mu.Unlock()
	}
	return err
}

// waitAnswered waits until every request read has been answered, ctx ends,
// or c.wait has passed.
func (c *answeringConn) waitAnswered(ctx context.Context) {
	t := time.NewTimer(c.wait)
	defer t.Stop()
	for {
		c.mu.Lock()
		n, ch := len(c.open), c.changed
		c.mu.Unlock()
		if n == 0 {
			return
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return
		case <-t.C:
			return
		}
	}
}
