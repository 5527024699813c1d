package context

import (
	stdctx "context"
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
type Publisher struct {
	engine  *Engine
	quiet   time.Duration
	maxWait time.Duration
	kick    chan struct{}
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
	return &Publisher{engine: engine, quiet: quiet, maxWait: maxWait, kick: make(chan struct{}, 1)}
}

// Changed signals a change. It never blocks; signals that arrive while one is
// already waiting are merged.
func (p *Publisher) Changed() {
	select {
	case p.kick <- struct{}{}:
	default:
	}
}

// Run paces snapshots to send until ctx is done. send is called from Run's
// goroutine only.
func (p *Publisher) Run(ctx stdctx.Context, send func(IdeContext)) {
	var last *IdeContext
	flush := func() {
		snap := p.engine.Snapshot()
		if last != nil && last.Equal(snap) {
			return
		}
		last = &snap
		send(snap)
	}
	timer := time.NewTimer(time.Hour)
	timer.Stop()
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
		timer.Reset(min(p.quiet, max(p.maxWait-time.Since(start), 0)))
	burst:
		for {
			select {
			case <-ctx.Done():
				timer.Stop()
				return
			case <-p.kick:
				wait := p.quiet
				if left := p.maxWait - time.Since(start); left < wait {
					wait = left
				}
				timer.Stop()
				timer.Reset(max(wait, 0))
			case <-timer.C:
				flush()
				lastFlush = time.Now()
				break burst
			}
		}
	}
}
