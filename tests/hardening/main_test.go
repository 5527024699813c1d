package hardening

import (
	"flag"
	"fmt"
	"net/http"
	"os"
	"runtime"
	"testing"
	"time"

	"github.com/gemini-ide-companion/gemini-ide-companion/tests/testkit"
)

// TestMain checks that no goroutine of these tests outlives them: load
// loops, event streams and clients all end with the test that started
// them.
//
// Most of these tests wait on the sidecar's own clocks (grace periods,
// header timeouts) rather than compute, so unless told otherwise they run
// wider than the default of one per CPU: the minute of churn then overlaps
// all the others.
func TestMain(m *testing.M) {
	flag.Parse()
	set := false
	flag.Visit(func(f *flag.Flag) { set = set || f.Name == "test.parallel" })
	if p := flag.Lookup("test.parallel"); !set && p != nil {
		p.Value.Set("8")
	}
	before := runtime.NumGoroutine()
	code := m.Run()
	if code == 0 {
		http.DefaultClient.CloseIdleConnections()
		oneShot.CloseIdleConnections()
		if !testkit.Poll(5*time.Second, func() bool { return runtime.NumGoroutine() <= before }) {
			buf := make([]byte, 1<<20)
			n := runtime.Stack(buf, true)
			fmt.Fprintf(os.Stderr, "goroutines left behind by the tests: %d, %d before them\n%s", runtime.NumGoroutine(), before, buf[:n])
			code = 1
		}
	}
	os.Exit(code)
}
