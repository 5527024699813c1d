package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// config holds the counts and durations of one run. Every load loop is
// bounded by a count and by phaseTimeout.
type config struct {
	rounds          int
	startups        int           // starts per round for the start-up figure
	settle          time.Duration // idle wait before reading RSS
	warmup          int           // unmeasured openDiff calls before the 1-session phase
	calls1          int           // sequential openDiff calls, 1 session
	sessionsN       int           // concurrent sessions in the N-session phase
	callsPerSession int           // openDiff calls per session in that phase
	toolCalls       int           // tool calls done before the "idle after calls" RSS
	phaseTimeout    time.Duration // bound on each load phase
	payloadSizes    []int
	payloadReps     int
	stormRate       int // events per second
	stormDuration   time.Duration
	stormSessions   int
	stormWriteEvery time.Duration // the editor writes the events due this often
	idleDuration    time.Duration // how long the idle phase watches the server
	fanoutSessions  int
	fanoutReps      int
	phases          phaseSet // which load phases run (start-up always does)
	sdkCalls        bool     // openDiff through the SDK client rather than plain POSTs
	editorHeadOnly  bool     // the editor reads only the head of large requests
}

// phaseSet names the load phases to run: calls, payload, storm, fanout,
// idle.
type phaseSet map[string]bool

// allPhases is every load phase, in the order they run.
var allPhases = []string{"calls", "payload", "storm", "fanout", "idle"}

func (p phaseSet) has(name string) bool { return p == nil || p[name] }

func fullConfig() config {
	return config{
		rounds:          5,
		startups:        5,
		settle:          2 * time.Second,
		warmup:          50,
		calls1:          2000,
		sessionsN:       16,
		callsPerSession: 500,
		toolCalls:       10000,
		phaseTimeout:    60 * time.Second,
		payloadSizes:    []int{1 << 10, 1 << 20, 16 << 20},
		payloadReps:     3,
		stormRate:       2000,
		stormDuration:   5 * time.Second,
		stormSessions:   3,
		stormWriteEvery: time.Millisecond,
		idleDuration:    12 * time.Second,
		fanoutSessions:  50,
		fanoutReps:      5,
	}
}

func shortConfig() config {
	return config{
		rounds:          1,
		startups:        1,
		settle:          300 * time.Millisecond,
		warmup:          5,
		calls1:          50,
		sessionsN:       16,
		callsPerSession: 5,
		toolCalls:       300,
		phaseTimeout:    20 * time.Second,
		payloadSizes:    []int{1 << 10, 1 << 20},
		payloadReps:     1,
		stormRate:       2000,
		stormDuration:   time.Second,
		stormSessions:   3,
		stormWriteEvery: time.Millisecond,
		idleDuration:    2 * time.Second,
		fanoutSessions:  50,
		fanoutReps:      1,
	}
}

// payloadResult is one payload size in one round.
type payloadResult struct {
	latency   time.Duration // median over reps
	rssBefore int64
	peak      int64 // VmHWM during the calls
}

// roundResult is everything measured on one companion in one round.
type roundResult struct {
	startups       []time.Duration
	idleStart      int64
	idleAfter      int64
	idleAfterCalls int
	lat1           []time.Duration
	rate1          float64
	latN           []time.Duration
	rateN          float64
	cpuPerCall1    time.Duration // server CPU time per call, 1 session
	cpuPerCallN    time.Duration // same, N sessions
	payload        map[int]payloadResult
	peakReset      bool
	stormRate      float64       // updates per second per session while events flowed
	stormGap       time.Duration // longest time a session went without an update while events flowed
	stormCPU       float64       // % of one core
	stormPerEvent  time.Duration // server CPU time per event
	stormWakeups   float64       // times per second a server thread was put on a CPU
	idleWakeups    float64       // same, with an editor and a session attached and nothing happening
	idleCPU        float64       // % of one core meanwhile
	stormFinal     time.Duration
	stormEvents    int
	fanout         []time.Duration
}

// workload is the workspace shared by every companion in a run.
type workload struct {
	dir       string
	small     string         // proposed content for the throughput phases
	payloads  map[int]string // size -> proposed content
	originals map[int]string // size -> path of the file on disk
}

// makeLines returns about size bytes of numbered text lines.
func makeLines(size int, tag string) string {
	var b strings.Builder
	b.Grow(size + 80)
	for i := 0; b.Len() < size; i++ {
		fmt.Fprintf(&b, "%s line %07d: the quick brown fox jumps over the lazy dog, again.\n", tag, i)
	}
	return b.String()[:size]
}

// changeMiddleLine returns s with one line near the middle replaced: the
// shape of an edit the CLI proposes to an existing file.
func changeMiddleLine(s string) string {
	mid := len(s) / 2
	start := strings.LastIndexByte(s[:mid], '\n') + 1
	end := strings.IndexByte(s[mid:], '\n')
	if end < 0 {
		return s + "changed\n"
	}
	end += mid
	return s[:start] + "this line was changed by the proposed edit" + s[end:]
}

func prepareWorkload(dir string, cfg config) (*workload, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("create workspace: %w", err)
	}
	w := &workload{dir: dir, payloads: map[int]string{}, originals: map[int]string{}}
	smallOriginal := makeLines(1<<10, "orig")
	w.small = changeMiddleLine(smallOriginal)
	for i := range max(cfg.sessionsN, cfg.stormSessions, 2) {
		if err := os.WriteFile(w.sessionFile(i), []byte(smallOriginal), 0o644); err != nil {
			return nil, fmt.Errorf("write workspace file: %w", err)
		}
	}
	for _, size := range cfg.payloadSizes {
		original := makeLines(size, "orig")
		path := filepath.Join(dir, fmt.Sprintf("payload-%d.txt", size))
		if err := os.WriteFile(path, []byte(original), 0o644); err != nil {
			return nil, fmt.Errorf("write payload file: %w", err)
		}
		w.originals[size] = path
		w.payloads[size] = changeMiddleLine(original)
	}
	return w, nil
}

func (w *workload) sessionFile(i int) string {
	return filepath.Join(w.dir, fmt.Sprintf("file-%02d.txt", i))
}

// runRound starts one companion and measures everything on it.
func runRound(ctx context.Context, spec launchSpec, cfg config, runDir string, w *workload, seq *int) (rr roundResult, err error) {
	// Start-up: exec to discovery file, several times; the last process
	// serves the rest of the round.
	var c *companion
	for i := range cfg.startups {
		*seq++
		proc, err := startCompanion(spec, runDir, *seq)
		if err != nil {
			return rr, err
		}
		ictx, cancel := context.WithTimeout(ctx, 20*time.Second)
		d, err := proc.initialize(ictx, w.dir)
		cancel()
		if err != nil {
			proc.kill()
			return rr, fmt.Errorf("start-up: %w", err)
		}
		rr.startups = append(rr.startups, d)
		if i < cfg.startups-1 {
			if err := proc.shutdown(ctx); err != nil {
				return rr, fmt.Errorf("shutdown: %w", err)
			}
			continue
		}
		c = proc
		c.sdkCalls = cfg.sdkCalls
		c.headOnly.Store(cfg.editorHeadOnly)
	}
	defer func() {
		if err != nil {
			c.kill()
			return
		}
		if serr := c.shutdown(ctx); serr != nil {
			err = fmt.Errorf("shutdown: %w", serr)
		}
	}()

	if err := sleepCtx(ctx, cfg.settle); err != nil {
		return rr, err
	}
	mem, err := readMemory(c.pid)
	if err != nil {
		return rr, err
	}
	rr.idleStart = mem.RSS

	if cfg.phases.has("calls") {
		calls, err := throughputPhases(ctx, c, cfg, w, &rr)
		if err != nil {
			return rr, err
		}
		if err := sleepCtx(ctx, cfg.settle); err != nil {
			return rr, err
		}
		if mem, err = readMemory(c.pid); err != nil {
			return rr, err
		}
		rr.idleAfter = mem.RSS
		rr.idleAfterCalls = calls
	}
	if cfg.phases.has("payload") {
		if err := payloadPhase(ctx, c, cfg, w, &rr); err != nil {
			return rr, fmt.Errorf("payload: %w", err)
		}
	}
	if cfg.phases.has("storm") {
		if err := stormPhase(ctx, c, cfg, w, &rr); err != nil {
			return rr, fmt.Errorf("context storm: %w", err)
		}
	}
	if cfg.phases.has("fanout") {
		if err := fanoutPhase(ctx, c, cfg, w, &rr); err != nil {
			return rr, fmt.Errorf("fan-out: %w", err)
		}
	}
	if cfg.phases.has("idle") {
		if err := idlePhase(ctx, c, cfg, w, &rr); err != nil {
			return rr, fmt.Errorf("idle: %w", err)
		}
	}
	if err := c.alive(); err != nil {
		return rr, err
	}
	return rr, nil
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// connectMany connects n CLI sessions, a few at a time.
func connectMany(ctx context.Context, c *companion, n int) ([]*cliSession, error) {
	sessions := make([]*cliSession, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	sem := make(chan struct{}, 8)
	for i := range n {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			cctx, cancel := context.WithTimeout(ctx, 15*time.Second)
			defer cancel()
			sessions[i], errs[i] = connectCLI(cctx, c)
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		closeAll(sessions)
		return nil, err
	}
	return sessions, nil
}

func closeAll(sessions []*cliSession) {
	var wg sync.WaitGroup
	for _, s := range sessions {
		if s == nil {
			continue
		}
		wg.Go(s.close)
	}
	wg.Wait()
}

// throughputPhases measures openDiff with 1 and with N sessions, checks the
// accept path and closeDiff, and tops the tool calls up to cfg.toolCalls. It
// returns the number of tool calls made.
func throughputPhases(ctx context.Context, c *companion, cfg config, w *workload, rr *roundResult) (int, error) {
	pctx, cancel := context.WithTimeout(ctx, cfg.phaseTimeout)
	defer cancel()

	// The first session stays connected through the phases after its own.
	one, err := connectCLI(pctx, c)
	if err != nil {
		return 0, err
	}
	defer one.close()
	calls, err := oneSession(pctx, c, cfg, w, one, rr)
	if err != nil {
		return calls, err
	}

	sessions, err := connectMany(pctx, c, cfg.sessionsN)
	if err != nil {
		return calls, err
	}
	defer closeAll(sessions)
	n, err := manySessions(pctx, c, cfg, w, sessions, rr)
	calls += n
	if err != nil {
		return calls, err
	}
	n, err = topUp(pctx, w, sessions, cfg.toolCalls-calls)
	return calls + n, err
}

// oneSession measures one session making one call at a time, then the
// accept path: the editor accepts, the CLI hears ide/diffAccepted.
func oneSession(pctx context.Context, c *companion, cfg config, w *workload, one *cliSession, rr *roundResult) (calls int, err error) {
	path0 := w.sessionFile(0)
	for range cfg.warmup {
		if _, err := one.openDiff(pctx, path0, w.small); err != nil {
			return calls, err
		}
		calls++
	}
	cpu0, err := readCPU(c.pid)
	if err != nil {
		return calls, err
	}
	t0 := time.Now()
	for range cfg.calls1 {
		d, err := one.openDiff(pctx, path0, w.small)
		if err != nil {
			return calls, fmt.Errorf("1 session: %w", err)
		}
		rr.lat1 = append(rr.lat1, d)
		calls++
	}
	rr.rate1 = float64(len(rr.lat1)) / time.Since(t0).Seconds()
	cpu1, err := readCPU(c.pid)
	if err != nil {
		return calls, err
	}
	rr.cpuPerCall1 = (cpu1 - cpu0) / time.Duration(max(len(rr.lat1), 1))

	if err := c.notify("diff/accepted", map[string]string{"filePath": path0, "content": w.small}); err != nil {
		return calls, err
	}
	if err := one.waitAccepted(pctx, 5*time.Second, path0); err != nil {
		return calls, fmt.Errorf("%s: %w", c.kind, err)
	}
	return calls, nil
}

// manySessions measures N sessions, each making one call at a time, all at
// once; then each closes its diff (closeDiff answers JSON for an open one).
func manySessions(pctx context.Context, c *companion, cfg config, w *workload, sessions []*cliSession, rr *roundResult) (calls int, err error) {
	lats := make([][]time.Duration, len(sessions))
	errs := make([]error, len(sessions))
	var wg sync.WaitGroup
	cpu0, err := readCPU(c.pid)
	if err != nil {
		return calls, err
	}
	t0 := time.Now()
	for i, s := range sessions {
		wg.Go(func() {
			path := w.sessionFile(i)
			for range cfg.callsPerSession {
				d, err := s.openDiff(pctx, path, w.small)
				if err != nil {
					errs[i] = fmt.Errorf("%d sessions: %w", len(sessions), err)
					return
				}
				lats[i] = append(lats[i], d)
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(t0)
	if err := errors.Join(errs...); err != nil {
		return calls, err
	}
	cpu1, err := readCPU(c.pid)
	if err != nil {
		return calls, err
	}
	for _, l := range lats {
		rr.latN = append(rr.latN, l...)
		calls += len(l)
	}
	rr.rateN = float64(len(rr.latN)) / elapsed.Seconds()
	rr.cpuPerCallN = (cpu1 - cpu0) / time.Duration(max(len(rr.latN), 1))

	for i, s := range sessions {
		if err := s.closeDiff(pctx, w.sessionFile(i)); err != nil {
			return calls, err
		}
		calls++
	}
	return calls, nil
}

// topUp makes about remaining more tool calls, openDiff/closeDiff pairs
// spread over the sessions.
func topUp(pctx context.Context, w *workload, sessions []*cliSession, remaining int) (calls int, err error) {
	if remaining <= 0 {
		return 0, nil
	}
	per := (remaining + len(sessions) - 1) / len(sessions)
	counts := make([]int, len(sessions))
	errs := make([]error, len(sessions))
	var wg sync.WaitGroup
	for i, s := range sessions {
		wg.Go(func() {
			path := w.sessionFile(i)
			for j := 0; j < per; j++ {
				var err error
				if j%2 == 0 {
					_, err = s.openDiff(pctx, path, w.small)
				} else {
					err = s.closeDiff(pctx, path)
				}
				if err != nil {
					errs[i] = err
					return
				}
				counts[i]++
			}
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return calls, err
	}
	for _, n := range counts {
		calls += n
	}
	return calls, nil
}

// payloadPhase measures openDiff latency and peak memory per payload size.
func payloadPhase(ctx context.Context, c *companion, cfg config, w *workload, rr *roundResult) error {
	// Twice the phase timeout, and half a second per MiB sent.
	limit := cfg.phaseTimeout * 2
	for _, size := range cfg.payloadSizes {
		limit += time.Duration(cfg.payloadReps*size>>20) * time.Second / 2
	}
	pctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	s, err := connectCLI(pctx, c)
	if err != nil {
		return err
	}
	defer s.close()
	rr.payload = map[int]payloadResult{}
	rr.peakReset = true
	for _, size := range cfg.payloadSizes {
		if err := sleepCtx(pctx, cfg.settle/2); err != nil {
			return err
		}
		before, err := readMemory(c.pid)
		if err != nil {
			return err
		}
		if !resetPeak(c.pid) {
			rr.peakReset = false
		}
		var lats []time.Duration
		for range cfg.payloadReps {
			d, err := s.openDiff(pctx, w.originals[size], w.payloads[size])
			if err != nil {
				return fmt.Errorf("%d bytes: %w", size, err)
			}
			lats = append(lats, d)
		}
		after, err := readMemory(c.pid)
		if err != nil {
			return err
		}
		if err := s.closeDiff(pctx, w.originals[size]); err != nil {
			return err
		}
		rr.payload[size] = payloadResult{
			latency:   time.Duration(median(durationsMS(lats)) * float64(time.Millisecond)),
			rssBefore: before.RSS,
			peak:      after.Peak,
		}
	}
	return nil
}

// stormPhase sends cursor events at cfg.stormRate for cfg.stormDuration with
// cfg.stormSessions attached, and checks the final cursor arrives last.
func stormPhase(ctx context.Context, c *companion, cfg config, w *workload, rr *roundResult) error {
	pctx, cancel := context.WithTimeout(ctx, cfg.phaseTimeout)
	defer cancel()
	sessions, err := connectMany(pctx, c, cfg.stormSessions)
	if err != nil {
		return err
	}
	defer closeAll(sessions)
	path := w.sessionFile(1)
	if err := c.notify("context/fileFocused", map[string]any{"path": path, "cursor": map[string]int{"line": 1, "character": 1}}); err != nil {
		return err
	}
	for _, s := range sessions {
		if err := s.waitContext(pctx, 5*time.Second, func(cs contextSeen) bool { return cs.activePath == path }); err != nil {
			return fmt.Errorf("%s after fileFocused: %w", c.kind, err)
		}
	}
	if err := sleepCtx(pctx, 300*time.Millisecond); err != nil {
		return err
	}

	total := int(float64(cfg.stormRate) * cfg.stormDuration.Seconds())
	prefix := `{"jsonrpc":"2.0","method":"context/selectionChanged","params":{"path":` + strconv.Quote(path) + `,"cursor":{"line":`
	event := func(i int) []byte {
		return []byte(prefix + strconv.Itoa(i+1) + `,"character":` + strconv.Itoa(i%80+1) + "}}}\n")
	}
	sched0, err := readSched(c.pid)
	if err != nil {
		return err
	}
	t0 := time.Now()
	ticker := time.NewTicker(cfg.stormWriteEvery)
	defer ticker.Stop()
	sent := 0
	deadline := t0.Add(cfg.stormDuration + 2*time.Second)
	for sent < total {
		target := min(total, int(time.Since(t0).Seconds()*float64(cfg.stormRate))+1)
		if target > sent {
			batch := make([][]byte, 0, target-sent)
			for i := sent; i < target; i++ {
				batch = append(batch, event(i))
			}
			if err := c.sendBatch(batch); err != nil {
				return err
			}
			sent = target
		}
		if sent >= total {
			break
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("could not send %d events within %v", total, cfg.stormDuration+2*time.Second)
		}
		select {
		case <-ticker.C:
		case <-pctx.Done():
			return pctx.Err()
		}
	}
	tLast := time.Now()
	rr.stormEvents = total

	var latest time.Time
	for _, s := range sessions {
		at, err := s.waitContextAt(pctx, 5*time.Second, func(cs contextSeen) bool {
			return cs.activePath == path && cs.cursorLine == total
		})
		if err != nil {
			return fmt.Errorf("%s never delivered the final cursor (line %d): %w", c.kind, total, err)
		}
		if at.After(latest) {
			latest = at
		}
	}
	sched1, err := readSched(c.pid)
	if err != nil {
		return err
	}
	wall := time.Since(t0)
	used := sched1.sub(sched0)
	rr.stormFinal = latest.Sub(tLast)
	rr.stormCPU = 100 * used.run.Seconds() / wall.Seconds()
	rr.stormPerEvent = used.run / time.Duration(total)
	rr.stormWakeups = float64(used.wakeup) / wall.Seconds()

	// Nothing older may arrive after the final state.
	if err := sleepCtx(pctx, 300*time.Millisecond); err != nil {
		return err
	}
	var rates, gaps []float64
	for i, s := range sessions {
		seen := s.contextsSince(t0)
		if len(seen) == 0 || seen[len(seen)-1].cursorLine != total {
			return fmt.Errorf("%s: session %d's last context update does not carry the last cursor (line %d)", c.kind, i, total)
		}
		var during []time.Time
		for _, cs := range seen {
			if !cs.at.After(tLast) {
				during = append(during, cs.at)
			}
		}
		rate, gap := flowFigures(t0, tLast, during)
		rates = append(rates, rate)
		gaps = append(gaps, ms(gap))
		s.forgetContexts()
	}
	rr.stormGap = time.Duration(slices.Max(gaps) * float64(time.Millisecond))
	rr.stormRate = median(rates)
	return nil
}

// idlePhase watches the server with the editor attached, one CLI session
// connected and a file focused, while nothing happens: how often its
// threads wake up, and the CPU that costs.
func idlePhase(ctx context.Context, c *companion, cfg config, w *workload, rr *roundResult) error {
	pctx, cancel := context.WithTimeout(ctx, cfg.phaseTimeout+cfg.idleDuration)
	defer cancel()
	sessions, err := connectMany(pctx, c, 1)
	if err != nil {
		return err
	}
	defer closeAll(sessions)
	path := w.sessionFile(0)
	if err := c.notify("context/fileFocused", map[string]any{"path": path, "cursor": map[string]int{"line": 2, "character": 1}}); err != nil {
		return err
	}
	if err := sessions[0].waitContext(pctx, 5*time.Second, func(cs contextSeen) bool { return cs.activePath == path && cs.cursorLine == 2 }); err != nil {
		return fmt.Errorf("%s after fileFocused: %w", c.kind, err)
	}
	// Let what the update started settle (the session's stream, timers
	// that run once) before counting.
	if err := sleepCtx(pctx, time.Second); err != nil {
		return err
	}
	s0, err := readSched(c.pid)
	if err != nil {
		return err
	}
	t0 := time.Now()
	if err := sleepCtx(pctx, cfg.idleDuration); err != nil {
		return err
	}
	s1, err := readSched(c.pid)
	if err != nil {
		return err
	}
	wall := time.Since(t0)
	used := s1.sub(s0)
	rr.idleWakeups = float64(used.wakeup) / wall.Seconds()
	rr.idleCPU = 100 * used.run.Seconds() / wall.Seconds()
	return nil
}

// flowFigures summarises the updates one session received while events
// flowed from t0 to tLast: their rate (intervals between the first and the
// last one over the time they span, so the phase of the first one does not
// count; with fewer than two, their number over the flow time) and the
// longest time without one.
func flowFigures(t0, tLast time.Time, at []time.Time) (rate float64, gap time.Duration) {
	flow := tLast.Sub(t0)
	if len(at) < 2 {
		if len(at) == 1 {
			gap = max(at[0].Sub(t0), tLast.Sub(at[0]))
		} else {
			gap = flow
		}
		return float64(len(at)) / flow.Seconds(), gap
	}
	span := at[len(at)-1].Sub(at[0])
	rate = float64(len(at)-1) / span.Seconds()
	gap = max(at[0].Sub(t0), tLast.Sub(at[len(at)-1]))
	for i := 1; i < len(at); i++ {
		gap = max(gap, at[i].Sub(at[i-1]))
	}
	return rate, gap
}

// fanoutPhase attaches cfg.fanoutSessions sessions and times one focus event
// until every session has the update.
func fanoutPhase(ctx context.Context, c *companion, cfg config, w *workload, rr *roundResult) error {
	pctx, cancel := context.WithTimeout(ctx, cfg.phaseTimeout)
	defer cancel()
	sessions, err := connectMany(pctx, c, cfg.fanoutSessions)
	if err != nil {
		return err
	}
	defer closeAll(sessions)
	for rep := range cfg.fanoutReps {
		if err := sleepCtx(pctx, 200*time.Millisecond); err != nil {
			return err
		}
		path := filepath.Join(w.dir, fmt.Sprintf("fanout-%d.txt", rep))
		t0 := time.Now()
		if err := c.notify("context/fileFocused", map[string]any{"path": path, "cursor": map[string]int{"line": rep + 1, "character": 1}}); err != nil {
			return err
		}
		arrivals := make([]time.Time, len(sessions))
		errs := make([]error, len(sessions))
		var wg sync.WaitGroup
		for i, s := range sessions {
			wg.Go(func() {
				arrivals[i], errs[i] = s.waitContextAt(pctx, 5*time.Second, func(cs contextSeen) bool { return cs.activePath == path })
			})
		}
		wg.Wait()
		if err := errors.Join(errs...); err != nil {
			return fmt.Errorf("%s: not every session got the update: %w", c.kind, err)
		}
		var last time.Time
		for _, a := range arrivals {
			if a.After(last) {
				last = a
			}
		}
		rr.fanout = append(rr.fanout, last.Sub(t0))
		for _, s := range sessions {
			s.forgetContexts()
		}
	}
	return nil
}
