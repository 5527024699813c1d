// Package review is the standalone companion's editor: it shows each diff
// Gemini CLI proposes in the terminal, as a coloured unified diff, and asks
// the user to accept it, reject it, or edit it in $EDITOR and accept.
package review

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"

	"github.com/gemini-ide-companion/gemini-ide-companion/companion/proposals"
	"github.com/gemini-ide-companion/gemini-ide-companion/link/protocol"
)

// Decider receives the user's decisions (the companion's proposals).
type Decider interface {
	Decide(proposals.Decision) proposals.Verdict
}

// Reviewer implements proposals.Editor and companion.Announcer in a
// terminal.
type Reviewer struct {
	in     *bufio.Reader
	out    io.Writer
	color  bool
	keys   bool
	cooked func() (resume func())
	editor func(path string) *exec.Cmd

	mu      sync.Mutex
	queue   []protocol.DiffOpenParams
	current string // path being asked about, "" if none
	wake    chan struct{}

	// The reader goroutine reads one answer each time want is signalled and
	// delivers it on got, so that nothing is read while $EDITOR owns the
	// terminal.
	want    chan struct{}
	got     chan answer
	pending bool
	inErr   error
}

type answer struct {
	text string
	err  error
}

// Options configures a Reviewer.
type Options struct {
	In    io.Reader
	Out   io.Writer
	Color bool
	// Keys means In delivers single key presses (a terminal in cbreak
	// mode): each answer is one key, without Enter. Otherwise answers are
	// lines.
	Keys bool
	// Cooked, when set, puts the terminal back into line mode for $EDITOR
	// and returns the function that restores key mode afterwards.
	Cooked func() (resume func())
	// EditCommand returns the command that edits path; nil means $VISUAL,
	// then $EDITOR, then vi, attached to the process's terminal.
	EditCommand func(path string) *exec.Cmd
}

// New returns a Reviewer reading answers from opts.In.
func New(opts Options) *Reviewer {
	r := &Reviewer{
		in:     bufio.NewReader(opts.In),
		out:    opts.Out,
		color:  opts.Color,
		keys:   opts.Keys,
		cooked: opts.Cooked,
		editor: opts.EditCommand,
		wake:   make(chan struct{}, 1),
		want:   make(chan struct{}, 1),
		got:    make(chan answer, 1),
	}
	if r.editor == nil {
		r.editor = defaultEditor
	}
	return r
}

// HowToAnswer says how decisions are taken, for the banner.
func (r *Reviewer) HowToAnswer() string {
	if r.keys {
		return "Answer each proposed edit here with one key: a accept, r reject, e edit then accept."
	}
	return "Input is not a terminal: answers are read as lines (a, r or e, then Enter) from it; proposals can always be answered in Gemini CLI."
}

func defaultEditor(path string) *exec.Cmd {
	ed := os.Getenv("VISUAL")
	if ed == "" {
		ed = os.Getenv("EDITOR")
	}
	if ed == "" {
		ed = "vi"
	}
	// The variable may hold arguments ("code --wait"); let the shell split.
	cmd := exec.Command("sh", "-c", ed+` "$1"`, "sh", path)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	return cmd
}

// OpenDiff implements proposals.Editor: the diff joins the queue and is
// shown when the user is free to answer.
func (r *Reviewer) OpenDiff(ctx context.Context, req protocol.DiffOpenParams) error {
	r.mu.Lock()
	replaced := false
	for i, q := range r.queue {
		if q.FilePath == req.FilePath {
			r.queue[i] = req
			replaced = true
		}
	}
	if !replaced {
		r.queue = append(r.queue, req)
	}
	r.mu.Unlock()
	r.poke()
	return nil
}

// poke tells Run that the queue changed.
func (r *Reviewer) poke() {
	select {
	case r.wake <- struct{}{}:
	default:
	}
}

// CloseDiff implements proposals.Editor: the CLI took the decision itself.
func (r *Reviewer) CloseDiff(ctx context.Context, path string) (*string, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for i, q := range r.queue {
		if q.FilePath == path {
			r.queue = append(r.queue[:i], r.queue[i+1:]...)
			content := q.NewContent
			fmt.Fprintf(r.out, "\n%s was answered in Gemini CLI; nothing to do here.\n", path)
			if r.current == path {
				r.current = ""
			}
			r.poke()
			return &content, nil
		}
	}
	return nil, nil
}

// Announce implements companion.Announcer.
func (r *Reviewer) Announce(n protocol.LogParams) {
	fmt.Fprintf(r.out, "%s\n", r.paint(dim, "· "+n.Message))
}

// ClientsChanged implements companion.Announcer.
func (r *Reviewer) ClientsChanged(connected int) {
	fmt.Fprintf(r.out, "%s\n", r.paint(dim, fmt.Sprintf("· %d Gemini CLI session(s) connected", connected)))
}

const (
	red   = "31"
	green = "32"
	cyan  = "36"
	bold  = "1"
	dim   = "2"
)

func (r *Reviewer) paint(code, s string) string {
	if !r.color {
		return s
	}
	return "\x1b[" + code + "m" + s + "\x1b[0m"
}

// Run asks about queued diffs, one at a time, until ctx ends or input ends.
// A diff answered in Gemini CLI while it is asked about is dropped at once
// and the next one is shown without waiting for a key.
func (r *Reviewer) Run(ctx context.Context, d Decider) error {
	go r.readLoop(ctx)
	for {
		req, ok := r.nextDiff()
		if !ok {
			// Keep reading while idle, so that a key pressed now is not
			// taken later as the answer to a diff the user has not seen.
			r.arm()
			select {
			case <-ctx.Done():
				return nil
			case <-r.wake:
				continue
			case a := <-r.got:
				r.pending = false
				if a.err != nil {
					r.inErr = fmt.Errorf("read answer: %w", a.err)
					return r.inErr
				}
				if a.text != "" {
					fmt.Fprintln(r.out, r.paint(dim, "· No proposed edit is waiting for an answer."))
				}
				continue
			}
		}
		if err := r.ask(ctx, req, d); err != nil {
			return err
		}
		if ctx.Err() != nil {
			return nil
		}
	}
}

// readLoop reads one answer per request. It ends with ctx or at the end of
// input; a read already under way ends when the input does.
func (r *Reviewer) readLoop(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-r.want:
		}
		text, err := r.readAnswer()
		r.got <- answer{text, err}
		if err != nil {
			return
		}
	}
}

// readAnswer returns one key (key mode) or one line.
func (r *Reviewer) readAnswer() (string, error) {
	if !r.keys {
		line, err := r.in.ReadString('\n')
		if err != nil && line == "" {
			return "", err
		}
		return strings.ToLower(strings.TrimSpace(line)), nil
	}
	for {
		c, _, err := r.in.ReadRune()
		if err != nil {
			return "", err
		}
		switch c {
		case '\r', '\n', ' ', '\t':
			continue
		case 4: // Ctrl-D: the terminal does not turn it into end of input in cbreak mode
			return "", io.EOF
		}
		return strings.ToLower(string(c)), nil
	}
}

// arm asks the reader for the next answer unless a read is under way.
func (r *Reviewer) arm() {
	if !r.pending {
		r.pending = true
		r.want <- struct{}{}
	}
}

// nextAnswer waits for the user's answer, or returns ok=false when the
// queue changed first (the caller checks whether its diff is still open).
func (r *Reviewer) nextAnswer(ctx context.Context) (text string, ok bool, err error) {
	if r.inErr != nil {
		return "", false, r.inErr
	}
	r.arm()
	select {
	case <-ctx.Done():
		return "", false, nil
	case <-r.wake:
		return "", false, nil
	case a := <-r.got:
		r.pending = false
		if a.err != nil {
			r.inErr = fmt.Errorf("read answer: %w", a.err)
			return "", false, r.inErr
		}
		return a.text, true, nil
	}
}

func (r *Reviewer) nextDiff() (protocol.DiffOpenParams, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.queue) == 0 {
		return protocol.DiffOpenParams{}, false
	}
	r.current = r.queue[0].FilePath
	return r.queue[0], true
}

// take removes the proposal req from the queue, if it is still there.
func (r *Reviewer) take(req protocol.DiffOpenParams) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.current = ""
	for i, q := range r.queue {
		if same(q, req) {
			r.queue = append(r.queue[:i], r.queue[i+1:]...)
			return
		}
	}
}

// same reports whether a and b are the same proposal.
func same(a, b protocol.DiffOpenParams) bool {
	return a.FilePath == b.FilePath && a.DiffID == b.DiffID && a.NewContent == b.NewContent
}

func (r *Reviewer) show(req protocol.DiffOpenParams) {
	fmt.Fprintf(r.out, "\n%s\n", r.paint(bold, "Gemini CLI proposes a change to "+req.FilePath))
	text := req.UnifiedDiff
	if text == "" {
		text = "(no changes)\n"
	}
	for _, line := range strings.SplitAfter(text, "\n") {
		if line == "" {
			continue
		}
		switch {
		case strings.HasPrefix(line, "+++"), strings.HasPrefix(line, "---"):
			line = r.paint(bold, strings.TrimSuffix(line, "\n")) + "\n"
		case strings.HasPrefix(line, "@@"):
			line = r.paint(cyan, strings.TrimSuffix(line, "\n")) + "\n"
		case strings.HasPrefix(line, "+"):
			line = r.paint(green, strings.TrimSuffix(line, "\n")) + "\n"
		case strings.HasPrefix(line, "-"):
			line = r.paint(red, strings.TrimSuffix(line, "\n")) + "\n"
		}
		io.WriteString(r.out, line)
	}
}

func (r *Reviewer) prompt() {
	fmt.Fprintf(r.out, "%s %s ", r.paint(bold, "Accept [a], reject [r], or edit then accept [e]?"), r.paint(dim, r.hint()))
}

// hint says how to answer.
func (r *Reviewer) hint() string {
	if r.keys {
		return "(one key)"
	}
	return "(type a letter, then Enter)"
}

func (r *Reviewer) ask(ctx context.Context, req protocol.DiffOpenParams, d Decider) error {
	r.show(req)
	r.prompt()
	for {
		answer, open, err := r.answer(ctx, req)
		if err != nil || !open {
			return err
		}
		var decided bool
		switch answer {
		case "a", "y", "yes", "accept":
			decided, err = r.decide(ctx, req, d, true, req.NewContent, "Accepted: Gemini CLI writes the file.")
		case "r", "n", "no", "reject":
			decided, err = r.decide(ctx, req, d, false, "", "Rejected.")
		case "e", "edit":
			content, eerr := r.edit(req)
			if eerr != nil {
				fmt.Fprintf(r.out, "Could not edit: %v\n", eerr)
				break
			}
			if cur, ok := r.peek(req.FilePath); !ok || !same(cur, req) {
				fmt.Fprintln(r.out, "That diff was closed while you edited it.")
				return nil
			}
			decided, err = r.decide(ctx, req, d, true, content, "Accepted with your edits: Gemini CLI writes the file.")
		default:
			fmt.Fprintln(r.out, "Please answer a, r or e.")
		}
		if err != nil || decided {
			return err
		}
		r.prompt()
	}
}

// answer waits for the user's answer about req. open is false when there
// is none to take: ctx ended, or req is no longer the proposal to answer
// (answered in Gemini CLI, or replaced by a newer one, which is shown
// next).
func (r *Reviewer) answer(ctx context.Context, req protocol.DiffOpenParams) (text string, open bool, err error) {
	for {
		text, ok, err := r.nextAnswer(ctx)
		if err != nil {
			return "", false, err
		}
		if ctx.Err() != nil {
			return "", false, nil
		}
		// The diff may have been answered in the CLI, or replaced, while we
		// waited for the user.
		cur, found := r.peek(req.FilePath)
		if !found {
			if ok {
				fmt.Fprintln(r.out, "That diff is no longer open.")
			}
			return "", false, nil
		}
		if !same(cur, req) {
			fmt.Fprintln(r.out, "\nGemini CLI replaced that proposal; here is the new one.")
			return "", false, nil
		}
		if !ok {
			continue // another file's diff was queued; keep asking about this one
		}
		if r.keys {
			fmt.Fprintln(r.out, text)
		}
		return text, true, nil
	}
}

// decide sends the user's answer on req, by its diff id, as the editors
// do, and says what became of it. An accept over a change on disk is asked
// once more (the reason was told just before, through Announce). decided
// is false when the user is to be asked again about req.
func (r *Reviewer) decide(ctx context.Context, req protocol.DiffOpenParams, d Decider, accepted bool, content, done string) (decided bool, err error) {
	dc := proposals.Decision{FilePath: req.FilePath, DiffID: req.DiffID, Accepted: accepted, Content: content}
	v := d.Decide(dc)
	if v == proposals.NeedsConfirmation {
		fmt.Fprintf(r.out, "%s %s ", r.paint(bold, "Accept anyway, over the file on disk? [y] yes, [n] no"), r.paint(dim, r.hint()))
		answer, open, err := r.answer(ctx, req)
		if err != nil || !open {
			return true, err
		}
		if answer != "y" && answer != "yes" {
			fmt.Fprintln(r.out, "Not accepted; the proposal is still open.")
			return false, nil
		}
		dc.OverDiskChange = true
		v = d.Decide(dc)
	}
	r.take(req)
	if v == proposals.Refused {
		fmt.Fprintln(r.out, "That proposal is no longer open (Gemini CLI replaced or closed it); your answer was not sent.")
		return true, nil
	}
	color := green
	if !accepted {
		color = red
	}
	fmt.Fprintln(r.out, r.paint(color, done))
	return true, nil
}

func (r *Reviewer) peek(path string) (protocol.DiffOpenParams, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, q := range r.queue {
		if q.FilePath == path {
			return q, true
		}
	}
	return protocol.DiffOpenParams{}, false
}

// edit lets the user change the proposal in their editor and returns it.
func (r *Reviewer) edit(req protocol.DiffOpenParams) (string, error) {
	dir, err := os.MkdirTemp("", "gemini-proposal-")
	if err != nil {
		return "", fmt.Errorf("make temporary folder: %w", err)
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, filepath.Base(req.FilePath))
	if err := os.WriteFile(path, []byte(req.NewContent), 0o600); err != nil {
		return "", fmt.Errorf("write proposal: %w", err)
	}
	cmd := r.editor(path)
	if r.cooked != nil {
		resume := r.cooked()
		defer resume()
	}
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("run editor: %w", err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("read edited proposal: %w", err)
	}
	return string(data), nil
}
