package link

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"unicode/utf8"
)

// ObjectStreamer is implemented by params that carry large strings (the
// new and original text of a diff). The Conn writes such params field by
// field, escaping each string straight into the link in small pieces,
// instead of building the whole message in memory and copying it: a
// 16 MiB diff then costs one pass over its text and a 32 KiB buffer. The
// bytes on the wire are those encoding/json writes without HTML escaping.
type ObjectStreamer interface {
	// StreamJSON writes the object's fields, in order, with o.
	StreamJSON(o *Object)
}

// Object writes the fields of one JSON object for an ObjectStreamer.
type Object struct {
	w *jsonWriter
	n int
}

// String writes a string field, escaped piece by piece.
func (o *Object) String(name, value string) {
	o.key(name)
	o.w.quoted(value)
}

// Value writes a field encoded by encoding/json: meant for small values
// (numbers, booleans, null, short structs).
func (o *Object) Value(name string, v any) {
	o.key(name)
	o.w.value(v)
}

func (o *Object) key(name string) {
	if o.n > 0 {
		o.w.raw(",")
	}
	o.n++
	o.w.quoted(name)
	o.w.raw(":")
}

// jsonWriter buffers what it writes in a small buffer and hands it to w
// a piece at a time.
type jsonWriter struct {
	w   io.Writer
	buf []byte
	n   int64
	err error
}

const jsonChunk = 32 << 10

func newJSONWriter(w io.Writer) *jsonWriter {
	return &jsonWriter{w: w, buf: make([]byte, 0, jsonChunk+16)}
}

func (j *jsonWriter) flush() error {
	if j.err == nil && len(j.buf) > 0 {
		n, err := j.w.Write(j.buf)
		j.n += int64(n)
		j.err = err
	}
	j.buf = j.buf[:0]
	return j.err
}

func (j *jsonWriter) raw(s string) {
	if len(j.buf)+len(s) > jsonChunk {
		j.flush()
	}
	if len(s) > jsonChunk {
		if j.err == nil {
			n, err := io.WriteString(j.w, s)
			j.n += int64(n)
			j.err = err
		}
		return
	}
	j.buf = append(j.buf, s...)
}

// escape writes the first n bytes of e, an escape sequence.
func (j *jsonWriter) escape(e [6]byte, n int) {
	if len(j.buf)+n > jsonChunk {
		j.flush()
	}
	j.buf = append(j.buf, e[:n]...)
}

// rawBytes writes p as it is.
func (j *jsonWriter) rawBytes(p []byte) {
	if len(j.buf)+len(p) > jsonChunk {
		j.flush()
	}
	if len(p) > jsonChunk {
		if j.err == nil {
			n, err := j.w.Write(p)
			j.n += int64(n)
			j.err = err
		}
		return
	}
	j.buf = append(j.buf, p...)
}

func (j *jsonWriter) value(v any) {
	if len(j.buf)+24 > jsonChunk {
		j.flush()
	}
	switch v := v.(type) {
	case nil:
		j.buf = append(j.buf, "null"...)
		return
	case bool:
		j.buf = strconv.AppendBool(j.buf, v)
		return
	case int:
		j.buf = strconv.AppendInt(j.buf, int64(v), 10)
		return
	case uint64:
		j.buf = strconv.AppendUint(j.buf, v, 10)
		return
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		if j.err == nil {
			j.err = fmt.Errorf("encode message: %w", err)
		}
		return
	}
	j.raw(string(bytes.TrimSuffix(b.Bytes(), []byte("\n"))))
}

const hexDigits = "0123456789abcdef"

// quoted writes s as a JSON string, escaped as encoding/json escapes it
// with HTML escaping off: quote, backslash and control characters; invalid
// UTF-8 as \ufffd; U+2028 and U+2029 as \u2028 and \u2029.
func (j *jsonWriter) quoted(s string) {
	j.raw(`"`)
	start := 0
	for i := 0; i < len(s); {
		// Keep the pending plain run within one chunk.
		if i-start >= jsonChunk {
			j.raw(s[start:i])
			start = i
		}
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= ' ' && c != '"' && c != '\\' {
				i++
				continue
			}
			j.raw(s[start:i])
			switch c {
			case '"', '\\':
				j.escape([6]byte{'\\', c}, 2)
			case '\b':
				j.raw(`\b`)
			case '\f':
				j.raw(`\f`)
			case '\n':
				j.raw(`\n`)
			case '\r':
				j.raw(`\r`)
			case '\t':
				j.raw(`\t`)
			default:
				j.escape([6]byte{'\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF]}, 6)
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			j.raw(s[start:i])
			j.raw(`\ufffd`)
		case r == '\u2028' || r == '\u2029':
			j.raw(s[start:i])
			j.escape([6]byte{'\\', 'u', '2', '0', '2', hexDigits[r&0xF]}, 6)
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	j.raw(s[start:])
	j.raw(`"`)
}

// streamParams writes the JSON of params with a jsonWriter on w.
func streamParams(j *jsonWriter, params ObjectStreamer) {
	j.raw("{")
	params.StreamJSON(&Object{w: j})
	j.raw("}")
}

// countWriter counts what is written to it.
type countWriter struct{ n int64 }

func (c *countWriter) Write(p []byte) (int, error) {
	c.n += int64(len(p))
	return len(p), nil
}

// message is one encoded message: its JSON text, or the head of it and
// params to stream after the head.
type message struct {
	data   []byte         // the whole message, or its head up to "params":
	params ObjectStreamer // if set, streamed after data, then "}"
}

// encodeMessage encodes v, an outRequest or outResponse. The params of a
// request that are an ObjectStreamer are left to stream when written.
func encodeMessage(v any) (*message, error) {
	if r, ok := v.(outRequest); ok {
		if p, ok := r.Params.(ObjectStreamer); ok {
			r.Params = nil
			head, err := marshal(r)
			if err != nil {
				return nil, err
			}
			head = append(head[:len(head)-1], `,"params":`...)
			return &message{data: head, params: p}, nil
		}
	}
	data, err := marshal(v)
	if err != nil {
		return nil, err
	}
	return &message{data: data}, nil
}

// marshal is json.Marshal without HTML escaping (editors read the JSON,
// not a browser, and big proposals stay smaller).
func marshal(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, fmt.Errorf("encode message: %w", err)
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

// writeTo writes the message's JSON text with j.
func (m *message) writeTo(j *jsonWriter) {
	j.rawBytes(m.data)
	if m.params != nil {
		streamParams(j, m.params)
		j.raw("}")
	}
}

// size is the length of the message's JSON text, for framings that send
// it first. A streamed message is encoded once more to count it, into no
// buffer.
func (m *message) size() (int64, error) {
	if m.params == nil {
		return int64(len(m.data)), nil
	}
	var c countWriter
	j := newJSONWriter(&c)
	m.writeTo(j)
	err := j.flush()
	return c.n, err
}
