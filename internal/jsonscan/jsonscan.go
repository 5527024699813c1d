// Package jsonscan reads the few small JSON shapes the editor sends many
// times a second (a context/* notification: its envelope, a path and a
// cursor) without encoding/json's reflection and allocations. It is a
// fast path, never the only one: every method reports false on anything
// outside the simple forms it knows (an escape it does not handle, a key
// it does not expect, a number that is not a small integer), and the
// caller then decodes the bytes with encoding/json as before. What it
// accepts is valid JSON that encoding/json decodes to the same values.
package jsonscan

import "unicode/utf8"

// maxDepth bounds the nesting Skip follows; deeper values go to the
// caller's slow path.
const maxDepth = 32

// Scanner reads JSON text from B, from offset I on.
type Scanner struct {
	B []byte
	I int
}

// ws skips JSON whitespace.
func (s *Scanner) ws() {
	for s.I < len(s.B) {
		switch s.B[s.I] {
		case ' ', '\t', '\n', '\r':
			s.I++
		default:
			return
		}
	}
}

// Byte skips whitespace and then c, reporting whether c was there.
func (s *Scanner) Byte(c byte) bool {
	s.ws()
	if s.I < len(s.B) && s.B[s.I] == c {
		s.I++
		return true
	}
	return false
}

// Peek skips whitespace and returns the next byte, or 0 at the end.
func (s *Scanner) Peek() byte {
	s.ws()
	if s.I < len(s.B) {
		return s.B[s.I]
	}
	return 0
}

// End reports whether only whitespace is left.
func (s *Scanner) End() bool {
	s.ws()
	return s.I == len(s.B)
}

// Plain reads a string of printable ASCII without escapes (a key, a
// method name, a string id) and returns its bytes with the quotes
// (quoted) and without (inner).
func (s *Scanner) Plain() (quoted, inner []byte, ok bool) {
	s.ws()
	if s.I >= len(s.B) || s.B[s.I] != '"' {
		return nil, nil, false
	}
	start := s.I
	for j := s.I + 1; j < len(s.B); j++ {
		c := s.B[j]
		if c == '"' {
			s.I = j + 1
			return s.B[start:s.I], s.B[start+1 : j], true
		}
		if c < 0x20 || c > 0x7e || c == '\\' {
			return nil, nil, false
		}
	}
	return nil, nil, false
}

// Key reads an object key of printable ASCII without escapes and the
// colon after it.
func (s *Scanner) Key() ([]byte, bool) {
	_, k, ok := s.Plain()
	if !ok || !s.Byte(':') {
		return nil, false
	}
	return k, true
}

// String reads a string: valid UTF-8, escapes other than \u decoded.
func (s *Scanner) String() (string, bool) {
	s.ws()
	if s.I >= len(s.B) || s.B[s.I] != '"' {
		return "", false
	}
	j := s.I + 1
	start := j
	for j < len(s.B) {
		c := s.B[j]
		switch {
		case c == '"':
			raw := s.B[start:j]
			if !utf8.Valid(raw) {
				return "", false
			}
			s.I = j + 1
			return string(raw), true
		case c == '\\':
			return s.escaped(start)
		case c < 0x20:
			return "", false
		}
		j++
	}
	return "", false
}

// escaped finishes String for a string with escapes, from its first
// byte at start.
func (s *Scanner) escaped(start int) (string, bool) {
	out := make([]byte, 0, 64)
	j := start
	for j < len(s.B) {
		c := s.B[j]
		switch {
		case c == '"':
			if !utf8.Valid(out) {
				return "", false
			}
			s.I = j + 1
			return string(out), true
		case c < 0x20:
			return "", false
		case c != '\\':
			out = append(out, c)
			j++
			continue
		}
		if j+1 >= len(s.B) {
			return "", false
		}
		switch s.B[j+1] {
		case '"', '\\', '/':
			out = append(out, s.B[j+1])
		case 'b':
			out = append(out, '\b')
		case 'f':
			out = append(out, '\f')
		case 'n':
			out = append(out, '\n')
		case 'r':
			out = append(out, '\r')
		case 't':
			out = append(out, '\t')
		default: // \u and anything else: the slow path
			return "", false
		}
		j += 2
	}
	return "", false
}

// Int reads an integer of at most 15 digits (what fits an int and a
// float64 exactly).
func (s *Scanner) Int() (int, bool) {
	raw, ok := s.Integer()
	if !ok {
		return 0, false
	}
	neg := raw[0] == '-'
	if neg {
		raw = raw[1:]
	}
	n := 0
	for _, c := range raw {
		n = n*10 + int(c-'0')
	}
	if neg {
		n = -n
	}
	return n, true
}

// Integer reads an integer of at most 15 digits and returns its bytes.
func (s *Scanner) Integer() ([]byte, bool) {
	s.ws()
	start := s.I
	j := s.I
	if j < len(s.B) && s.B[j] == '-' {
		j++
	}
	d := j
	for j < len(s.B) && s.B[j] >= '0' && s.B[j] <= '9' {
		j++
	}
	n := j - d
	if n == 0 || n > 15 || (n > 1 && s.B[d] == '0') {
		return nil, false
	}
	if j < len(s.B) {
		switch s.B[j] {
		case '.', 'e', 'E': // a fraction or exponent: the slow path
			return nil, false
		}
	}
	s.I = j
	return s.B[start:j], true
}

// Null reads the literal null.
func (s *Scanner) Null() bool {
	s.ws()
	if len(s.B)-s.I >= 4 && string(s.B[s.I:s.I+4]) == "null" {
		s.I += 4
		return true
	}
	return false
}

// Skip reads one JSON value of any kind, checking its syntax as
// encoding/json does, and returns its bytes.
func (s *Scanner) Skip() ([]byte, bool) {
	s.ws()
	start := s.I
	if !s.skip(0) {
		return nil, false
	}
	return s.B[start:s.I], true
}

func (s *Scanner) skip(depth int) bool {
	if depth > maxDepth {
		return false
	}
	switch c := s.Peek(); {
	case c == '{':
		s.I++
		if s.Byte('}') {
			return true
		}
		for {
			if s.Peek() != '"' || !s.skipString() || !s.Byte(':') || !s.skip(depth+1) {
				return false
			}
			if s.Byte(',') {
				continue
			}
			return s.Byte('}')
		}
	case c == '[':
		s.I++
		if s.Byte(']') {
			return true
		}
		for {
			if !s.skip(depth + 1) {
				return false
			}
			if s.Byte(',') {
				continue
			}
			return s.Byte(']')
		}
	case c == '"':
		return s.skipString()
	case c == '-' || (c >= '0' && c <= '9'):
		return s.skipNumber()
	case c == 't':
		return s.literal("true")
	case c == 'f':
		return s.literal("false")
	case c == 'n':
		return s.literal("null")
	}
	return false
}

func (s *Scanner) literal(lit string) bool {
	if len(s.B)-s.I >= len(lit) && string(s.B[s.I:s.I+len(lit)]) == lit {
		s.I += len(lit)
		return true
	}
	return false
}

// skipString skips a string, checking its escapes; any other byte from
// 0x20 up is taken, as encoding/json does.
func (s *Scanner) skipString() bool {
	j := s.I + 1
	for j < len(s.B) {
		c := s.B[j]
		switch {
		case c == '"':
			s.I = j + 1
			return true
		case c < 0x20:
			return false
		case c == '\\':
			if j+1 >= len(s.B) {
				return false
			}
			switch s.B[j+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				j += 2
			case 'u':
				if j+6 > len(s.B) {
					return false
				}
				for _, h := range s.B[j+2 : j+6] {
					if !isHex(h) {
						return false
					}
				}
				j += 6
			default:
				return false
			}
			continue
		}
		j++
	}
	return false
}

func isHex(c byte) bool {
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F')
}

// skipNumber skips a number of JSON's grammar:
// -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
func (s *Scanner) skipNumber() bool {
	b, j := s.B, s.I
	if j < len(b) && b[j] == '-' {
		j++
	}
	switch {
	case j < len(b) && b[j] == '0':
		j++
	case j < len(b) && b[j] >= '1' && b[j] <= '9':
		for j < len(b) && b[j] >= '0' && b[j] <= '9' {
			j++
		}
	default:
		return false
	}
	if j < len(b) && b[j] == '.' {
		j++
		d := j
		for j < len(b) && b[j] >= '0' && b[j] <= '9' {
			j++
		}
		if j == d {
			return false
		}
	}
	if j < len(b) && (b[j] == 'e' || b[j] == 'E') {
		j++
		if j < len(b) && (b[j] == '+' || b[j] == '-') {
			j++
		}
		d := j
		for j < len(b) && b[j] >= '0' && b[j] <= '9' {
			j++
		}
		if j == d {
			return false
		}
	}
	s.I = j
	return true
}
