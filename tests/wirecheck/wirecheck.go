// Package wirecheck holds the editor link's wire format check that tests of
// both ends use: whatever the framing, every message must be one
// well-formed JSON-RPC 2.0 object in UTF-8.
package wirecheck

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"unicode/utf8"
)

// CheckLine returns why line is not one well-formed JSON-RPC 2.0 message
// in UTF-8, or nil. Tests of both ends of the link use it to hold each
// other to the wire format (an LSP-framed body is checked the same way).
func CheckLine(line []byte) error {
	if !utf8.Valid(line) {
		return errors.New("not UTF-8")
	}
	var m map[string]json.RawMessage
	dec := json.NewDecoder(bytes.NewReader(line))
	if err := dec.Decode(&m); err != nil || m == nil {
		return fmt.Errorf("not a JSON object: %v", err)
	}
	if dec.More() {
		return errors.New("more than one value on the line")
	}
	if string(m["jsonrpc"]) != `"2.0"` {
		return errors.New(`jsonrpc is not "2.0"`)
	}
	id, hasID := m["id"]
	if hasID && string(id) != "null" && !validID(id) {
		return fmt.Errorf("id %s is not a string, number or null", id)
	}
	method, isCall := m["method"]
	_, hasResult := m["result"]
	rawErr, hasError := m["error"]
	switch {
	case isCall:
		var name string
		if json.Unmarshal(method, &name) != nil || name == "" || hasResult || hasError {
			return errors.New("a request with a bad method, a result or an error")
		}
	case !hasID:
		return errors.New("a response without id")
	case hasResult == hasError:
		return errors.New("a response needs exactly one of result and error")
	case hasError:
		var e struct {
			Code    *int    `json:"code"`
			Message *string `json:"message"`
		}
		if json.Unmarshal(rawErr, &e) != nil || e.Code == nil || e.Message == nil {
			return fmt.Errorf("a malformed error object %s", rawErr)
		}
	}
	return nil
}

// validID reports whether raw is a JSON string of UTF-8 or a JSON number.
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
