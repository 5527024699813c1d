//go:build linux

package osproc

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"testing"
	"time"

	"github.com/gemini-ide-companion/gemini-ide-companion/internal/testproc"
)

// quietPipe returns the quiet reader of a new pipe's read end, and its
// write end.
func quietPipe(t *testing.T) (*quietReader, *os.File) {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	// As stdin: a file the runtime does not poll.
	rf := os.NewFile(r.Fd(), "stdin")
	q, ok := QuietReader(rf).(*quietReader)
	if !ok {
		t.Fatal("QuietReader did not take a pipe")
	}
	t.Cleanup(func() { q.Close(); w.Close(); r.Close() })
	return q, w
}

// TestQuietReaderReadsEverythingThenEOF: what the writer wrote, in
// pieces and with pauses between reads, is read whole and in order, then
// io.EOF once the writer closes.
func TestQuietReaderReadsEverythingThenEOF(t *testing.T) {
	q, w := quietPipe(t)
	var want bytes.Buffer
	var lines [][]byte
	for i := range 200 {
		line := []byte(`{"jsonrpc":"2.0","method":"context/selectionChanged","params":{"n":` + string(rune('0'+i%10)) + "}}\n")
		want.Write(line)
		lines = append(lines, line)
	}
	go func() {
		for i, line := range lines {
			w.Write(line)
			if i%50 == 0 {
				time.Sleep(time.Millisecond)
			}
		}
		w.Close()
	}()
	var got bytes.Buffer
	buf := make([]byte, 100)
	for i := 0; ; i++ {
		if i%3 == 0 {
			q.Pause(time.Millisecond)
		}
		n, err := q.Read(buf)
		got.Write(buf[:n])
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	if !bytes.Equal(got.Bytes(), want.Bytes()) {
		t.Fatalf("read %d bytes, want the %d written", got.Len(), want.Len())
	}
}

// TestQuietReaderCloseReleasesARead: Close from another goroutine ends a
// Read waiting for data, as for a file the runtime polls.
func TestQuietReaderCloseReleasesARead(t *testing.T) {
	q, _ := quietPipe(t)
	done := make(chan error, 1)
	go func() {
		_, err := q.Read(make([]byte, 10))
		done <- err
	}()
	time.Sleep(20 * time.Millisecond) // let the read start waiting (it returns either way)
	q.Close()
	select {
	case err := <-done:
		if err == nil {
			t.Fatal("a read on a closed reader returned no error")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Close did not release the pending read")
	}
}

// TestQuietReaderPauseIsNotCutShortByData: data written during a Pause do
// not end it; they are read after it.
func TestQuietReaderPauseIsNotCutShortByData(t *testing.T) {
	q, w := quietPipe(t)
	w.Write([]byte("a"))
	buf := make([]byte, 10)
	if n, err := q.Read(buf); err != nil || string(buf[:n]) != "a" {
		t.Fatalf("read %q, %v", buf[:n], err)
	}
	go func() {
		time.Sleep(5 * time.Millisecond)
		w.Write([]byte("b"))
	}()
	start := time.Now()
	q.Pause(100 * time.Millisecond)
	if d := time.Since(start); d < 100*time.Millisecond {
		t.Fatalf("the pause ended after %v, before its 100 ms", d)
	}
	if n, err := q.Read(buf); err != nil || string(buf[:n]) != "b" {
		t.Fatalf("read %q, %v after the pause", buf[:n], err)
	}
}

// TestWatchExitSaysWhenTheProcessEnds: the channel stays open while the
// process runs and closes when it is killed; a PID that names no process
// is gone at once.
func TestWatchExitSaysWhenTheProcessEnds(t *testing.T) {
	cmd := testproc.Command("sleep")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	gone := WatchExit(ctx, cmd.Process.Pid)
	select {
	case <-gone:
		t.Fatal("gone while the process runs")
	case <-time.After(50 * time.Millisecond):
	}
	cmd.Process.Kill() // a zombie until reaped: gone all the same
	select {
	case <-gone:
	case <-time.After(10 * time.Second):
		t.Fatal("not told that the process was killed")
	}
	cmd.Wait()
	select {
	case <-WatchExit(ctx, cmd.Process.Pid):
	case <-time.After(10 * time.Second):
		t.Fatal("a PID that names no process is not gone")
	}
}
