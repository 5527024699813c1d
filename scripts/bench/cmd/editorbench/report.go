//go:build linux

package main

import (
	"fmt"
	"io"
	"math"
	"runtime"
	"slices"
	"strings"
	"time"
)

type report struct {
	Label   string
	Rounds  int
	Started time.Time
	Sidecar string
	Phases  []phase
	Editors []editorResult
}

type editorResult struct {
	Editor  string
	Version string
	Phases  []phaseSummary
}

// A phaseSummary holds one figure per round for one phase of one editor.
type phaseSummary struct {
	Phase string
	Count int
	Pace  time.Duration
	// CPU time of the editor per event (µs): without and with the plugin,
	// and the difference (same round).
	Without, With, Added []float64
	// Messages the editor sent the sidecar during the phase (all methods),
	// and how many were context/*.
	Messages, Context []float64
	// Messages the sidecar sent the editor during the phase.
	Received []float64
	// The sidecar's CPU time per event (µs) while the editor with the
	// plugin went through the phase.
	SidecarCPU []float64
	// The most context messages within any debounce interval (50 ms), the
	// shortest gap between two (ms), and context messages per debounce
	// interval of moving on average.
	MostPerInterval, MinGapMS, PerInterval []float64
	// Last key typed → the final state read off the pipe (ms).
	FinalMS []float64
	// Last key typed → the editor had taken every key (ms), with and
	// without the plugin; and the most the driver typed a key late.
	LagWithMS, LagWithoutMS, LateMS []float64
	// Garbage collector time per event (µs) and collections, with and
	// without the plugin (Emacs only).
	GCWith, GCWithout, GCsWith, GCsWithout []float64
	// Bytes allocated per event, with and without the plugin (Emacs only).
	AllocWith, AllocWithout []float64
}

func usPer(d time.Duration, n int) float64 {
	return float64(d) / float64(time.Microsecond) / float64(n)
}

func msOf(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

func (ps *phaseSummary) add(p phase, with, without phaseResult) {
	n := p.Count
	ps.Without = append(ps.Without, usPer(without.CPU, n))
	ps.With = append(ps.With, usPer(with.CPU, n))
	ps.Added = append(ps.Added, usPer(with.CPU-without.CPU, n))
	ctx := contextMessages(with.Messages)
	ps.Messages = append(ps.Messages, float64(len(with.Messages)))
	ps.Context = append(ps.Context, float64(len(ctx)))
	ps.Received = append(ps.Received, float64(len(with.Received)))
	ps.SidecarCPU = append(ps.SidecarCPU, usPer(with.Sidecar, n))
	most, gap := maxInWindow(ctx, debounce)
	ps.MostPerInterval = append(ps.MostPerInterval, float64(most))
	if gap >= 0 {
		ps.MinGapMS = append(ps.MinGapMS, msOf(gap))
	}
	if with.Moving > 0 {
		ps.PerInterval = append(ps.PerInterval, float64(len(ctx))/(float64(with.Moving+debounce)/float64(debounce)))
	}
	ps.FinalMS = append(ps.FinalMS, msOf(with.Final))
	ps.LagWithMS = append(ps.LagWithMS, msOf(with.Lag))
	ps.LagWithoutMS = append(ps.LagWithoutMS, msOf(without.Lag))
	ps.LateMS = append(ps.LateMS, msOf(max(with.Late, without.Late)))
	ps.GCWith = append(ps.GCWith, usPer(with.GCTime, n))
	ps.GCWithout = append(ps.GCWithout, usPer(without.GCTime, n))
	ps.GCsWith = append(ps.GCsWith, float64(with.GCs))
	ps.GCsWithout = append(ps.GCsWithout, float64(without.GCs))
	ps.AllocWith = append(ps.AllocWith, with.Alloc/float64(n))
	ps.AllocWithout = append(ps.AllocWithout, without.Alloc/float64(n))
}

func quantile(xs []float64, q float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	pos := q * float64(len(s)-1)
	lo, hi := int(math.Floor(pos)), int(math.Ceil(pos))
	return s[lo] + (s[hi]-s[lo])*(pos-float64(lo))
}

// num formats x with about three significant digits.
func num(x float64) string {
	switch a := math.Abs(x); {
	case math.IsNaN(x):
		return "–"
	case a == 0:
		return "0"
	case a >= 100:
		return fmt.Sprintf("%.0f", x)
	case a >= 10:
		return fmt.Sprintf("%.1f", x)
	default:
		return fmt.Sprintf("%.2f", x)
	}
}

// cell is "median [min–max]", or the median alone for one round.
func cell(xs []float64) string {
	if len(xs) == 0 {
		return "–"
	}
	m := num(quantile(xs, 0.5))
	if len(xs) == 1 {
		return m
	}
	return fmt.Sprintf("%s [%s–%s]", m, num(slices.Min(xs)), num(slices.Max(xs)))
}

func paceText(d time.Duration) string {
	return fmt.Sprintf("%s ms", num(msOf(d)))
}

func (r report) print(w io.Writer) {
	title := "Editor plugins while the cursor moves"
	if r.Label != "" {
		title += ": " + r.Label
	}
	fmt.Fprintf(w, "\n## %s\n\n", title)
	fmt.Fprintf(w, "%d round(s), %s, %s/%s, %d CPUs; sidecar %s.\n", r.Rounds, r.Started.Format("2006-01-02 15:04"), runtime.GOOS, runtime.GOARCH, runtime.NumCPU(), r.Sidecar)
	for _, e := range r.Editors {
		fmt.Fprintf(w, "%s: %s.\n", e.Editor, e.Version)
	}
	fmt.Fprintf(w, "\nCPU time of the editor per event (µs), without and with the plugin and the difference (same round); messages the editor wrote to the sidecar (all methods); context messages per 50 ms (the sidecar's debounce) from the first key to 50 ms after the last; the shortest time between two of them and from the last key to the final state, both as read off the pipe; the sidecar's CPU time per event. Median over the rounds [range].\n\n")
	fmt.Fprintln(w, "| editor | events | one every | without plugin µs/event | with plugin µs/event | added µs/event | messages sent | per 50 ms | shortest gap ms | last key → final state ms | sidecar µs/event |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|---|---|---|---|")
	for _, e := range r.Editors {
		for _, p := range e.Phases {
			fmt.Fprintf(w, "| %s | %d %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n",
				e.Editor, p.Count, p.Phase, paceText(p.Pace), cell(p.Without), cell(p.With), cell(p.Added),
				cell(p.Messages), cell(p.PerInterval), cell(p.MinGapMS), cell(p.FinalMS), cell(p.SidecarCPU))
		}
	}
	for _, e := range r.Editors {
		for _, p := range e.Phases {
			if slices.Max(p.Received) > 0 {
				fmt.Fprintf(w, "\n%s, %s: the sidecar sent the editor %s messages.", e.Editor, p.Phase, cell(p.Received))
			}
		}
	}
	header := false
	for _, e := range r.Editors {
		for _, p := range e.Phases {
			if slices.Max(p.AllocWith) == 0 {
				continue
			}
			if !header {
				fmt.Fprintf(w, "\n\nGarbage collection (the editors that report it): bytes allocated per event, the collector's time per event (µs, wall clock) and collections, without and with the plugin.\n\n")
				fmt.Fprintln(w, "| editor | events | allocated without plugin B/event | with plugin B/event | collector without µs/event | with µs/event | collections without | with |")
				fmt.Fprintln(w, "|---|---|---|---|---|---|---|---|")
				header = true
			}
			fmt.Fprintf(w, "| %s | %d %s | %s | %s | %s | %s | %s | %s |\n", e.Editor, p.Count, p.Phase,
				cell(p.AllocWithout), cell(p.AllocWith), cell(p.GCWithout), cell(p.GCWith),
				cell(p.GCsWithout), cell(p.GCsWith))
		}
	}
	fmt.Fprintln(w)
	var notes []string
	for _, e := range r.Editors {
		for _, p := range e.Phases {
			lag := slices.Max(append(slices.Clone(p.LagWithMS), p.LagWithoutMS...))
			late := slices.Max(p.LateMS)
			if lag > 50 || late > 20 {
				notes = append(notes, fmt.Sprintf("%s, %s: the editor took its last key up to %s ms after it was typed, and the driver typed a key up to %s ms late: the pace was not kept.", e.Editor, p.Phase, num(lag), num(late)))
			}
		}
	}
	if len(notes) > 0 {
		fmt.Fprintf(w, "\n%s\n", strings.Join(notes, "\n"))
	}
}
