package link_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"strconv"
	"strings"
	"testing"

	"github.com/gemini-ide-companion/gemini-ide-companion/link"
)

// nopHandler takes every message and does nothing with it.
type nopHandler struct{}

func (nopHandler) HandleRequest(context.Context, string, json.RawMessage) (any, error) {
	return struct{}{}, nil
}

func (nopHandler) HandleNotification(context.Context, string, json.RawMessage) {}

// selectionLine is one context/selectionChanged line, as a plugin sends it
// while the cursor moves.
const selectionLine = `{"jsonrpc":"2.0","method":"context/selectionChanged","params":{"path":"/home/me/project/src/main.go","cursor":{"line":1234,"character":12}}}` + "\n"

// repeatReader yields line n times.
type repeatReader struct {
	line string
	n    int
	off  int // read offset within the current copy
}

func (r *repeatReader) Read(p []byte) (int, error) {
	total := 0
	for len(p) > 0 && r.n > 0 {
		k := copy(p, r.line[r.off:])
		p = p[k:]
		total += k
		r.off += k
		if r.off == len(r.line) {
			r.off = 0
			r.n--
		}
	}
	if total == 0 {
		return 0, io.EOF
	}
	return total, nil
}

// BenchmarkServeNotification is reading and dispatching one cursor event:
// the link's share of a context storm.
func BenchmarkServeNotification(b *testing.B) {
	r := &repeatReader{line: selectionLine, n: b.N}
	c := link.New(r, io.Discard, nopHandler{})
	b.SetBytes(int64(len(selectionLine)))
	b.ReportAllocs()
	b.ResetTimer()
	if err := c.Serve(context.Background()); err != nil {
		b.Fatal(err)
	}
}

// benchSizes are the message sizes measured: 16 MiB only without -short.
func benchSizes() []int {
	if testing.Short() {
		return []int{1 << 10, 1 << 20}
	}
	return []int{1 << 10, 1 << 20, 16 << 20}
}

// text returns size bytes made of unit repeated.
func text(unit string, size int) string {
	return strings.Repeat(unit, size/len(unit)+1)[:size]
}

// BenchmarkServeLargeRequest is reading one request line carrying a large
// string (what diff/accepted with a big file looks like).
func BenchmarkServeLargeRequest(b *testing.B) {
	for _, size := range benchSizes() {
		content := text("the quick brown fox \"jumps\" over the lazy dog\n", size)
		params, _ := json.Marshal(map[string]string{"filePath": "/home/me/f.txt", "content": content})
		line := []byte(`{"jsonrpc":"2.0","id":1,"method":"bench/echo","params":` + string(params) + "}\n")
		b.Run(strconv.Itoa(size>>10)+"KiB", func(b *testing.B) {
			b.SetBytes(int64(len(line)))
			b.ReportAllocs()
			for b.Loop() {
				c := link.New(bytes.NewReader(line), io.Discard, nopHandler{})
				if err := c.Serve(context.Background()); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// diffOpen mirrors the params of diff/open.
type diffOpen struct {
	FilePath        string  `json:"filePath"`
	NewContent      string  `json:"newContent"`
	OriginalContent *string `json:"originalContent"`
	UnifiedDiff     string  `json:"unifiedDiff"`
	Title           string  `json:"title"`
}

// streamedDiffOpen is diffOpen written field by field, as the sidecar
// writes diff/open.
type streamedDiffOpen diffOpen

func (d streamedDiffOpen) StreamJSON(o *link.Object) {
	o.String("filePath", d.FilePath)
	o.String("newContent", d.NewContent)
	o.String("originalContent", *d.OriginalContent)
	o.String("unifiedDiff", d.UnifiedDiff)
	o.String("title", d.Title)
}

// BenchmarkNotifyDiffOpen is encoding and writing the params of a diff/open
// (new and original content plus the diff text) for a file of each size:
// streamed field by field (what the sidecar does), and built whole with
// encoding/json first (any other params).
func BenchmarkNotifyDiffOpen(b *testing.B) {
	for _, size := range benchSizes() {
		content := text("if a < b && c > d { return \"x\" }\n", size)
		p := diffOpen{FilePath: "/home/me/f.txt", NewContent: content, OriginalContent: &content, UnifiedDiff: content[:size/16], Title: "f.txt"}
		c := link.New(strings.NewReader(""), io.Discard, nopHandler{})
		for _, m := range []struct {
			name   string
			params any
		}{{"streamed", streamedDiffOpen(p)}, {"whole", p}} {
			b.Run(strconv.Itoa(size>>10)+"KiB/"+m.name, func(b *testing.B) {
				b.SetBytes(int64(2*size + size/16))
				b.ReportAllocs()
				for b.Loop() {
					if err := c.Notify("diff/open", m.params); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
