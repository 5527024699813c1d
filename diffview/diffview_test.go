package diffview

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

func str(s string) *string { return &s }

func TestDecisionsAreFinalAndOnce(t *testing.T) {
	r := NewRegistry()
	d, replaced := r.Open("/w/a.go", str("old"), "new")
	if replaced != nil || d.State != Open {
		t.Fatalf("open: %+v %+v", d, replaced)
	}
	got, ok := r.Resolve("/w/a.go", Accepted)
	if !ok || got.State != Accepted || got.Proposed != "new" || got.ID != d.ID {
		t.Fatalf("accept: %+v %v", got, ok)
	}
	for _, s := range []State{Accepted, Rejected, Closed} {
		if _, ok := r.Resolve("/w/a.go", s); ok {
			t.Fatalf("late %s accepted after the diff was decided", s)
		}
	}
	if _, ok := r.Resolve("/w/unknown.go", Rejected); ok {
		t.Fatal("unknown path resolved")
	}
	if _, ok := r.Resolve("/w/a.go", Open); ok {
		t.Fatal("resolving to a non-final state must be refused")
	}
}

func TestReplaceKeepsOnlyNewest(t *testing.T) {
	r := NewRegistry()
	first, _ := r.Open("/w/a.go", nil, "v1")
	second, replaced := r.Open("/w/./a.go", nil, "v2")
	if replaced == nil || replaced.ID != first.ID || replaced.State != Replaced {
		t.Fatalf("replaced = %+v", replaced)
	}
	if _, ok := r.ResolveID("/w/a.go", first.ID, Closed); ok {
		t.Fatal("resolving the replaced diff by ID touched the new one")
	}
	if r.Len() != 1 {
		t.Fatalf("len %d", r.Len())
	}
	got, ok := r.Resolve("/w/a.go", Rejected)
	if !ok || got.ID != second.ID || got.Proposed != "v2" || got.Path != "/w/./a.go" {
		t.Fatalf("got %+v", got)
	}
}

func TestConcurrentDecisionsResolveOnce(t *testing.T) {
	r := NewRegistry()
	r.Open("/w/a.go", nil, "x")
	var wg sync.WaitGroup
	var mu sync.Mutex
	wins := 0
	for i := 0; i < 50; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			to := []State{Accepted, Rejected, Closed}[i%3]
			if _, ok := r.Resolve("/w/a.go", to); ok {
				mu.Lock()
				wins++
				mu.Unlock()
			}
		}(i)
	}
	wg.Wait()
	if wins != 1 {
		t.Fatalf("%d decisions won, want exactly 1", wins)
	}
}

// patchApplies checks the unified diff with the system's patch tool: it
// must turn the original into the proposal exactly.
func patchApplies(t *testing.T, original *string, proposed, diff string) {
	t.Helper()
	if _, err := exec.LookPath("patch"); err != nil {
		t.Skip("patch(1) not installed")
	}
	dir := t.TempDir()
	target := filepath.Join(dir, "f.txt")
	if original != nil {
		if err := os.WriteFile(target, []byte(*original), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command("patch", "-s", "-u", target)
	cmd.Stdin = strings.NewReader(diff)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("patch rejected the diff: %v\n%s\ndiff:\n%s", err, out, diff)
	}
	got, err := os.ReadFile(target)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != proposed {
		t.Fatalf("patched file differs from the proposal:\n%q\nwant\n%q", got, proposed)
	}
}

func TestUnifiedMatchesDiffU(t *testing.T) {
	var lines []string
	for i := 1; i <= 40; i++ {
		lines = append(lines, fmt.Sprintf("line %d", i))
	}
	orig := strings.Join(lines, "\n") + "\n"
	mod := strings.Replace(orig, "line 5\n", "line five\n", 1)
	mod = strings.Replace(mod, "line 30\n", "", 1)
	mod += "appended\n"

	d := Unified("/w/f.txt", &orig, mod)
	// Same hunks, ranges and context as GNU diff -u.
	if _, err := exec.LookPath("diff"); err != nil {
		t.Skip("diff(1) not installed")
	}
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a"), filepath.Join(dir, "b")
	if err := os.WriteFile(a, []byte(orig), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(b, []byte(mod), 0o600); err != nil {
		t.Fatal(err)
	}
	out, _ := exec.Command("diff", "-u", a, b).Output()
	wantBody := string(out[strings.Index(string(out), "@@"):])
	gotHeader, gotBody, _ := strings.Cut(d, "@@")
	if gotHeader != "--- a/w/f.txt\n+++ b/w/f.txt\n" || "@@"+gotBody != wantBody {
		t.Fatalf("got:\n%s\nwant body (diff -u):\n%s", d, wantBody)
	}
	if strings.Count(d, "@@ -") != 3 {
		t.Fatalf("want 3 hunks, got:\n%s", d)
	}
	patchApplies(t, &orig, mod, d)
}

func TestUnifiedEdgeCases(t *testing.T) {
	cases := []struct {
		name     string
		original *string
		proposed string
	}{
		{"new file", nil, "hello\nworld\n"},
		{"emptied", str("a\nb\n"), ""},
		{"no final newline", str("a\nb"), "a\nc"},
		{"adds final newline", str("a\nb"), "a\nb\n"},
		{"from empty", str(""), "x\n"},
		{"utf8", str("héllo\n😀\n"), "héllo\n😃\n"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d := Unified("/w/f.txt", c.original, c.proposed)
			if d == "" {
				t.Fatal("empty diff for a change")
			}
			patchApplies(t, c.original, c.proposed, d)
		})
	}
	if d := Unified("/w/f.txt", str("same\n"), "same\n"); d != "" {
		t.Fatalf("diff for no change: %q", d)
	}
	if d := Unified("/w/f.txt", nil, ""); !strings.HasPrefix(d, "--- /dev/null") {
		t.Fatalf("new empty file: %q", d)
	}
}

func TestUnifiedLargeFile(t *testing.T) {
	var b strings.Builder
	for i := 0; i < 100_000; i++ {
		fmt.Fprintf(&b, "row %d\n", i)
	}
	orig := b.String()
	mod := strings.Replace(orig, "row 50000\n", "row fifty thousand\n", 1)
	d := Unified("/w/big.txt", &orig, mod)
	if !strings.Contains(d, "-row 50000\n+row fifty thousand\n") || strings.Count(d, "\n") != 11 {
		t.Fatalf("unexpected diff for one changed line in 100k:\n%s", d)
	}
	patchApplies(t, &orig, mod, d)
}
