package nvim

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"sync"
	"time"
)

// This file is a small msgpack-rpc client, enough to drive Neovim through
// its API from a test: requests, responses, and ignoring notifications.
// Neovim's handles (buffers, windows, tabpages) arrive as msgpack
// extension types and are decoded to their integer IDs.

// encode appends the msgpack form of v to b. It knows the types tests send:
// nil, bool, integers, float64, string, []byte, []any, []string and
// map[string]any.
func encode(b []byte, v any) ([]byte, error) {
	switch x := v.(type) {
	case nil:
		return append(b, 0xc0), nil
	case bool:
		if x {
			return append(b, 0xc3), nil
		}
		return append(b, 0xc2), nil
	case int:
		return encodeInt(b, int64(x)), nil
	case int64:
		return encodeInt(b, x), nil
	case uint32:
		return encodeInt(b, int64(x)), nil
	case float64:
		b = append(b, 0xcb)
		return binary.BigEndian.AppendUint64(b, math.Float64bits(x)), nil
	case string:
		return encodeStr(b, x), nil
	case []byte:
		return encodeStr(b, string(x)), nil
	case []string:
		b = encodeLen(b, len(x), 0x90, 0xdc, 0xdd)
		for _, s := range x {
			b = encodeStr(b, s)
		}
		return b, nil
	case []any:
		b = encodeLen(b, len(x), 0x90, 0xdc, 0xdd)
		for _, e := range x {
			var err error
			if b, err = encode(b, e); err != nil {
				return nil, err
			}
		}
		return b, nil
	case map[string]any:
		b = encodeLen(b, len(x), 0x80, 0xde, 0xdf)
		for k, e := range x {
			b = encodeStr(b, k)
			var err error
			if b, err = encode(b, e); err != nil {
				return nil, err
			}
		}
		return b, nil
	}
	return nil, fmt.Errorf("msgpack: cannot encode %T", v)
}

func encodeInt(b []byte, x int64) []byte {
	switch {
	case x >= 0 && x < 128:
		return append(b, byte(x))
	case x < 0 && x >= -32:
		return append(b, byte(x))
	default:
		b = append(b, 0xd3)
		return binary.BigEndian.AppendUint64(b, uint64(x))
	}
}

func encodeStr(b []byte, s string) []byte {
	switch n := len(s); {
	case n < 32:
		b = append(b, 0xa0|byte(n))
	case n < 1<<8:
		b = append(b, 0xd9, byte(n))
	case n < 1<<16:
		b = append(b, 0xda)
		b = binary.BigEndian.AppendUint16(b, uint16(n))
	default:
		b = append(b, 0xdb)
		b = binary.BigEndian.AppendUint32(b, uint32(n))
	}
	return append(b, s...)
}

func encodeLen(b []byte, n int, fix, c16, c32 byte) []byte {
	switch {
	case n < 16:
		return append(b, fix|byte(n))
	case n < 1<<16:
		b = append(b, c16)
		return binary.BigEndian.AppendUint16(b, uint16(n))
	default:
		b = append(b, c32)
		return binary.BigEndian.AppendUint32(b, uint32(n))
	}
}

// decoder reads msgpack values from a stream.
type decoder struct{ r *bufio.Reader }

func (d *decoder) bytes(n int) ([]byte, error) {
	buf := make([]byte, n)
	_, err := io.ReadFull(d.r, buf)
	return buf, err
}

func (d *decoder) uint(n int) (uint64, error) {
	buf, err := d.bytes(n)
	if err != nil {
		return 0, err
	}
	var x uint64
	for _, c := range buf {
		x = x<<8 | uint64(c)
	}
	return x, nil
}

// decode reads one value: nil, bool, int64, float64, string, []any,
// map[string]any (non-string keys are formatted with %v), or an extension
// type's integer payload (Neovim handles) as int64.
func (d *decoder) decode() (any, error) {
	c, err := d.r.ReadByte()
	if err != nil {
		return nil, err
	}
	switch {
	case c <= 0x7f:
		return int64(c), nil
	case c >= 0xe0:
		return int64(int8(c)), nil
	case c&0xf0 == 0x80:
		return d.mapOf(int(c & 0x0f))
	case c&0xf0 == 0x90:
		return d.arrayOf(int(c & 0x0f))
	case c&0xe0 == 0xa0:
		b, err := d.bytes(int(c & 0x1f))
		return string(b), err
	}
	switch c {
	case 0xc0:
		return nil, nil
	case 0xc2:
		return false, nil
	case 0xc3:
		return true, nil
	case 0xc4, 0xc5, 0xc6, 0xd9, 0xda, 0xdb: // bin 8/16/32, str 8/16/32
		sizes := map[byte]int{0xc4: 1, 0xc5: 2, 0xc6: 4, 0xd9: 1, 0xda: 2, 0xdb: 4}
		n, err := d.uint(sizes[c])
		if err != nil {
			return nil, err
		}
		b, err := d.bytes(int(n))
		return string(b), err
	case 0xca:
		x, err := d.uint(4)
		return float64(math.Float32frombits(uint32(x))), err
	case 0xcb:
		x, err := d.uint(8)
		return math.Float64frombits(x), err
	case 0xcc, 0xcd, 0xce, 0xcf:
		x, err := d.uint(1 << (c - 0xcc))
		return int64(x), err
	case 0xd0:
		x, err := d.uint(1)
		return int64(int8(x)), err
	case 0xd1:
		x, err := d.uint(2)
		return int64(int16(x)), err
	case 0xd2:
		x, err := d.uint(4)
		return int64(int32(x)), err
	case 0xd3:
		x, err := d.uint(8)
		return int64(x), err
	case 0xdc, 0xdd:
		n, err := d.uint(2 << (c - 0xdc))
		if err != nil {
			return nil, err
		}
		return d.arrayOf(int(n))
	case 0xde, 0xdf:
		n, err := d.uint(2 << (c - 0xde))
		if err != nil {
			return nil, err
		}
		return d.mapOf(int(n))
	case 0xd4, 0xd5, 0xd6, 0xd7, 0xd8: // fixext 1/2/4/8/16
		return d.ext(1 << (c - 0xd4))
	case 0xc7, 0xc8, 0xc9: // ext 8/16/32
		n, err := d.uint(1 << (c - 0xc7))
		if err != nil {
			return nil, err
		}
		return d.ext(int(n))
	}
	return nil, fmt.Errorf("msgpack: unknown type byte 0x%02x", c)
}

func (d *decoder) arrayOf(n int) ([]any, error) {
	out := make([]any, n)
	for i := range out {
		v, err := d.decode()
		if err != nil {
			return nil, err
		}
		out[i] = v
	}
	return out, nil
}

func (d *decoder) mapOf(n int) (map[string]any, error) {
	out := make(map[string]any, n)
	for range n {
		k, err := d.decode()
		if err != nil {
			return nil, err
		}
		v, err := d.decode()
		if err != nil {
			return nil, err
		}
		ks, ok := k.(string)
		if !ok {
			ks = fmt.Sprint(k)
		}
		out[ks] = v
	}
	return out, nil
}

// ext reads an extension value: a type byte, then n bytes that hold a
// msgpack integer (Neovim's handle ID).
func (d *decoder) ext(n int) (any, error) {
	if _, err := d.r.ReadByte(); err != nil { // the extension type
		return nil, err
	}
	payload, err := d.bytes(n)
	if err != nil {
		return nil, err
	}
	inner := &decoder{r: bufio.NewReader(bytes.NewReader(payload))}
	return inner.decode()
}

// rpcError is an error Neovim returned for a request.
type rpcError struct {
	Method string
	Detail any
}

func (e *rpcError) Error() string {
	if a, ok := e.Detail.([]any); ok && len(a) == 2 {
		return fmt.Sprintf("%s: %v", e.Method, a[1])
	}
	return fmt.Sprintf("%s: %v", e.Method, e.Detail)
}

type response struct {
	result any
	err    error
}

// client is one msgpack-rpc connection to Neovim.
type client struct {
	conn    net.Conn
	writeMu sync.Mutex
	mu      sync.Mutex
	nextID  uint32
	pending map[uint32]chan response
	closed  error
	done    chan struct{} // closed when the reading goroutine ends
}

func newClient(conn net.Conn) *client {
	c := &client{conn: conn, pending: map[uint32]chan response{}, done: make(chan struct{})}
	go c.read()
	return c
}

func (c *client) read() {
	defer close(c.done)
	d := &decoder{r: bufio.NewReaderSize(c.conn, 1<<16)}
	var err error
	for {
		var v any
		v, err = d.decode()
		if err != nil {
			break
		}
		msg, ok := v.([]any)
		if !ok || len(msg) == 0 {
			continue
		}
		kind, _ := msg[0].(int64)
		if kind != 1 || len(msg) != 4 { // only responses matter here
			continue
		}
		id, _ := msg[1].(int64)
		c.mu.Lock()
		ch := c.pending[uint32(id)]
		delete(c.pending, uint32(id))
		c.mu.Unlock()
		if ch == nil {
			continue
		}
		if msg[2] != nil {
			ch <- response{err: &rpcError{Detail: msg[2]}}
		} else {
			ch <- response{result: msg[3]}
		}
	}
	c.mu.Lock()
	c.closed = fmt.Errorf("connection to Neovim closed: %w", err)
	for id, ch := range c.pending {
		ch <- response{err: c.closed}
		delete(c.pending, id)
	}
	c.mu.Unlock()
}

func (c *client) write(msg []any) error {
	b, err := encode(nil, msg)
	if err != nil {
		return err
	}
	c.writeMu.Lock()
	defer c.writeMu.Unlock()
	_ = c.conn.SetWriteDeadline(time.Now().Add(10 * time.Second))
	_, err = c.conn.Write(b)
	return err
}

// call sends a request and waits for its response.
func (c *client) call(timeout time.Duration, method string, args ...any) (any, error) {
	if args == nil {
		args = []any{}
	}
	ch := make(chan response, 1)
	c.mu.Lock()
	if c.closed != nil {
		c.mu.Unlock()
		return nil, c.closed
	}
	id := c.nextID
	c.nextID++
	c.pending[id] = ch
	c.mu.Unlock()
	if err := c.write([]any{int64(0), int64(id), method, args}); err != nil {
		c.mu.Lock()
		delete(c.pending, id)
		c.mu.Unlock()
		return nil, err
	}
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	select {
	case r := <-ch:
		var re *rpcError
		if errors.As(r.err, &re) {
			re.Method = method
		}
		return r.result, r.err
	case <-timer.C:
		c.mu.Lock()
		delete(c.pending, id)
		c.mu.Unlock()
		return nil, fmt.Errorf("%s: no answer from Neovim within %v", method, timeout)
	}
}

// notify sends a notification (no answer expected).
func (c *client) notify(method string, args ...any) error {
	if args == nil {
		args = []any{}
	}
	return c.write([]any{int64(2), method, args})
}

// close closes the connection and waits for the reading goroutine.
func (c *client) close() {
	_ = c.conn.Close()
	<-c.done
}
