// Package link implements the editor link's wire format: JSON-RPC 2.0 messages,
// one per line of UTF-8, over a pair of byte streams (a plugin's pipes to the
// sidecar's stdin and stdout).
//
// A Conn reads lines, answers malformed ones with a JSON-RPC error and keeps
// going, dispatches requests and notifications to a Handler in arrival order,
// and lets the sidecar send its own requests (diff/open, diff/close) and
// notifications concurrently.
package link

import (
	"bytes"
	"encoding/json"
	"fmt"
	"unicode/utf8"

	"github.com/gemini-ide-companion/gemini-ide-companion/internal/jsonscan"
)

// Version is the JSON-RPC version string every message carries.
const Version = "2.0"

// Standard JSON-RPC 2.0 error codes used on the link.
const (
	CodeParseError     = -32700
	CodeInvalidRequest = -32600
	CodeMethodNotFound = -32601
	CodeInvalidParams  = -32602
	CodeInternalError  = -32603
)

// Error is a JSON-RPC error object. Handlers return it to choose the code the
// peer sees; any other error becomes CodeInternalError.
type Error struct {
	Code    int             `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data,omitempty"`
}

// Error implements the error interface.
func (e *Error) Error() string {
	return fmt.Sprintf("jsonrpc error %d: %s", e.Code, e.Message)
}

// Errorf builds an *Error with a formatted message.
func Errorf(code int, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// wireMessage is the union of request, notification and response as it
// appears on one line. Pointer and raw fields let the decoder tell "absent"
// from "null".
type wireMessage struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id,omitempty"`
	Method  *string         `json:"method,omitempty"`
	Params  json.RawMessage `json:"params,omitempty"`
	Result  json.RawMessage `json:"result,omitempty"`
	Error   *Error          `json:"error,omitempty"`
}

// outRequest is a request or notification the sidecar sends.
type outRequest struct {
	JSONRPC string `json:"jsonrpc"`
	ID      *int64 `json:"id,omitempty"`
	Method  string `json:"method"`
	Params  any    `json:"params,omitempty"`
}

// outResponse is a response the sidecar sends. Exactly one of Result and
// Error is set; Result is kept even when it marshals to null.
type outResponse struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Result  json.RawMessage `json:"result,omitempty"`
	Error   *Error          `json:"error,omitempty"`
}

// kind classifies a decoded line.
type kind int

const (
	kindInvalid kind = iota
	kindRequest
	kindNotification
	kindResponse
)

// classify decides what a decoded message is, or returns an *Error that
// explains why it is not a valid JSON-RPC 2.0 message.
func (m *wireMessage) classify() (kind, *Error) {
	if m.JSONRPC != Version {
		return kindInvalid, Errorf(CodeInvalidRequest, "jsonrpc must be %q", Version)
	}
	hasID := len(m.ID) > 0 && string(m.ID) != "null"
	if m.Method != nil {
		if *m.Method == "" {
			return kindInvalid, Errorf(CodeInvalidRequest, "method must not be empty")
		}
		if m.Result != nil || m.Error != nil {
			return kindInvalid, Errorf(CodeInvalidRequest, "a request cannot carry result or error")
		}
		if len(m.Params) > 0 && m.Params[0] != '{' && m.Params[0] != '[' && string(m.Params) != "null" {
			return kindInvalid, Errorf(CodeInvalidRequest, "params must be an object or an array")
		}
		if hasID {
			if !validID(m.ID) {
				return kindInvalid, Errorf(CodeInvalidRequest, "id must be a number or a string of UTF-8")
			}
			return kindRequest, nil
		}
		return kindNotification, nil
	}
	if hasID && (m.Result != nil || m.Error != nil) {
		return kindResponse, nil
	}
	return kindInvalid, Errorf(CodeInvalidRequest, "not a request, notification or response")
}

// validID reports whether raw is a JSON string or number. A string must be
// UTF-8: the answer repeats the id as it came, and every line sent must be
// UTF-8.
func validID(raw json.RawMessage) bool {
	if len(raw) == 0 {
		return false
	}
	c := raw[0]
	if c == '"' {
		return utf8.Valid(raw)
	}
	return c == '-' || (c >= '0' && c <= '9')
}

// emptyParams gives handlers one form for "no params": an empty array (what
// Lua, and other encoders that cannot tell an empty list from an empty map,
// make of an empty table) is the empty object, and null is no params at
// all. Every method's handler sees nil or an object (or a non-empty array,
// which no method takes), whichever of these a plugin sent.
func emptyParams(p json.RawMessage) json.RawMessage {
	t := bytes.TrimSpace(p)
	switch {
	case len(t) == 0 || string(t) == "null":
		return nil
	case len(t) >= 2 && t[0] == '[' && t[len(t)-1] == ']' && len(bytes.TrimSpace(t[1:len(t)-1])) == 0:
		return json.RawMessage("{}")
	}
	return p
}

// decodeFast decodes the common shape of a request or notification
// without encoding/json: "jsonrpc": "2.0", "method" (printable ASCII),
// "params" (any valid JSON but null) and "id" (an integer or a string of
// printable ASCII), each at most once, nothing else. It reports false for
// any other line, which dispatch then hands to json.Unmarshal; what it
// accepts, json.Unmarshal decodes the same. An editor's stream of cursor
// reports is decoded so in about a third of the time, with two
// allocations (the params' copy, and the method's name when it is not
// the previous line's).
func (c *Conn) decodeFast(line []byte, m *wireMessage) bool {
	s := jsonscan.Scanner{B: line}
	if !s.Byte('{') {
		return false
	}
	var seen uint8
	for {
		k, ok := s.Key()
		if !ok {
			return false
		}
		var bit uint8
		switch string(k) {
		case "jsonrpc":
			bit = 1
			_, v, ok := s.Plain()
			if !ok || string(v) != Version {
				return false
			}
			m.JSONRPC = Version
		case "method":
			bit = 2
			_, v, ok := s.Plain()
			if !ok {
				return false
			}
			if c.lastMethod == nil || *c.lastMethod != string(v) {
				name := string(v)
				c.lastMethod = &name
			}
			m.Method = c.lastMethod
		case "id":
			bit = 4
			var raw []byte
			if s.Peek() == '"' {
				raw, _, ok = s.Plain()
			} else {
				raw, ok = s.Integer()
			}
			if !ok {
				return false
			}
			m.ID = append(json.RawMessage(nil), raw...)
		case "params":
			bit = 8
			raw, ok := s.Skip()
			if !ok || string(raw) == "null" {
				return false
			}
			m.Params = append(json.RawMessage(nil), raw...)
		default:
			return false
		}
		if seen&bit != 0 {
			return false
		}
		seen |= bit
		if s.Byte(',') {
			continue
		}
		return s.Byte('}') && s.End() && seen&3 == 3
	}
}
