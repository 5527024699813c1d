package rpc

import (
	"github.com/gemini-ide-companion/gemini-ide-companion/companion/protocol"
	"github.com/gemini-ide-companion/gemini-ide-companion/internal/jsonscan"
)

// decodeFast decodes the params of the notifications an editor sends many
// times a second (context/fileFocused and context/selectionChanged, on
// every cursor move of a plugin that does not coalesce them) without
// encoding/json, when they have their common shape. It reports false for
// anything else, which decode then hands to encoding/json.
func decodeFast(raw []byte, v any) bool {
	p, ok := v.(*protocol.FocusParams)
	return ok && decodeFocus(raw, p)
}

// decodeFocus reads {"path": string, "cursor": {"line": int, "character":
// int} or null, "selectedText": string or null}, each key at most once,
// into p (a zero value). What it accepts, encoding/json decodes the same.
func decodeFocus(raw []byte, p *protocol.FocusParams) bool {
	s := jsonscan.Scanner{B: raw}
	if !s.Byte('{') {
		return false
	}
	if s.Byte('}') {
		return s.End()
	}
	var seen uint8
	for {
		k, ok := s.Key()
		if !ok {
			return false
		}
		var bit uint8
		switch string(k) {
		case "path":
			bit = 1
			if p.Path, ok = s.String(); !ok {
				return false
			}
		case "cursor":
			bit = 2
			if s.Null() {
				p.Cursor = nil
				break
			}
			c, ok := decodeCursor(&s)
			if !ok {
				return false
			}
			p.Cursor = c
		case "selectedText":
			bit = 4
			if s.Null() {
				p.SelectedText = nil
				break
			}
			t, ok := s.String()
			if !ok {
				return false
			}
			p.SelectedText = &t
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
		return s.Byte('}') && s.End()
	}
}

// decodeCursor reads {"line": int, "character": int}, either key
// optional, each at most once.
func decodeCursor(s *jsonscan.Scanner) (*protocol.Cursor, bool) {
	if !s.Byte('{') {
		return nil, false
	}
	c := &protocol.Cursor{}
	if s.Byte('}') {
		return c, true
	}
	var seen uint8
	for {
		k, ok := s.Key()
		if !ok {
			return nil, false
		}
		var bit uint8
		switch string(k) {
		case "line":
			bit = 1
			c.Line, ok = s.Int()
		case "character":
			bit = 2
			c.Character, ok = s.Int()
		default:
			return nil, false
		}
		if !ok || seen&bit != 0 {
			return nil, false
		}
		seen |= bit
		if s.Byte(',') {
			continue
		}
		if !s.Byte('}') {
			return nil, false
		}
		return c, true
	}
}
