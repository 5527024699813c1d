package review

import (
	"context"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gemini-ide-companion/gemini-ide-companion/companion/proposals"
	"github.com/gemini-ide-companion/gemini-ide-companion/link/protocol"
)

type decisions struct {
	mu  sync.Mutex
	got []string
	ch  chan struct{}
}

func newDecisions() *decisions { return &decisions{ch: make(chan struct{}, 10)} }

func (d *decisions) Decide(dc proposals.Decision) proposals.Verdict {
	d.mu.Lock()
	if dc.Accepted {
		d.got = append(d.got, "accept "+dc.FilePath+" "+dc.Content)
	} else {
		d.got = append(d.got, "reject "+dc.FilePath)
	}
	d.mu.Unlock()
	d.ch <- struct{}{}
	return proposals.Taken
}

func (d *decisions) wait(t *testing.T, n int) []string {
	t.Helper()
	for i := 0; i < n; i++ {
		select {
		case <-d.ch:
		case <-time.After(5 * time.Second):
			t.Fatalf("only %d of %d decisions", i, n)
		}
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]string(nil), d.got...)
}

// run starts a Reviewer reading answers from the returned writer.
func run(t *testing.T, opts Options) (*Reviewer, io.WriteCloser, *syncBuf, *decisions) {
	t.Helper()
	pr, pw := io.Pipe()
	out := &syncBuf{}
	opts.In, opts.Out = pr, out
	r := New(opts)
	d := newDecisions()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); r.Run(ctx, d) }()
	t.Cleanup(func() { cancel(); pw.Close(); <-done })
	return r, pw, out, d
}

type syncBuf struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *syncBuf) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuf) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func waitOutput(t *testing.T, out *syncBuf, want string) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !strings.Contains(out.String(), want) {
		if time.Now().After(deadline) {
			t.Fatalf("output never showed %q:\n%s", want, out.String())
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func req(path, content string) protocol.DiffOpenParams {
	return protocol.DiffOpenParams{FilePath: path, NewContent: content, UnifiedDiff: "--- a" + path + "\n+++ b" + path + "\n@@ -1 +1 @@\n-old\n+" + content}
}

func TestAcceptRejectAndRetryOnNonsense(t *testing.T) {
	r, in, out, d := run(t, Options{Color: true})
	r.OpenDiff(context.Background(), req("/w/a.txt", "new a\n"))
	r.OpenDiff(context.Background(), req("/w/b.txt", "new b\n"))
	waitOutput(t, out, "Accept [a]")
	if !strings.Contains(out.String(), "\x1b[32m+new a") || !strings.Contains(out.String(), "\x1b[31m-old") {
		t.Fatalf("diff not coloured:\n%q", out.String())
	}
	io.WriteString(in, "what?\n")
	waitOutput(t, out, "Please answer a, r or e.")
	io.WriteString(in, "a\n")
	io.WriteString(in, "r\n")
	got := d.wait(t, 2)
	if got[0] != "accept /w/a.txt new a\n" || got[1] != "reject /w/b.txt" {
		t.Fatalf("decisions %q", got)
	}
}

func TestClosedByTheCLIWhileAskingShowsTheNextDiffAtOnce(t *testing.T) {
	r, in, out, d := run(t, Options{})
	r.OpenDiff(context.Background(), req("/w/a.txt", "x\n"))
	waitOutput(t, out, "Accept [a]")
	content, err := r.CloseDiff(context.Background(), "/w/a.txt")
	if err != nil || content == nil || *content != "x\n" {
		t.Fatalf("CloseDiff: %v %v", content, err)
	}
	waitOutput(t, out, "/w/a.txt was answered in Gemini CLI")
	// The next proposal is shown without any key pressed.
	r.OpenDiff(context.Background(), req("/w/c.txt", "c\n"))
	waitOutput(t, out, "proposes a change to /w/c.txt")
	if n := strings.Count(out.String(), "Accept [a]"); n != 2 {
		t.Fatalf("want the question asked twice, got %d:\n%s", n, out.String())
	}
	io.WriteString(in, "r\n")
	if got := d.wait(t, 1); len(got) != 1 || got[0] != "reject /w/c.txt" {
		t.Fatalf("the closed diff was decided: %q", got)
	}
	if c, _ := r.CloseDiff(context.Background(), "/w/none.txt"); c != nil {
		t.Fatal("closing an unknown diff returned content")
	}
}

func TestKeyModeActsOnOneKeyAndDropsStrayKeys(t *testing.T) {
	r, in, out, d := run(t, Options{Keys: true})
	if !strings.Contains(r.HowToAnswer(), "one key") {
		t.Fatalf("key mode not announced: %q", r.HowToAnswer())
	}
	// A key pressed while nothing is asked must not answer a later diff.
	r.OpenDiff(context.Background(), req("/w/a.txt", "a\n"))
	waitOutput(t, out, "(one key)")
	io.WriteString(in, "x")
	waitOutput(t, out, "Please answer a, r or e.")
	io.WriteString(in, "a") // no Enter
	if got := d.wait(t, 1); got[0] != "accept /w/a.txt a\n" {
		t.Fatalf("decisions %q", got)
	}
	io.WriteString(in, "\rr") // Enter is ignored; "r" arrives while nothing is asked
	waitOutput(t, out, "No proposed edit is waiting for an answer.")
	r.OpenDiff(context.Background(), req("/w/b.txt", "b\n"))
	waitOutput(t, out, "proposes a change to /w/b.txt")
	io.WriteString(in, "n")
	if got := d.wait(t, 1); len(got) != 2 || got[1] != "reject /w/b.txt" {
		t.Fatalf("decisions %q", got)
	}
}

func TestLineModeSaysSo(t *testing.T) {
	r, _, out, _ := run(t, Options{})
	if !strings.Contains(r.HowToAnswer(), "not a terminal") {
		t.Fatalf("line mode not announced: %q", r.HowToAnswer())
	}
	r.OpenDiff(context.Background(), req("/w/a.txt", "a\n"))
	waitOutput(t, out, "(type a letter, then Enter)")
}

func TestEditThenAccept(t *testing.T) {
	// The "editor" appends a line to the proposal file it is given.
	edit := func(path string) *exec.Cmd {
		return exec.Command("sh", "-c", `printf 'edited\n' >> "$1"`, "sh", path)
	}
	r, in, _, d := run(t, Options{EditCommand: edit})
	r.OpenDiff(context.Background(), req("/w/a.txt", "proposal\n"))
	io.WriteString(in, "e\n")
	if got := d.wait(t, 1); got[0] != "accept /w/a.txt proposal\nedited\n" {
		t.Fatalf("decisions %q", got)
	}
	entries, _ := os.ReadDir(os.TempDir())
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), "gemini-proposal-") {
			if st, err := os.Stat(os.TempDir() + "/" + e.Name()); err == nil && time.Since(st.ModTime()) < time.Minute {
				t.Fatalf("temporary proposal left behind: %s", e.Name())
			}
		}
	}
}
