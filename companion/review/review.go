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

	"github.com/gemini-ide-companion/gemini-ide-companion/companion"
)

// Decider receives the user's decisions (a *companion.Server).
type Decider interface {
	Accept(path, content string) bool
	Reject(path string) bool
}

// Reviewer implements companion.Editor and companion.Announcer in a terminal.
type Reviewer struct {
	in     *bufio.Reader
	out    io.Writer
	color  bool
	editor func(path string) *exec.Cmd

	mu      sync.Mutex
	queue   []companion.DiffRequest
	current string // path being asked about, "" if none
	wake    chan struct{}
}

// Options configures a Reviewer.
type Options struct {
	In    io.Reader
	Out   io.Writer
	Color bool
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
		editor: opts.EditCommand,
		wake:   make(chan struct{}, 1),
	}
	if r.editor == nil {
		r.editor = defaultEditor
	}
	return r
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

// OpenDiff implements companion.Editor: the diff joins the queue and is
// shown when the user is free to answer.
func (r *Reviewer) OpenDiff(ctx context.Context, req companion.DiffRequest) error {
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
	select {
	case r.wake <- struct{}{}:
	default:
	}
	return nil
}

// CloseDiff implements companion.Editor: the CLI took the decision itself.
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
			return &content, nil
		}
	}
	return nil, nil
}

// Announce implements companion.Announcer.
func (r *Reviewer) Announce(n companion.Notice) {
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
func (r *Reviewer) Run(ctx context.Context, d Decider) error {
	for {
		req, ok := r.nextDiff()
		if !ok {
			select {
			case <-ctx.Done():
				return nil
			case <-r.wake:
				continue
			}
		}
		if err := r.ask(req, d); err != nil {
			return err
		}
	}
}

func (r *Reviewer) nextDiff() (companion.DiffRequest, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.queue) == 0 {
		return companion.DiffRequest{}, false
	}
	r.current = r.queue[0].FilePath
	return r.queue[0], true
}

// take removes the diff for path from the queue and returns it.
func (r *Reviewer) take(path string) (companion.DiffRequest, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.current = ""
	for i, q := range r.queue {
		if q.FilePath == path {
			r.queue = append(r.queue[:i], r.queue[i+1:]...)
			return q, true
		}
	}
	return companion.DiffRequest{}, false
}

func (r *Reviewer) show(req companion.DiffRequest) {
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

func (r *Reviewer) ask(req companion.DiffRequest, d Decider) error {
	r.show(req)
	for {
		fmt.Fprintf(r.out, "%s ", r.paint(bold, "Accept [a], reject [r], or edit then accept [e]?"))
		line, err := r.in.ReadString('\n')
		if err != nil && line == "" {
			return fmt.Errorf("read answer: %w", err)
		}
		answer := strings.ToLower(strings.TrimSpace(line))
		// The diff may have been answered in the CLI, or replaced, while we
		// waited for the user.
		cur, ok := r.peek(req.FilePath)
		if !ok {
			fmt.Fprintln(r.out, "That diff is no longer open.")
			return nil
		}
		if cur.NewContent != req.NewContent {
			fmt.Fprintln(r.out, "Gemini CLI replaced that proposal; here is the new one.")
			return nil
		}
		switch answer {
		case "a", "y", "yes", "accept":
			r.take(req.FilePath)
			d.Accept(req.FilePath, req.NewContent)
			fmt.Fprintln(r.out, r.paint(green, "Accepted: Gemini CLI writes the file."))
			return nil
		case "r", "n", "no", "reject":
			r.take(req.FilePath)
			d.Reject(req.FilePath)
			fmt.Fprintln(r.out, r.paint(red, "Rejected."))
			return nil
		case "e", "edit":
			content, err := r.edit(req)
			if err != nil {
				fmt.Fprintf(r.out, "Could not edit: %v\n", err)
				continue
			}
			if _, ok := r.take(req.FilePath); !ok {
				fmt.Fprintln(r.out, "That diff was closed while you edited it.")
				return nil
			}
			d.Accept(req.FilePath, content)
			fmt.Fprintln(r.out, r.paint(green, "Accepted with your edits: Gemini CLI writes the file."))
			return nil
		default:
			fmt.Fprintln(r.out, "Please answer a, r or e.")
		}
	}
}

func (r *Reviewer) peek(path string) (companion.DiffRequest, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, q := range r.queue {
		if q.FilePath == path {
			return q, true
		}
	}
	return companion.DiffRequest{}, false
}

// edit lets the user change the proposal in their editor and returns it.
func (r *Reviewer) edit(req companion.DiffRequest) (string, error) {
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
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("run editor: %w", err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("read edited proposal: %w", err)
	}
	return string(data), nil
}
