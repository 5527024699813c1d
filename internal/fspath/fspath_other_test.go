//go:build !windows

package fspath

import "testing"

func TestUnixPathsCompareExactly(t *testing.T) {
	for _, c := range []struct {
		dir, p string
		within bool
	}{
		{"/w", "/w", true},
		{"/w/", "/w/a/../b", true},
		{"/w", "/w2/x", false},
		{"/w", "/W/x", false},
		{"/", "/anything", true},
	} {
		if got := Within(c.dir, c.p); got != c.within {
			t.Errorf("Within(%q, %q) = %v, want %v", c.dir, c.p, got, c.within)
		}
	}
	if Equal("/a/B", "/a/b") {
		t.Error("case differs on Unix, yet Equal")
	}
}
