package a2a_test

import (
	"context"
	"fmt"
	"os"
	"sort"
	"testing"
	"time"

	"github.com/gemini-ide-companion/gemini-ide-companion/a2a/agent"
	"github.com/gemini-ide-companion/gemini-ide-companion/tests/fakegemini"
)

// BenchmarkBridgeOverhead measures what the bridge adds to one call: the
// same A2A tasks/get, once straight from the agent client and once through
// gemini-a2a-mcp's get_task over stdio MCP, alternated in one run against
// the real A2A server. It prints p50/p99 of both and the difference.
func BenchmarkBridgeOverhead(b *testing.B) {
	needServerTB(b)
	sb := newSandbox(b)
	srv := sb.startAgent(b)
	br := startBridge(b, nil, "--no-start")
	br.ok(b, "load_agent", map[string]any{"url": srv.URL, "name": "g"})
	sb.Fake.Reply(fakegemini.Text("hello"))
	taskID := br.ok(b, "send_message", map[string]any{"agent": "g", "text": "hi"})["taskId"].(string)

	ctx := context.Background()
	direct, err := agent.Load(ctx, srv.URL, agent.NewHTTPClient(), agent.WithHeader(srv.Header()))
	if err != nil {
		b.Fatal(err)
	}
	args := map[string]any{"agent": "g", "taskId": taskID}
	var dd, bd []time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		t0 := time.Now()
		if _, err := direct.GetTask(ctx, taskID); err != nil {
			b.Fatal(err)
		}
		t1 := time.Now()
		br.ok(b, "get_task", args)
		t2 := time.Now()
		dd, bd = append(dd, t1.Sub(t0)), append(bd, t2.Sub(t1))
	}
	b.StopTimer()
	p := func(d []time.Duration, q float64) time.Duration {
		s := append([]time.Duration(nil), d...)
		sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
		return s[int(q*float64(len(s)-1))]
	}
	b.ReportMetric(float64(p(bd, .5)-p(dd, .5))/1e6, "added-ms-p50")
	fmt.Fprintf(os.Stdout, "tasks/get over %d calls: direct p50 %v p99 %v | via bridge p50 %v p99 %v | added p50 %v p99 %v\n",
		len(dd), p(dd, .5), p(dd, .99), p(bd, .5), p(bd, .99), p(bd, .5)-p(dd, .5), p(bd, .99)-p(dd, .99))
}

func needServerTB(b *testing.B) { needServer(b) }
