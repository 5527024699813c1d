package osproc

import (
	"context"
	"time"
)

// exitPoll is how often a process is checked for life where its exit
// cannot be waited for.
const exitPoll = 500 * time.Millisecond

// pollExit closes gone once pid is no longer Alive, checking every
// exitPoll, or returns when ctx ends.
func pollExit(ctx context.Context, pid int, gone chan<- struct{}) {
	t := time.NewTicker(exitPoll)
	defer t.Stop()
	for {
		if !Alive(pid) {
			close(gone)
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}
