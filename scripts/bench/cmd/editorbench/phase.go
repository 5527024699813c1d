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

// checkFinal makes a run fail when the final state does not reach the
// sidecar (--check).
var checkFinal = true

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
	GCs      int           // garbage collections in the editor (Emacs)
	GCTime   time.Duration // their time
	Alloc    float64       // bytes allocated (Emacs)
	Sidecar  time.Duration // the sidecar's CPU time over the same span (plugin only)
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

// runTogether types p's keys into every session at once, key by key at
// p's pace, so that the editors with and without the plugin go through
// the same moments of a shared machine, and measures each.
func runTogether(p phase, sessions []*session, settle time.Duration) ([]phaseResult, error) {
	n := len(sessions)
	res := make([]phaseResult, n)
	marks := make([]int, n)
	cpu0 := make([]time.Duration, n)
	side0 := make([]time.Duration, n)
	var keys [][]string
	line := 0
	for i, s := range sessions {
		if err := s.reset(settle); err != nil {
			return nil, err
		}
		var k []string
		k, line = p.keys(s.ed)
		keys = append(keys, k)
		res[i].Expected = record{Line: line, Char: 1, Selected: -1}
		if p.Select {
			res[i].Expected.SelectedLines = line
		}
	}
	gc0 := make([]gcCount, n)
	for i, s := range sessions {
		marks[i] = s.mark()
		var err error
		if gc0[i], err = s.gc(); err != nil {
			return nil, err
		}
		c, err := s.cpu()
		if err != nil {
			return nil, err
		}
		cpu0[i] = c
		side0[i] = s.sidecarCPU()
	}
	start := time.Now()
	var late time.Duration
	for k := range keys[0] {
		at := start.Add(time.Duration(k) * p.Pace)
		if d := time.Until(at); d > 0 {
			time.Sleep(d)
		} else if -d > late {
			late = -d
		}
		// Neither editor always gets the key first.
		for j := range sessions {
			i := (j + k) % n
			if err := sessions[i].term.Type(keys[i][k]); err != nil {
				return nil, fmt.Errorf("%s: type: %w", sessions[i], err)
			}
		}
	}
	last := time.Now()
	caught := make([]time.Time, n)
	for i, s := range sessions {
		res[i].Late = late
		res[i].Moving = last.Sub(start)
		if err := s.sync(time.Minute); err != nil {
			return nil, err
		}
		caught[i] = time.Now()
		res[i].Lag = caught[i].Sub(last)
	}
	for i, s := range sessions {
		if err := s.finish(p, &res[i], marks[i], last, caught[i], cpu0[i], settle); err != nil {
			return nil, err
		}
		res[i].Sidecar = s.sidecarCPU() - side0[i]
		gc1, err := s.gc()
		if err != nil {
			return nil, err
		}
		res[i].GCs = gc1.N - gc0[i].N
		res[i].GCTime = gc1.T - gc0[i].T
		res[i].Alloc = gc1.Bytes - gc0[i].Bytes
	}
	return res, nil
}

type gcCount struct {
	N     int
	T     time.Duration
	Bytes float64
}

// gc reads the editor's garbage collection count and time, where it says.
func (s *session) gc() (gcCount, error) {
	if s.ed.GC == "" {
		return gcCount{}, nil
	}
	var v []float64
	if err := s.ctl.Eval(s.ed.GC, &v); err != nil || len(v) != 3 {
		return gcCount{}, fmt.Errorf("%s: garbage collector figures: %v %v", s, v, err)
	}
	return gcCount{N: int(v[0]), T: time.Duration(v[1] * float64(time.Second)), Bytes: v[2]}, nil
}

// finish waits for the final state to reach the sidecar (with the plugin)
// and for the settle time, then reads the CPU time and the messages.
func (s *session) finish(p phase, res *phaseResult, mark int, last, caught time.Time, cpu0, settle time.Duration) error {
	want := res.Expected
	matches := func(r record) bool {
		return r.Line == want.Line && r.SelectedLines == want.SelectedLines
	}
	if s.plugin && checkFinal {
		deadline := time.Now().Add(10 * time.Second)
		for {
			ctx := contextMessages(s.since(mark))
			if len(ctx) > 0 && matches(ctx[len(ctx)-1]) {
				break
			}
			if time.Now().After(deadline) {
				return fmt.Errorf("%s, %s: the final state (line %d, %d selected lines) never reached the sidecar; last messages: %+v",
					s, p.Name, want.Line, want.SelectedLines, tail(ctx, 3))
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
	time.Sleep(time.Until(caught.Add(settle)))
	cpu1, err := s.cpu()
	if err != nil {
		return err
	}
	res.CPU = cpu1 - cpu0
	for _, r := range s.since(mark) {
		if r.FromSidecar {
			res.Received = append(res.Received, r)
		} else {
			res.Messages = append(res.Messages, r)
		}
	}
	if s.plugin && checkFinal {
		// What the CLI would see last must be the final state, not an older
		// one sent after it. The final state reached the sidecar with the
		// first message of the run of messages that carry it at the end.
		ctx := contextMessages(res.Messages)
		if len(ctx) == 0 || !matches(ctx[len(ctx)-1]) {
			return fmt.Errorf("%s, %s: the last context messages are %+v, not line %d with %d selected lines",
				s, p.Name, tail(ctx, 3), want.Line, want.SelectedLines)
		}
		i := len(ctx) - 1
		for i > 0 && matches(ctx[i-1]) {
			i--
		}
		res.Final = max(0, time.Unix(0, ctx[i].At).Sub(last))
	}
	return nil
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
