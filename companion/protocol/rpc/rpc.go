// Package rpc is the editor link's methods as Go, generated from the
// method table protocol.Methods (go generate in companion/protocol), as the
// JSON Schema is: what serves the plugin's methods implements a group's
// handler interface (LinkHandler for the link's own, AgentHandler for the
// agent panel's) and Register routes them to it, params decoded; the
// sidecar calls the plugin through Plugin, whose methods send each
// sidecar → plugin method with its params and decode its result.
//
// A new method is an entry in protocol.Methods and, after go generate, a
// method on the handler that serves it (the compiler asks for it), or a
// call of its Plugin method.
package rpc

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/gemini-ide-companion/gemini-ide-companion/companion/link"
)

// Caller sends messages to the plugin; *link.Conn is one.
type Caller interface {
	Notify(method string, params any) error
	CallThen(ctx context.Context, method string, params, result any, then func()) error
}

// Plugin is the plugin as the sidecar calls it: one method per sidecar →
// plugin method of protocol.Methods.
type Plugin struct {
	Caller Caller
}

// hook is the then of a call, if one was given.
func hook(then []func()) func() {
	if len(then) == 0 {
		return nil
	}
	return then[0]
}

// decode reads a method's params into v. Absent (or null) params leave v
// as it is when they are optional, and are refused otherwise; params that
// do not fit v are refused naming the field. Both are CodeInvalidParams.
func decode(raw json.RawMessage, v any, optional bool) error {
	if len(raw) == 0 || string(raw) == "null" {
		if optional {
			return nil
		}
		return link.Errorf(link.CodeInvalidParams, "params are required")
	}
	if decodeFast(raw, v) {
		return nil
	}
	if err := json.Unmarshal(raw, v); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) && te.Field != "" {
			return link.Errorf(link.CodeInvalidParams, "%s: expected %s, got %s", te.Field, te.Type, te.Value)
		}
		return link.Errorf(link.CodeInvalidParams, "params: %v", err)
	}
	return nil
}
