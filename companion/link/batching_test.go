package link

import (
	"context"
	"fmt"
	"io"
	"os"
	"sync/atomic"
	"testing"
	"time"
)

// countingReader counts the reads that reached the stream.
type countingReader struct {
	r     io.Reader
	reads atomic.Int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	c.reads.Add(1)
	return c.r.Read(p)
}

// TestBatchingReadsAStreamOfReportsInFewReads: with WithBatching, 100
// cursor reports written a millisecond apart are read in a few reads, all
// of them and in order, and a request after them is answered.
func TestBatchingReadsAStreamOfReportsInFewReads(t *testing.T) {
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer pr.Close()
	cr := &countingReader{r: pr}
	outR, outW := io.Pipe()
	go io.Copy(io.Discard, outR)
	rec := &recorder{}
	c := New(cr, outW, rec, WithBatching(25*time.Millisecond, func(m string) bool { return m == "context/selectionChanged" }))
	done := make(chan error, 1)
	go func() { done <- c.Serve(context.Background()) }()
	const n = 100
	for i := range n {
		fmt.Fprintf(pw, `{"jsonrpc":"2.0","method":"context/selectionChanged","params":{"n":%d}}`+"\n", i)
		time.Sleep(time.Millisecond)
	}
	pw.Close()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if len(rec.notes) != n {
		t.Fatalf("%d of %d reports handled", len(rec.notes), n)
	}
	for i, note := range rec.notes {
		if want := fmt.Sprintf(`context/selectionChanged {"n":%d}`, i); note != want {
			t.Fatalf("report %d is %q, want %q", i, note, want)
		}
	}
	// 100 ms of writes at most every 25 ms, and the end of the stream.
	if reads := cr.reads.Load(); reads > n/3 {
		t.Fatalf("%d reads for %d reports written 1 ms apart: not batched", reads, n)
	}
}

// TestBatchingDoesNotHoldARequest: a request after a pause is read at
// once, and one right after reports is answered.
func TestBatchingDoesNotHoldARequest(t *testing.T) {
	_, in, out, _ := pipePeer(t, &recorder{}, WithBatching(10*time.Millisecond, func(m string) bool { return m == "context/selectionChanged" }))
	for i := range 3 {
		fmt.Fprintf(in, `{"jsonrpc":"2.0","method":"context/selectionChanged","params":{"n":%d}}`+"\n", i)
	}
	fmt.Fprint(in, `{"jsonrpc":"2.0","id":1,"method":"echo","params":{"a":1}}`+"\n")
	if m := readMsg(t, out); fmt.Sprint(m["id"]) != "1" {
		t.Fatalf("answer %v", m)
	}
}
