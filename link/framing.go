package link

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// Framing says how messages are delimited on the byte stream. Both framings
// carry the same JSON-RPC 2.0 messages; editors pick the one their built-in
// JSON-RPC client speaks.
type Framing int

const (
	// NDJSON frames each message as one line of JSON ending in "\n"
	// (editor link protocol 1's framing and the default).
	NDJSON Framing = iota
	// LSP frames each message as the Language Server Protocol base protocol
	// does: "Content-Length: N\r\n", optional other headers, "\r\n", then N
	// bytes of JSON. Vim's channel "lsp" mode, Emacs' jsonrpc.el, Neovim's
	// vim.lsp.rpc and JVM JSON-RPC libraries read and write it natively.
	LSP
)

// String returns the framing's name as the --framing flag spells it.
func (f Framing) String() string {
	switch f {
	case NDJSON:
		return "ndjson"
	case LSP:
		return "lsp"
	}
	return fmt.Sprintf("framing(%d)", int(f))
}

// ParseFraming turns a --framing flag value into a Framing.
func ParseFraming(s string) (Framing, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "", "ndjson", "jsonl", "nl":
		return NDJSON, nil
	case "lsp", "content-length":
		return LSP, nil
	}
	return 0, fmt.Errorf("unknown framing %q (want ndjson or lsp)", s)
}

// WithFraming sets how messages are delimited in both directions.
func WithFraming(f Framing) Option { return func(c *Conn) { c.framing = f } }

// errTooLong reports a message over the limit; the reader has already
// skipped past it.
var errTooLong = errors.New("message too long")

// errBadHeader reports an LSP header block without a usable Content-Length;
// the reader has skipped past the block's blank line.
type errBadHeader struct{ why string }

func (e *errBadHeader) Error() string { return "malformed message header: " + e.why }

// messageReader yields one framed message at a time.
type messageReader interface {
	// next returns the next message's bytes, valid until the following call.
	// At the end of the stream it returns io.EOF (NDJSON: with the last
	// unterminated line, if any).
	next() ([]byte, error)
}

func newMessageReader(r io.Reader, f Framing, max int) messageReader {
	if f == LSP {
		return &lspReader{br: bufio.NewReaderSize(r, 64<<10), max: max}
	}
	return newLineReader(r, max)
}

// maxHeaderLine bounds one LSP header line; real headers are a few dozen
// bytes.
const maxHeaderLine = 8 << 10

// lspReader reads Content-Length framed messages without ever holding more
// than max bytes of one body.
type lspReader struct {
	br  *bufio.Reader
	max int
	buf []byte
}

func (l *lspReader) next() ([]byte, error) {
	length := -1
	var bad string
	sawHeader := false
	for {
		line, err := l.headerLine()
		if err != nil {
			if errors.Is(err, io.EOF) && !sawHeader && len(line) == 0 {
				return nil, io.EOF
			}
			if errors.Is(err, io.EOF) {
				return nil, io.ErrUnexpectedEOF
			}
			if errors.Is(err, bufio.ErrBufferFull) {
				bad = "header line too long"
				sawHeader = true
				continue
			}
			return nil, err
		}
		line = strings.TrimRight(line, "\r\n")
		if line == "" {
			if !sawHeader {
				continue // stray blank lines between messages
			}
			break
		}
		sawHeader = true
		name, value, ok := strings.Cut(line, ":")
		if !ok {
			if bad == "" {
				bad = fmt.Sprintf("%q is not a header", truncate(line, 60))
			}
			continue
		}
		if strings.EqualFold(strings.TrimSpace(name), "Content-Length") {
			n, err := strconv.Atoi(strings.TrimSpace(value))
			if err != nil || n < 0 {
				if bad == "" {
					bad = fmt.Sprintf("Content-Length %q is not a length", truncate(strings.TrimSpace(value), 40))
				}
				continue
			}
			length = n
		}
	}
	if bad == "" && length < 0 {
		bad = "no Content-Length"
	}
	if bad != "" {
		return nil, &errBadHeader{why: bad}
	}
	if length > l.max {
		if _, err := l.br.Discard(length); err != nil {
			return nil, io.ErrUnexpectedEOF
		}
		return nil, errTooLong
	}
	if cap(l.buf) < length || cap(l.buf) > 1<<20 && length < 1<<20 {
		l.buf = make([]byte, length)
	}
	l.buf = l.buf[:length]
	if _, err := io.ReadFull(l.br, l.buf); err != nil {
		return nil, fmt.Errorf("read message body: %w", io.ErrUnexpectedEOF)
	}
	return l.buf, nil
}

// headerLine reads one header line; an over-long line is skipped to its end
// and reported as bufio.ErrBufferFull.
func (l *lspReader) headerLine() (string, error) {
	var b []byte
	for {
		chunk, err := l.br.ReadSlice('\n')
		if len(b)+len(chunk) > maxHeaderLine {
			for errors.Is(err, bufio.ErrBufferFull) {
				_, err = l.br.ReadSlice('\n')
			}
			if err != nil {
				return "", err
			}
			return "", bufio.ErrBufferFull
		}
		b = append(b, chunk...)
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		return string(b), err
	}
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
