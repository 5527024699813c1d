//go:build !windows

package testproc

// UnderWine reports whether this Windows program runs under Wine: never,
// outside Windows.
func UnderWine() bool { return false }
