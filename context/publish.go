package context

import (
	stdctx "context"
	"sync/atomic"
	"time"
)

// Default timing of context updates: a trailing debounce so a burst of events
// becomes one notification, and a max-wait so a long cursor motion still
// streams instead of going silent until it stops.
//
// DefaultMaxWait is a little under 200 ms so that, with the time it takes to
// build and deliver an update, a moving cursor is reported at least every
// 200 ms.
const (
	DefaultQuiet   = 50 * time.Millisecond
	DefaultMaxWait = 180 * time.Millisecond
)

// Publisher turns a stream of "something changed" signals into paced
// snapshots: one send Quiet after the last change, and at least one every
// MaxWait while changes keep coming. A snapshot equal to the last one sent is
// not sent again.
//
// Changed only records the time of the change; it wakes the pacing goroutine
// only when that goroutine is idle. During a burst the goroutine sleeps on
// its timer and looks at the latest change time when it wakes, so a storm of
// cursor events costs one timer wake-up per update, not one per event.
type Publisher struct {
	engine  *Engine
	quiet   time.Duration
	maxWait time.Duration
	kick    chan struct{}
	last    atomic.Int64 // UnixNano of the latest change
	idle    atomic.Bool  // Run is waiting for a kick
}

// NewPublisher returns a Publisher for engine. Zero durations take the
// defaults.
func NewPublisher(engine *Engine, quiet, maxWait time.Duration) *Publisher {
	if quiet <= 0 {
		quiet = DefaultQuiet
	}
	if maxWait <= 0 {
		maxWait = DefaultMaxWait
	}
	if maxWait < quiet {
		maxWait = quiet
	}
	p := &Publisher{engine: engine, quiet: quiet, maxWait: maxWait, kick: make(chan struct{}, 1)}
	p.idle.Store(true)
	return p
}

// Changed signals a change. It never blocks.
func (p *Publisher) Changed() {
	p.last.Store(time.Now().UnixNano())
	if p.idle.CompareAndSwap(true, false) {
		select {
		case p.kick <- struct{}{}:
		default:
		}
	}
}

// Run paces snapshots to send until ctx is done. send is called from Run's
// goroutine only.
func (p *Publisher) Run(ctx stdctx.Context, send func(IdeContext)) {
	var sent *IdeContext
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	defer timer.Stop()
	var lastFlush time.Time
	for {
		// Idle: wait for the first change of a burst.
		select {
		case <-ctx.Done():
			return
		case <-p.kick:
		}
		start := time.Now()
		if start.Sub(lastFlush) < p.quiet {
			// Changes never stopped: keep the max-wait rhythm from the
			// last update rather than from this change.
			start = lastFlush
		}
		for {
			// Sleep until the earlier of "quiet since the last change" and
			// the max-wait deadline of this burst.
			now := time.Now()
			quietAt := time.Unix(0, p.last.Load()).Add(p.quiet)
			due := min(quietAt.Sub(now), start.Add(p.maxWait).Sub(now))
			if due <= 0 {
				break
			}
			timer.Reset(due)
			select {
			case <-ctx.Done():
				return
			case <-timer.C:
			}
		}
		flushedAt := time.Now()
		snap := p.engine.Snapshot()
		if sent == nil || !sent.Equal(snap) {
			sent = &snap
			send(snap)
		}
		lastFlush = flushedAt
		p.idle.Store(true)
		// A change that came in while we were busy did not kick (we were
		// not idle): start the next burst for it now.
		if p.last.Load() > flushedAt.UnixNano() && p.idle.CompareAndSwap(true, false) {
			select {
			case p.kick <- struct{}{}:
			default:
			}
		}
	}
}
