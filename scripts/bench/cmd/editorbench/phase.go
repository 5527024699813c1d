//go:build linux

package main

import (
	"fmt"
	"strings"
	"time"
)

// A phase is one run of typed keys: count cursor moves (in a selection, if
// Select) one every Pace.
type phase struct {
	Name   string
	Count  int
	Pace   time.Duration
	Select bool
}

// swing is how many lines the cursor goes down before it comes back up:
// the moves stay on one screen, so that redrawing costs the same on every
// move and the figures are the plugin's rather than scrolling's.
const swing = 19

// A phaseResult is what one session measured in one phase.
type phaseResult struct {
	CPU      time.Duration // the editor's CPU time from the first key to the end of the settle time
	Moving   time.Duration // first key to last key
	Lag      time.Duration // last key typed to the editor having taken it (the sentinel counted)
	Late     time.Duration // the most a key was typed after its time (the driver's own pacing)
	Messages []record      // what the editor sent the sidecar from the first key on
	Received []record      // what the sidecar sent the editor from the first key on
	Final    time.Duration // last key typed to the message carrying the final state read off the pipe (plugin only)
	Expected record        // the final state
}

// keys returns the keys of phase p for ed and the line the cursor ends on.
func (p phase) keys(ed *editor) ([]string, int) {
	keys := make([]string, 0, p.Count+1)
	if p.Select {
		keys = append(keys, ed.SelectStart)
	}
	line := 1
	for i := 0; i < p.Count; i++ {
		if (i/swing)%2 == 0 {
			keys = append(keys, ed.Down)
			line++
		} else {
			keys = append(keys, ed.Up)
			line--
		}
	}
	return keys, line
}

// run types p's keys into s at p's pace and measures.
func (s *session) run(p phase, settle time.Duration) (phaseResult, error) {
	if err := s.reset(settle); err != nil {
		return phaseResult{}, err
	}
	keys, line := p.keys(s.ed)
	res := phaseResult{Expected: record{Line: line, Char: 1, Selected: -1}}
	if p.Select {
		res.Expected.SelectedLines = line
	}
	mark := s.mark()
	cpu0, err := s.cpu()
	if err != nil {
		return res, err
	}
	start := time.Now()
	for i, k := range keys {
		at := start.Add(time.Duration(i) * p.Pace)
		if d := time.Until(at); d > 0 {
			time.Sleep(d)
		} else if -d > res.Late {
			res.Late = -d
		}
		if err := s.term.Type(k); err != nil {
			return res, fmt.Errorf("%s: type: %w", s, err)
		}
	}
	last := time.Now()
	res.Moving = last.Sub(start)
	if err := s.sync(time.Minute); err != nil {
		return res, err
	}
	caught := time.Now()
	res.Lag = caught.Sub(last)
	want := res.Expected
	matches := func(r record) bool {
		return r.Line == want.Line && r.SelectedLines == want.SelectedLines
	}
	if s.plugin {
		deadline := time.Now().Add(10 * time.Second)
		for {
			ctx := contextMessages(s.since(mark))
			if len(ctx) > 0 && matches(ctx[len(ctx)-1]) {
				break
			}
			if time.Now().After(deadline) {
				return res, fmt.Errorf("%s, %s: the final state (line %d, %d selected lines) never reached the sidecar; last messages: %+v",
					s, p.Name, want.Line, want.SelectedLines, tail(ctx, 3))
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
	time.Sleep(time.Until(caught.Add(settle)))
	cpu1, err := s.cpu()
	if err != nil {
		return res, err
	}
	res.CPU = cpu1 - cpu0
	for _, r := range s.since(mark) {
		if r.FromSidecar {
			res.Received = append(res.Received, r)
		} else {
			res.Messages = append(res.Messages, r)
		}
	}
	if s.plugin {
		// What the CLI would see last must be the final state, not an older
		// one sent after it. The final state reached the sidecar with the
		// first message of the run of messages that carry it at the end.
		ctx := contextMessages(res.Messages)
		if len(ctx) == 0 || !matches(ctx[len(ctx)-1]) {
			return res, fmt.Errorf("%s, %s: the last context messages are %+v, not line %d with %d selected lines",
				s, p.Name, tail(ctx, 3), want.Line, want.SelectedLines)
		}
		i := len(ctx) - 1
		for i > 0 && matches(ctx[i-1]) {
			i--
		}
		res.Final = max(0, time.Unix(0, ctx[i].At).Sub(last))
	}
	return res, nil
}

// contextMessages keeps the context/* messages of rs.
func contextMessages(rs []record) []record {
	var out []record
	for _, r := range rs {
		if !r.FromSidecar && strings.HasPrefix(r.Method, "context/") {
			out = append(out, r)
		}
	}
	return out
}

func tail(rs []record, n int) []record {
	if len(rs) > n {
		return rs[len(rs)-n:]
	}
	return rs
}

// maxInWindow is the largest number of messages of rs within any window of
// length w, and the shortest gap between two of them.
func maxInWindow(rs []record, w time.Duration) (int, time.Duration) {
	most, gap := 0, time.Duration(-1)
	j := 0
	for i := range rs {
		for rs[i].At-rs[j].At >= int64(w) {
			j++
		}
		if n := i - j + 1; n > most {
			most = n
		}
		if i > 0 {
			if g := time.Duration(rs[i].At - rs[i-1].At); gap < 0 || g < gap {
				gap = g
			}
		}
	}
	return most, gap
}
