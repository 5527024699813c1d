package transcript

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// The two framings of the editor link.
const (
	// NDJSON is one message a line (the sidecar's default).
	NDJSON = "ndjson"
	// LSP is Content-Length headers before each body (--framing=lsp).
	LSP = "lsp"
)

// ReadFrame reads one message body in framing (NDJSON or LSP). It returns
// io.EOF, unwrapped, only at a clean end between messages. strict holds
// LSP headers to the letter of the framing (lines end in CRLF, every line
// is "name: value"); without it, as a lenient reader of a plugin's output
// does, a bare LF ends a header line and other lines are passed over.
func ReadFrame(br *bufio.Reader, framing string, strict bool) ([]byte, error) {
	if framing == NDJSON {
		line, err := br.ReadBytes('\n')
		if err != nil {
			if len(line) > 0 && errors.Is(err, io.EOF) {
				return nil, fmt.Errorf("unterminated last line %q", line)
			}
			return nil, err
		}
		return bytes.TrimSuffix(line, []byte("\n")), nil
	}
	length := -1
	for {
		h, err := br.ReadString('\n')
		if err != nil {
			if h == "" && errors.Is(err, io.EOF) && length < 0 {
				return nil, io.EOF
			}
			return nil, fmt.Errorf("read header: %w", err)
		}
		if strict && !strings.HasSuffix(h, "\r\n") {
			return nil, fmt.Errorf("header line %q does not end in CRLF", h)
		}
		if strict {
			h = strings.TrimSuffix(h, "\r\n")
		} else {
			h = strings.TrimRight(h, "\r\n")
		}
		if h == "" {
			break
		}
		name, val, ok := strings.Cut(h, ":")
		if !ok {
			if strict {
				return nil, fmt.Errorf("bad header line %q", h)
			}
			continue
		}
		if strings.EqualFold(strings.TrimSpace(name), "Content-Length") {
			n, err := strconv.Atoi(strings.TrimSpace(val))
			if err != nil || n < 0 {
				return nil, fmt.Errorf("bad Content-Length %q", val)
			}
			length = n
		}
	}
	if length < 0 {
		return nil, errors.New("header block without Content-Length")
	}
	body := make([]byte, length)
	if _, err := io.ReadFull(br, body); err != nil {
		return nil, fmt.Errorf("read body: %w", err)
	}
	return body, nil
}

// Frame wraps a message body in framing (NDJSON or LSP).
func Frame(body []byte, framing string) []byte {
	if framing == NDJSON {
		return append(append([]byte(nil), body...), '\n')
	}
	return append(fmt.Appendf(nil, "Content-Length: %d\r\n\r\n", len(body)), body...)
}
