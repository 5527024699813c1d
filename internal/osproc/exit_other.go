//go:build !linux

package osproc

import "context"

// WatchExit returns a channel closed once process pid has exited (a
// zombie counts as gone, as for Alive), found by checking every 500 ms.
// Its goroutine ends when ctx does.
func WatchExit(ctx context.Context, pid int) <-chan struct{} {
	gone := make(chan struct{})
	go pollExit(ctx, pid, gone)
	return gone
}
