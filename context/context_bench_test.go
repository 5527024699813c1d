package context_test

import (
	stdctx "context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	idectx "github.com/gemini-ide-companion/gemini-ide-companion/context"
)

// tenFiles returns an engine with MaxOpenFiles files open, the last one
// focused with a cursor and the given selection.
func tenFiles(selected string) *idectx.Engine {
	e := idectx.NewEngine(nil, nil)
	for i := range idectx.MaxOpenFiles {
		e.Focus(fmt.Sprintf("/home/me/project/src/pkg%02d/file%02d.go", i, i), &idectx.Cursor{Line: i + 1, Character: 1}, "")
	}
	e.Select("/home/me/project/src/pkg09/file09.go", &idectx.Cursor{Line: 42, Character: 7}, selected)
	return e
}

// BenchmarkSelect is the work done for every cursor event of a plugin: the
// hot path of a context storm.
func BenchmarkSelect(b *testing.B) {
	e := tenFiles("")
	c := idectx.Cursor{Line: 1, Character: 1}
	b.ReportAllocs()
	for b.Loop() {
		c.Line++
		e.Select("/home/me/project/src/pkg09/file09.go", &c, "")
	}
}

// BenchmarkFocusSwitch alternates between two files: moving a file to the
// front of the most-recently-used list.
func BenchmarkFocusSwitch(b *testing.B) {
	e := tenFiles("")
	paths := []string{"/home/me/project/src/pkg03/file03.go", "/home/me/project/src/pkg07/file07.go"}
	c := idectx.Cursor{Line: 1, Character: 1}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		e.Focus(paths[i&1], &c, "")
		i++
	}
}

// BenchmarkSnapshot builds the IdeContext sent to every session, and then
// encodes it the way each notification does.
func BenchmarkSnapshot(b *testing.B) {
	for _, sel := range []struct {
		name string
		text string
	}{{"noSelection", ""}, {"selection1KiB", strings.Repeat("x", 1<<10)}, {"selection16KiB", strings.Repeat("x", idectx.MaxSelectedUTF16)}} {
		e := tenFiles(sel.text)
		b.Run(sel.name+"/build", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				_ = e.Snapshot()
			}
		})
		b.Run(sel.name+"/build+encode", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := json.Marshal(e.Snapshot()); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkTruncation is a selection over the 16384 UTF-16 unit limit: ASCII
// (cut by length) and text with characters outside the BMP (cut by counting
// code units).
func BenchmarkTruncation(b *testing.B) {
	for _, c := range []struct {
		name string
		text string
	}{
		{"ascii1MiB", strings.Repeat("a", 1<<20)},
		{"emoji1MiB", strings.Repeat("a😀", (1<<20)/5)},
		{"ascii16KiB", strings.Repeat("a", idectx.MaxSelectedUTF16)},
	} {
		b.Run(c.name, func(b *testing.B) {
			e := idectx.NewEngine(nil, nil)
			cur := idectx.Cursor{Line: 1, Character: 1}
			b.SetBytes(int64(len(c.text)))
			b.ReportAllocs()
			for b.Loop() {
				e.Select("/home/me/project/a.go", &cur, c.text)
			}
		})
	}
}

// BenchmarkPublisherChanged is the cost an event pays to signal the
// publisher while a burst is being paced.
func BenchmarkPublisherChanged(b *testing.B) {
	e := tenFiles("")
	p := idectx.NewPublisher(e, 50*time.Millisecond, 200*time.Millisecond)
	ctx, cancel := stdctx.WithCancel(stdctx.Background())
	var wg sync.WaitGroup
	wg.Go(func() { p.Run(ctx, func(idectx.IdeContext) {}) })
	b.ReportAllocs()
	for b.Loop() {
		p.Changed()
	}
	b.StopTimer()
	cancel()
	wg.Wait()
}
