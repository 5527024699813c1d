package main

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"time"
)

// row is one line of the report: one figure for both companions.
type row struct {
	Label     string    `json:"label"`
	Unit      string    `json:"unit"`
	Ours      []float64 `json:"ours"`      // one value per round (or per sample)
	Reference []float64 `json:"reference"` // same
	Target    string    `json:"target,omitempty"`
	Status    string    `json:"status,omitempty"`

	check func(ours, ref float64) bool
}

// targets, as ratios ours/reference or as absolute figures for ours.
func ratioAtMost(limit float64) func(o, r float64) bool {
	return func(o, r float64) bool { return r > 0 && o/r <= limit }
}

func ratioAtLeast(limit float64) func(o, r float64) bool {
	return func(o, r float64) bool { return r > 0 && o/r >= limit }
}

func oursAtMost(limit float64) func(o, r float64) bool {
	return func(o, _ float64) bool { return o <= limit }
}

func oursAtLeast(limit float64) func(o, r float64) bool {
	return func(o, _ float64) bool { return o >= limit }
}

// buildRows turns per-round results into report rows.
func buildRows(cfg config, results map[kind][]roundResult) []row {
	collect := func(f func(roundResult) []float64) ([]float64, []float64) {
		var o, r []float64
		for _, rr := range results[kindOurs] {
			o = append(o, f(rr)...)
		}
		for _, rr := range results[kindReference] {
			r = append(r, f(rr)...)
		}
		return o, r
	}
	one := func(f func(roundResult) float64) func(roundResult) []float64 {
		return func(rr roundResult) []float64 { return []float64{f(rr)} }
	}
	var rows []row
	phase := "" // the load phase the rows being added belong to
	add := func(label, unit, target string, check func(o, r float64) bool, f func(roundResult) []float64) {
		if phase != "" && !cfg.phases.has(phase) {
			return
		}
		o, r := collect(f)
		rows = append(rows, row{Label: label, Unit: unit, Ours: o, Reference: r, Target: target, check: check})
	}

	add("start to discovery file", "ms", "ratio ≤ 0.10", ratioAtMost(0.10),
		func(rr roundResult) []float64 { return durationsMS(rr.startups) })
	add("idle RSS after start", "MiB", "ratio ≤ 0.25", ratioAtMost(0.25),
		one(func(rr roundResult) float64 { return mib(rr.idleStart) }))
	phase = "calls"
	calls := cfg.toolCalls
	add(fmt.Sprintf("idle RSS after %d tool calls", calls), "MiB", "ratio ≤ 0.25", ratioAtMost(0.25),
		one(func(rr roundResult) float64 { return mib(rr.idleAfter) }))

	add("openDiff, 1 session: p50", "ms", "", nil,
		one(func(rr roundResult) float64 { return quantile(durationsMS(rr.lat1), 0.5) }))
	add("openDiff, 1 session: p99", "ms", "ratio ≤ 0.33", ratioAtMost(1.0/3),
		one(func(rr roundResult) float64 { return quantile(durationsMS(rr.lat1), 0.99) }))
	add("openDiff, 1 session: throughput", "calls/s", "ratio ≥ 3", ratioAtLeast(3),
		one(func(rr roundResult) float64 { return rr.rate1 }))
	add("openDiff, 1 session: server CPU per call", "µs", "", nil,
		one(func(rr roundResult) float64 { return float64(rr.cpuPerCall1) / float64(time.Microsecond) }))
	n := cfg.sessionsN
	add(fmt.Sprintf("openDiff, %d sessions: p50", n), "ms", "", nil,
		one(func(rr roundResult) float64 { return quantile(durationsMS(rr.latN), 0.5) }))
	add(fmt.Sprintf("openDiff, %d sessions: p99", n), "ms", "ratio ≤ 0.33", ratioAtMost(1.0/3),
		one(func(rr roundResult) float64 { return quantile(durationsMS(rr.latN), 0.99) }))
	add(fmt.Sprintf("openDiff, %d sessions: throughput", n), "calls/s", "ratio ≥ 3", ratioAtLeast(3),
		one(func(rr roundResult) float64 { return rr.rateN }))
	add(fmt.Sprintf("openDiff, %d sessions: server CPU per call", n), "µs", "", nil,
		one(func(rr roundResult) float64 { return float64(rr.cpuPerCallN) / float64(time.Microsecond) }))

	phase = "payload"
	for _, size := range cfg.payloadSizes {
		name := sizeName(size)
		var target string
		var check func(o, r float64) bool
		if size >= 1<<20 {
			target, check = "ratio ≤ 0.5", ratioAtMost(0.5)
		}
		add(fmt.Sprintf("openDiff %s: latency", name), "ms", target, check,
			one(func(rr roundResult) float64 { return ms(rr.payload[size].latency) }))
		target, check = "", nil
		if size >= 16<<20 {
			limit := 3 * float64(size) / (1 << 20)
			target, check = fmt.Sprintf("ours ≤ %.0f MiB (3× payload)", limit), oursAtMost(limit)
		}
		add(fmt.Sprintf("openDiff %s: peak RSS (VmHWM)", name), "MiB", target, check,
			one(func(rr roundResult) float64 { return mib(rr.payload[size].peak) }))
	}

	phase = "storm"
	add(fmt.Sprintf("storm %d ev/s, %d sessions: updates/s per session while events flow", cfg.stormRate, cfg.stormSessions), "1/s",
		"ours ≥ 5", oursAtLeast(5), one(func(rr roundResult) float64 { return rr.stormRate }))
	add("storm: longest silence while events flow", "ms", "", nil,
		one(func(rr roundResult) float64 { return ms(rr.stormGap) }))
	add("storm: last event to final state delivered", "ms", "ours ≤ 60", oursAtMost(60),
		one(func(rr roundResult) float64 { return ms(rr.stormFinal) }))
	add("storm: server CPU", "% of a core", "ours ≤ 1", oursAtMost(1),
		one(func(rr roundResult) float64 { return rr.stormCPU }))
	add("storm: server CPU per event", "µs", "ours ≤ 5", oursAtMost(5),
		one(func(rr roundResult) float64 { return float64(rr.stormPerEvent) / float64(time.Microsecond) }))
	add("storm: server wake-ups", "1/s", "", nil,
		one(func(rr roundResult) float64 { return rr.stormWakeups }))
	phase = "fanout"
	add(fmt.Sprintf("fan-out: one event to all %d sessions updated", cfg.fanoutSessions), "ms", "", nil,
		func(rr roundResult) []float64 { return durationsMS(rr.fanout) })
	phase = "idle"
	add("idle, editor and 1 session attached: server wake-ups", "1/s", "ours ≤ 5", oursAtMost(5),
		one(func(rr roundResult) float64 { return rr.idleWakeups }))
	add("idle: server CPU", "% of a core", "", nil,
		one(func(rr roundResult) float64 { return rr.idleCPU }))

	for i := range rows {
		r := &rows[i]
		if r.check == nil || len(r.Ours) == 0 {
			continue
		}
		refMed := math.NaN()
		if len(r.Reference) > 0 {
			refMed = median(r.Reference)
		}
		if strings.HasPrefix(r.Target, "ratio") && len(r.Reference) == 0 {
			continue
		}
		if r.check(median(r.Ours), refMed) {
			r.Status = "met"
		} else {
			r.Status = "missed"
		}
	}
	return rows
}

func sizeName(size int) string {
	switch {
	case size >= 1<<20 && size%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", size>>20)
	case size >= 1<<10 && size%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", size>>10)
	default:
		return fmt.Sprintf("%d B", size)
	}
}

// num prints a figure with about three significant digits.
func num(v float64) string {
	switch {
	case math.IsNaN(v):
		return "–"
	case math.IsInf(v, 0):
		return "∞"
	case math.Abs(v) >= 100:
		return fmt.Sprintf("%.0f", v)
	case math.Abs(v) >= 10:
		return fmt.Sprintf("%.1f", v)
	case math.Abs(v) >= 1:
		return fmt.Sprintf("%.2f", v)
	default:
		return fmt.Sprintf("%.3f", v)
	}
}

// cell is "median [min–max]".
func cell(xs []float64) string {
	if len(xs) == 0 {
		return "–"
	}
	lo, hi := minMax(xs)
	if len(xs) == 1 {
		return num(xs[0])
	}
	return fmt.Sprintf("%s [%s–%s]", num(median(xs)), num(lo), num(hi))
}

func ratioCell(o, r []float64) string {
	if len(o) == 0 || len(r) == 0 {
		return "–"
	}
	mo, mr := median(o), median(r)
	if mr == 0 {
		if mo == 0 {
			return "–"
		}
		return "∞"
	}
	return num(mo / mr)
}

// printReport writes the Markdown table.
func printReport(out io.Writer, cfg config, rows []row, peakReset bool) {
	fmt.Fprintf(out, "\n%s\n\n", machineLine())
	fmt.Fprintf(out, "Rounds: %d (interleaved ours, reference, ours, …). Cells: median [min–max] over rounds", cfg.rounds)
	fmt.Fprintf(out, " (start-up and fan-out: over all samples).\n\n")
	fmt.Fprintln(out, "| metric | unit | ours | reference | ours/ref | target | |")
	fmt.Fprintln(out, "|---|---|---|---|---|---|---|")
	for _, r := range rows {
		fmt.Fprintf(out, "| %s | %s | %s | %s | %s | %s | %s |\n",
			r.Label, r.Unit, cell(r.Ours), cell(r.Reference), ratioCell(r.Ours, r.Reference), r.Target, r.Status)
	}
	if !peakReset {
		fmt.Fprintln(out, "\nVmHWM could not be reset (/proc/<pid>/clear_refs): peaks are since process start.")
	}
}

func machineLine() string {
	model := "unknown CPU"
	if data, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for line := range strings.SplitSeq(string(data), "\n") {
			if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
				model = strings.TrimSpace(v)
				break
			}
		}
	}
	nodeVersion := "node ?"
	if outb, err := exec.Command("node", "--version").Output(); err == nil {
		nodeVersion = "node " + strings.TrimSpace(string(outb))
	}
	return fmt.Sprintf("Machine: %d CPUs (%s), %s/%s, driver %s, %s.",
		runtime.NumCPU(), model, runtime.GOOS, runtime.GOARCH, runtime.Version(), nodeVersion)
}

func writeJSON(path string, cfg config, rows []row) error {
	doc := map[string]any{
		"machine": machineLine(),
		"rounds":  cfg.rounds,
		"rows":    rows,
	}
	data, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		return fmt.Errorf("encode results: %w", err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		return fmt.Errorf("write results: %w", err)
	}
	return nil
}
