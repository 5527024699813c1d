package companion

import (
	"bufio"
	"bytes"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"net/http"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"unicode/utf16"
	"unicode/utf8"
)

// The large-body intake. The MCP SDK decodes a request body several times
// before a tool sees it (a nesting-depth scan, a batch attempt, the
// message, the request's _meta twice, the params), each pass copying every
// string through a growing buffer: for a large openDiff that is most of
// the time and memory of the call (docs/performance.md, "The intake"). So
// the intake, a middleware in front of a session's transport, reads a
// large POST body itself, once, and when it is an openDiff whose
// newContent is a string, decodes that string straight into its final
// form and hands the SDK the body with the string replaced by a
// placeholder. The SDK still does all of MCP (ids, sessions, validation,
// the answer) on a body of a few hundred bytes; the tool swaps the
// placeholder back for the content (content).
//
// The SDK hands a tool only the request's body and header, not the HTTP
// request or its context, so the content stays with the intake for as
// long as the request is being served, under its placeholder, and the
// intake frees it when the request ends. A placeholder starts with a
// secret of this process: a client cannot make one, and text that merely
// looks like one is content like any other.

// liftMin is the body size from which a POST is read by the intake. Smaller
// bodies go to the SDK untouched: lifting would save nothing worth a pass.
const liftMin = 32 << 10

// collectBefore is the announced body size from which the intake runs the
// collector before reading.
const collectBefore = 4 << 20

// maxPresized bounds the memory the intake allocates for bodies on the
// word of their Content-Length, before their bytes have arrived: a client
// that announces large bodies and sends nothing gets buffers that grow
// with what it sends, like any other.
const maxPresized = 256 << 20

// intake lifts the contents of large openDiff requests out of their bodies
// and keeps them while their requests are being served.
type intake struct {
	prefix string // of every placeholder: "lifted:" and this process's secret
	serial atomic.Uint64

	mu     sync.Mutex
	lifted map[string]string // placeholder -> content, while its request is served
	// presized counts the bytes of lifted strings being read into buffers
	// sized in advance.
	presized atomic.Int64
	// lastLarge is the announced size of the last body reclaim ran for.
	lastLarge atomic.Int64
}

func newIntake() *intake {
	return &intake{prefix: "lifted:" + rand.Text() + ":", lifted: map[string]string{}}
}

// wrap puts the intake in front of next: a large body is read here, and
// the content lifted out of it is freed once next has served the request.
// A body that cannot be read, or whose newContent is not a valid JSON
// string, is answered here, as the SDK would.
func (in *intake) wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		key, ok := in.lift(w, r)
		if !ok {
			return
		}
		if key != "" {
			defer in.take(key)
		}
		next.ServeHTTP(w, r)
	})
}

// content returns what the tool should use for newContent: the lifted
// content when newContent is the placeholder the intake put in its place,
// else newContent itself.
func (in *intake) content(newContent string) (string, error) {
	if !strings.HasPrefix(newContent, in.prefix) {
		return newContent, nil
	}
	c, ok := in.take(newContent)
	if !ok {
		return "", errors.New("the request ended before its content could be used")
	}
	return c, nil
}

// take returns the content kept under key and forgets it.
func (in *intake) take(key string) (string, bool) {
	in.mu.Lock()
	defer in.mu.Unlock()
	c, ok := in.lifted[key]
	delete(in.lifted, key)
	return c, ok
}

// reclaim makes room for a body of n bytes, announced, before it is read.
// The companion runs with GOGC=400: the garbage of earlier large proposals
// could otherwise still be on the heap when this one is read, and the
// process would hold both. Collecting first lets the new text reuse that
// memory. Proposals are strings, which the collector does not scan, so
// this costs a few milliseconds.
//
// When the last large body was of about this size (the CLI proposing again
// to the same large file), its freed pages fit the new one and stay
// mapped: handing them back to the system would only have the kernel map
// them again, a page fault per 4 KiB (docs/performance.md, "Kept
// pages").
// Otherwise the freed pages go back to the system, so that those of
// smaller proposals (too small or scattered for a large text) do not stay
// resident beside it, nor those of a much larger one after it.
func (in *intake) reclaim(n int64) {
	last := in.lastLarge.Swap(n)
	if n <= last && n >= last/2 {
		runtime.GC()
		return
	}
	debug.FreeOSMemory()
}

// lift reads r's body when it is large and lifts the content of an
// openDiff out of it. It replaces r.Body with what the SDK is to read, and
// returns the placeholder under which the content is kept (or ""). It
// answers the request itself, and returns ok false, when the body cannot
// be read or its newContent is not a valid JSON string.
func (in *intake) lift(w http.ResponseWriter, r *http.Request) (key string, ok bool) {
	if r.Body == nil || (r.ContentLength >= 0 && r.ContentLength < liftMin) {
		return "", true
	}
	if r.ContentLength >= collectBefore {
		in.reclaim(r.ContentLength)
	}
	var reserved int64
	defer func() { in.presized.Add(-reserved) }()
	ls := liftScanner{br: bufio.NewReaderSize(r.Body, 64<<10), size: r.ContentLength,
		key: in.prefix + strconv.FormatUint(in.serial.Add(1), 10),
		reserve: func(n int64) bool {
			if in.presized.Add(n) > maxPresized {
				in.presized.Add(-n)
				return false
			}
			reserved = n
			return true
		}}
	if r.ContentLength > 0 {
		ls.out.Grow(int(min(r.ContentLength, 4<<10)))
	}
	err := ls.run()
	var tooBig *http.MaxBytesError
	switch {
	case errors.As(err, &tooBig):
		http.Error(w, fmt.Sprintf("request body exceeds %d bytes", tooBig.Limit), http.StatusRequestEntityTooLarge)
		return "", false
	case errors.Is(err, errBadString):
		http.Error(w, fmt.Sprintf("malformed payload: %v", err), http.StatusBadRequest)
		return "", false
	case err != nil:
		http.Error(w, "failed to read body", http.StatusBadRequest)
		return "", false
	}
	if ls.content != nil {
		key = ls.key
		in.mu.Lock()
		in.lifted[key] = *ls.content
		in.mu.Unlock()
	}
	body := ls.out.Bytes()
	r.Body = io.NopCloser(bytes.NewReader(body))
	r.ContentLength = int64(len(body))
	return key, true
}

// errBadString reports a newContent that is not a valid JSON string.
var errBadString = errors.New("invalid JSON string in newContent")

// errStop ends the structured scan: the rest of the body is copied as is.
var errStop = errors.New("stop scanning")

// liftScanner copies a JSON-RPC body from br to out, except for the
// params.arguments.newContent string of a tools/call of openDiff, which it
// decodes into content, writing key in its place. Anything it does not
// expect (another shape, a syntax error) makes it copy the rest unchanged,
// for the SDK to judge.
type liftScanner struct {
	br   *bufio.Reader
	size int64  // the body's length, -1 if unknown
	read int64  // bytes taken from br
	key  string // written in place of the lifted string
	// reserve, if set, says whether the string's buffer may be sized from
	// the body's length before the bytes arrive (else it grows with them).
	reserve func(n int64) bool
	out     bytes.Buffer
	method  string
	name    string
	content *string
}

func (ls *liftScanner) run() error {
	err := ls.structured()
	if errors.Is(err, errStop) || errors.Is(err, io.EOF) {
		err = nil
	}
	if err != nil {
		return err
	}
	n, err := ls.out.ReadFrom(ls.br)
	ls.read += n
	return err
}

func (ls *liftScanner) structured() error {
	if err := ls.space(); err != nil {
		return err
	}
	c, err := ls.peek()
	if err != nil {
		return err
	}
	if c != '{' {
		return errStop
	}
	return ls.object(0)
}

func (ls *liftScanner) peek() (byte, error) {
	b, err := ls.br.Peek(1)
	if len(b) == 0 {
		return 0, err
	}
	return b[0], nil
}

// next copies one byte to out and returns it.
func (ls *liftScanner) next() (byte, error) {
	c, err := ls.br.ReadByte()
	if err != nil {
		return 0, err
	}
	ls.read++
	ls.out.WriteByte(c)
	return c, nil
}

func (ls *liftScanner) space() error {
	for {
		c, err := ls.peek()
		if err != nil {
			return err
		}
		if c != ' ' && c != '\t' && c != '\n' && c != '\r' {
			return nil
		}
		if _, err := ls.next(); err != nil {
			return err
		}
	}
}

// expect copies the next byte, which must be c.
func (ls *liftScanner) expect(c byte) error {
	if err := ls.space(); err != nil {
		return err
	}
	got, err := ls.peek()
	if err != nil {
		return err
	}
	if got != c {
		return errStop
	}
	_, err = ls.next()
	return err
}

// object copies an object whose '{' is next. level 0 is the message, 1 its
// params, 2 the tool's arguments.
func (ls *liftScanner) object(level int) error {
	if _, err := ls.next(); err != nil { // {
		return err
	}
	for first := true; ; first = false {
		if err := ls.space(); err != nil {
			return err
		}
		c, err := ls.peek()
		if err != nil {
			return err
		}
		if c == '}' {
			_, err := ls.next()
			return err
		}
		if !first {
			if c != ',' {
				return errStop
			}
			if _, err := ls.next(); err != nil {
				return err
			}
			if err := ls.space(); err != nil {
				return err
			}
		}
		key, err := ls.copyString()
		if err != nil {
			return err
		}
		if err := ls.expect(':'); err != nil {
			return err
		}
		if err := ls.space(); err != nil {
			return err
		}
		c, err = ls.peek()
		if err != nil {
			return err
		}
		switch {
		case level == 0 && key == "method" && c == '"':
			ls.method, err = ls.copyString()
		case level == 0 && key == "params" && c == '{':
			err = ls.object(1)
		case level == 1 && key == "name" && c == '"':
			ls.name, err = ls.copyString()
		case level == 1 && key == "arguments" && c == '{':
			err = ls.object(2)
		case level == 2 && key == "newContent" && c == '"' && ls.method == "tools/call" && ls.name == "openDiff" && ls.content == nil:
			err = ls.lift()
		default:
			err = ls.copyValue()
		}
		if err != nil {
			return err
		}
	}
}

// copyString copies a string whose '"' is next and returns its raw text
// when short (keys and method names are compared raw: an escaped one simply
// does not match), else "".
func (ls *liftScanner) copyString() (string, error) {
	c, err := ls.peek()
	if err != nil {
		return "", err
	}
	if c != '"' {
		return "", errStop
	}
	start := ls.out.Len()
	if _, err := ls.next(); err != nil {
		return "", err
	}
	escaped := false
	for {
		c, err := ls.next()
		if err != nil {
			return "", err
		}
		switch {
		case escaped:
			escaped = false
		case c == '\\':
			escaped = true
		case c == '"':
			raw := ls.out.Bytes()[start+1 : ls.out.Len()-1]
			if len(raw) > 64 {
				return "", nil
			}
			return string(raw), nil
		}
	}
}

// copyValue copies one value of any kind.
func (ls *liftScanner) copyValue() error {
	c, err := ls.peek()
	if err != nil {
		return err
	}
	switch c {
	case '"':
		_, err := ls.copyString()
		return err
	case '{', '[':
		depth := 0
		for {
			c, err := ls.peek()
			if err != nil {
				return err
			}
			if c == '"' {
				if _, err := ls.copyString(); err != nil {
					return err
				}
				continue
			}
			if _, err := ls.next(); err != nil {
				return err
			}
			switch c {
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return nil
				}
			}
		}
	}
	// A number or literal: up to the next delimiter.
	for {
		c, err := ls.peek()
		if err != nil {
			return err
		}
		switch c {
		case ',', '}', ']', ' ', '\t', '\n', '\r':
			return nil
		}
		if _, err := ls.next(); err != nil {
			return err
		}
	}
}

// lift decodes the string whose '"' is next into content, the way
// encoding/json does (invalid UTF-8 and lone surrogates become U+FFFD), and
// writes the key to out in its stead. The string's bytes are read
// once and copied once, into a buffer sized from the body's length.
func (ls *liftScanner) lift() error {
	if _, err := ls.br.Discard(1); err != nil { // "
		return err
	}
	ls.read++
	var sb strings.Builder
	if want := ls.size - ls.read; want > 0 && (ls.reserve == nil || ls.reserve(want)) {
		sb.Grow(int(want))
	}
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: %s", errBadString, fmt.Sprintf(format, args...))
	}
	for {
		buf, err := ls.br.Peek(max(ls.br.Buffered(), 1))
		if len(buf) == 0 {
			if errors.Is(err, io.EOF) {
				return bad("unterminated")
			}
			return err
		}
		// The plain run: no quote, backslash, control character or
		// invalid UTF-8.
		i := 0
		for i < len(buf) {
			c := buf[i]
			if c < utf8.RuneSelf {
				if c == '"' || c == '\\' || c < ' ' {
					break
				}
				i++
				continue
			}
			r, size := utf8.DecodeRune(buf[i:])
			if r == utf8.RuneError && size == 1 {
				break
			}
			i += size
		}
		sb.Write(buf[:i])
		ls.discard(i)
		if i == len(buf) {
			continue
		}
		switch c := buf[i]; {
		case c == '"':
			ls.discard(1)
			content := sb.String()
			ls.content = &content
			ls.out.WriteString(`"` + ls.key + `"`)
			return nil
		case c < ' ':
			return bad("control character %#x", c)
		case c == '\\':
			n, err := ls.escape(&sb)
			if err != nil {
				return err
			}
			if n == 0 {
				return bad("invalid escape")
			}
			ls.discard(n)
		default:
			// Maybe a valid sequence cut by the end of the buffer.
			p, _ := ls.br.Peek(utf8.UTFMax)
			r, size := utf8.DecodeRune(p)
			if r == utf8.RuneError && size == 1 {
				sb.WriteRune(utf8.RuneError)
			} else {
				sb.WriteRune(r)
			}
			ls.discard(size)
		}
	}
}

func (ls *liftScanner) discard(n int) {
	d, _ := ls.br.Discard(n)
	ls.read += int64(d)
}

// escape decodes the escape sequence at the front of br into sb and returns
// its length, 0 if it is invalid. It reads nothing.
func (ls *liftScanner) escape(sb *strings.Builder) (int, error) {
	p, err := ls.br.Peek(12)
	if len(p) < 2 {
		if err == nil || errors.Is(err, io.EOF) || errors.Is(err, bufio.ErrBufferFull) {
			return 0, nil
		}
		return 0, err
	}
	switch p[1] {
	case '"', '\\', '/':
		sb.WriteByte(p[1])
	case 'b':
		sb.WriteByte('\b')
	case 'f':
		sb.WriteByte('\f')
	case 'n':
		sb.WriteByte('\n')
	case 'r':
		sb.WriteByte('\r')
	case 't':
		sb.WriteByte('\t')
	case 'u':
		r := getu4(p)
		if r < 0 {
			return 0, nil
		}
		if utf16.IsSurrogate(r) {
			if r2 := getu4(p[6:]); r2 >= 0 {
				if dec := utf16.DecodeRune(r, r2); dec != utf8.RuneError {
					sb.WriteRune(dec)
					return 12, nil
				}
			}
			r = utf8.RuneError
		}
		sb.WriteRune(r)
		return 6, nil
	default:
		return 0, nil
	}
	return 2, nil
}

// getu4 decodes \uXXXX at the front of s, or returns -1.
func getu4(s []byte) rune {
	if len(s) < 6 || s[0] != '\\' || s[1] != 'u' {
		return -1
	}
	var r rune
	for _, c := range s[2:6] {
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c = c - 'a' + 10
		case 'A' <= c && c <= 'F':
			c = c - 'A' + 10
		default:
			return -1
		}
		r = r*16 + rune(c)
	}
	return r
}
