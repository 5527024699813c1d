package review_test

import (
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/gemini-ide-companion/gemini-ide-companion/companion"
	"github.com/gemini-ide-companion/gemini-ide-companion/companion/review"
	"github.com/gemini-ide-companion/gemini-ide-companion/discovery"
	"github.com/gemini-ide-companion/gemini-ide-companion/link/protocol"
	"github.com/gemini-ide-companion/gemini-ide-companion/tests/testkit"
)

// slowSecond is the terminal reviewer as the companion reaches it, except
// that the second proposal it is asked to show arrives only once the test
// lets it: the moment between the CLI replacing a proposal and the
// terminal hearing of it, made long.
type slowSecond struct {
	*review.Reviewer
	n       atomic.Int32
	held    chan struct{}
	release chan struct{}
	once    sync.Once
}

func (s *slowSecond) let() { s.once.Do(func() { close(s.release) }) }

func (s *slowSecond) OpenDiff(ctx context.Context, req protocol.DiffOpenParams) error {
	if s.n.Add(1) == 2 {
		close(s.held)
		<-s.release
	}
	return s.Reviewer.OpenDiff(ctx, req)
}

type output struct {
	mu sync.Mutex
	b  strings.Builder
}

func (o *output) Write(p []byte) (int, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.b.Write(p)
}

func (o *output) String() string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.b.String()
}

// waitAfter waits until the output shows want after its first from bytes,
// and returns where it ends.
func (o *output) waitAfter(t *testing.T, from int, want string) int {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		s := o.String()
		if i := strings.Index(s[from:], want); i >= 0 {
			return from + i + len(want)
		}
		if time.Now().After(deadline) {
			t.Fatalf("the terminal never showed %q after byte %d:\n%s", want, from, s)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestAnAnswerToAReplacedProposalIsRefused: the CLI replaces the proposal
// shown in the terminal while the user answers it. The answer is about the
// proposal the user saw: it is refused, not applied to the newer one the
// user has not seen yet, which is then shown and answered on its own.
func TestAnAnswerToAReplacedProposalIsRefused(t *testing.T) {
	ws := t.TempDir()
	path := filepath.Join(ws, "notes.txt")
	if err := os.WriteFile(path, []byte("one\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	in, typed := io.Pipe()
	out := &output{}
	rv := review.New(review.Options{In: in, Out: out})
	ed := &slowSecond{Reviewer: rv, held: make(chan struct{}), release: make(chan struct{})}
	c := companion.New(companion.Options{DiscoveryDir: t.TempDir(), Logger: zerolog.Nop()})
	c.SetEditor(ed)
	info, err := c.Start(context.Background(), companion.Identity{
		IDE: discovery.IDEInfo{Name: "test", DisplayName: "Test"}, Workspace: []string{ws}, IDEPID: os.Getpid()})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	ran := make(chan struct{})
	go func() { defer close(ran); _ = rv.Run(ctx, c.Proposals()) }()
	t.Cleanup(func() {
		cancel()
		typed.Close()
		<-ran
		_ = c.Close()
	})
	cli := testkit.ConnectCLI(t, info.Port, info.AuthToken)
	t.Cleanup(ed.let) // before the CLI's session closes: it waits for its calls

	cli.MustOpenDiff(t, path, "first proposal\n")
	at := out.waitAfter(t, 0, "+first proposal")
	at = out.waitAfter(t, at, "Accept [a]")

	// The CLI proposes again; the terminal has not heard of it yet when
	// the user accepts what is on screen.
	second := make(chan error, 1)
	go func() {
		res, err := cli.OpenDiff(context.Background(), path, "second proposal\n")
		if err == nil && res.IsError {
			err = io.ErrUnexpectedEOF
		}
		second <- err
	}()
	select {
	case <-ed.held:
	case <-time.After(20 * time.Second):
		t.Fatal("the second proposal never reached the editor")
	}
	io.WriteString(typed, "a\n")
	at = out.waitAfter(t, at, "your answer was not sent")

	ed.let()
	if err := <-second; err != nil {
		t.Fatalf("second openDiff: %v", err)
	}
	at = out.waitAfter(t, at, "+second proposal")
	out.waitAfter(t, at, "Accept [a]")
	io.WriteString(typed, "r\n")

	// The CLI hears one decision, on the proposal it is waiting for: the
	// rejection the user gave it, not the accept meant for the first.
	first, _ := cli.WaitFrom(t, 0, "ide/diffRejected", 20*time.Second, nil)
	if got := cli.All("ide/diffAccepted"); len(got) != 0 {
		var p struct{ Content string }
		_ = json.Unmarshal(got[0].Params, &p)
		t.Fatalf("the CLI was told its proposal was accepted, with %q: the answer to the replaced proposal reached the newer one", p.Content)
	}
	if p, _ := testkit.DiffNote(t, first.Params); p != path {
		t.Fatalf("rejection for %q, want %q", p, path)
	}
}
