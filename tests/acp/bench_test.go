package acp_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"net/http/httptrace"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/a2a"

	"github.com/gemini-ide-companion/gemini-ide-companion/a2a/agent"
	"github.com/gemini-ide-companion/gemini-ide-companion/a2a/launch"
	"github.com/gemini-ide-companion/gemini-ide-companion/tests/fakegemini"
	"github.com/gemini-ide-companion/gemini-ide-companion/tests/testkit"
)

// tokenRE finds the marks the benchmark's model puts in its text: turn and
// update number.
var tokenRE = regexp.MustCompile(`tok-\d+-\d+`)

// stamps records when each mark was first seen.
type stamps struct {
	mu sync.Mutex
	at map[string]time.Time
	// order is the marks in the order seen, per key (a task or a session).
	order map[string][]string
}

func newStamps() *stamps {
	return &stamps{at: map[string]time.Time{}, order: map[string][]string{}}
}

func (s *stamps) see(key, text string, now time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, tok := range tokenRE.FindAllString(text, -1) {
		if _, ok := s.at[tok]; !ok {
			s.at[tok] = now
			s.order[key] = append(s.order[key], tok)
		}
	}
}

// tapBody stamps the marks of each server-sent event the proxy forwards,
// as it forwards them, keyed by the event's task.
type tapBody struct {
	io.ReadCloser
	s   *stamps
	buf []byte
}

var taskIDRE = regexp.MustCompile(`"taskId":"([^"]+)"`)

func (b *tapBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	now := time.Now()
	b.buf = append(b.buf, p[:n]...)
	for {
		i := bytes.IndexByte(b.buf, '\n')
		if i < 0 {
			break
		}
		line := b.buf[:i]
		if bytes.HasPrefix(line, []byte("data:")) {
			key := ""
			if m := taskIDRE.FindSubmatch(line); m != nil {
				key = string(m[1])
			}
			b.s.see(key, string(line), now)
		}
		b.buf = b.buf[i+1:]
	}
	return n, err
}

// BenchmarkACPOverhead measures what gemini-a2a-acp adds to each update it
// forwards: between a proxy in front of the real A2A server (which stamps
// each event as it passes) and the ACP client reading the adapter's
// stdout, against the same A2A stream read directly by the A2A client
// through the same proxy, turns alternated in one run. Then 10 sessions
// run a turn each at once, and every update of every turn must reach its
// session, once, in the server's order.
func BenchmarkACPOverhead(b *testing.B) {
	const parts = 40
	sb := newSandbox(b)
	ctx := context.Background()
	// The server's output and the proxy's log of requests and errors, kept
	// for a failure's report: a stream that ends early is told by what both
	// saw, in time order.
	var srvLog, proxyLog testkit.SyncBuffer
	srv, err := launch.Start(ctx, launch.Options{Dir: sb.Workspace, Env: sb.env(), Log: &srvLog})
	if err != nil {
		b.Fatal(err)
	}
	defer srv.Stop()
	b.Cleanup(func() {
		if b.Failed() {
			b.Logf("the proxy's log, its last requests and errors:\n%s", lastLines(proxyLog.String(), 80, nil))
			b.Logf("the A2A server's output, what it said of sockets, aborts and errors:\n%s", lastLines(srvLog.String(), 60, notable))
		}
	})
	tap := newStamps()
	target, _ := url.Parse(srv.URL)
	// The server answers only requests with its launch's secret: the proxy
	// adds it, as a user's own front to a server would.
	auth := srv.Header().Get("Authorization")
	plog := log.New(&proxyLog, "", log.Ltime|log.Lmicroseconds)
	rp := &httputil.ReverseProxy{Rewrite: func(r *httputil.ProxyRequest) {
		r.SetURL(target)
		r.Out.Header.Set("Authorization", auth)
		id, _ := r.In.Context().Value(reqIDKey{}).(string)
		r.Out = r.Out.WithContext(httptrace.WithClientTrace(r.Out.Context(), &httptrace.ClientTrace{
			GotConn: func(c httptrace.GotConnInfo) { plog.Printf("%s: upstream from %s", id, c.Conn.LocalAddr()) },
		}))
	}}
	rp.FlushInterval = -1
	rp.ErrorLog = plog
	// One upstream connection per request: the server ties a turn to the
	// connection that started it, so the proxy must not pool or share them.
	rp.Transport = &http.Transport{Proxy: nil, DisableKeepAlives: true}
	rp.ModifyResponse = func(r *http.Response) error {
		if strings.HasPrefix(r.Header.Get("Content-Type"), "text/event-stream") {
			r.Body = &tapBody{ReadCloser: r.Body, s: tap}
		}
		return nil
	}
	// Each request in the proxy's log: who sent it, what it asked, how it ended.
	var reqN atomic.Int64
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := fmt.Sprintf("req %d", reqN.Add(1))
		what := r.Method + " " + r.URL.Path
		if r.Method == http.MethodPost {
			// The body is read whole before the request goes upstream. Passed
			// on as it came, it raced net/http (golang/go#40747): writing the
			// stream's headers back makes this server drain and close the
			// incoming body, the transport's last read of it (a check for
			// bytes past Content-Length) then fails, and the transport closes
			// the upstream connection; the A2A server aborts the turn and the
			// client gets "unexpected EOF", now and then, under load.
			body, err := io.ReadAll(r.Body)
			if err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
			r.Body = io.NopCloser(bytes.NewReader(body))
			var m struct {
				Method string `json:"method"`
				Params struct {
					Message struct {
						TaskID string `json:"taskId"`
					} `json:"message"`
				} `json:"params"`
			}
			_ = json.Unmarshal(body, &m)
			what = m.Method + " task " + m.Params.Message.TaskID
		}
		plog.Printf("%s: %s from %s", id, what, r.RemoteAddr)
		defer func() { plog.Printf("%s: done (client's context: %v)", id, context.Cause(r.Context())) }()
		rp.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), reqIDKey{}, id)))
	}))
	defer proxy.Close()

	turn := 0
	reply := func() {
		turn++
		var ps []fakegemini.Part
		for i := 0; i < parts; i++ {
			ps = append(ps, fakegemini.Text(fmt.Sprintf("tok-%d-%d ", turn, i)))
		}
		sb.Fake.Reply(ps...)
	}

	// The adapter, attached to the proxy, on plain pipes.
	logFile := filepath.Join(sb.Home, "acp.log")
	b.Cleanup(func() {
		if b.Failed() {
			data, _ := os.ReadFile(logFile)
			b.Logf("gemini-a2a-acp's log:\n%s", data)
		}
	})
	cmd := exec.Command(adapterBin, "--agent", proxy.URL, "--log-file", logFile, "--session-dir", "")
	cmd.Env = append(os.Environ(), sb.env()...)
	in, _ := cmd.StdinPipe()
	out, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	defer func() { _ = in.Close(); _ = cmd.Wait() }()
	got := newStamps()
	answers := map[float64]chan json.RawMessage{}
	var amu sync.Mutex
	answer := func(id float64) chan json.RawMessage {
		amu.Lock()
		defer amu.Unlock()
		if answers[id] == nil {
			answers[id] = make(chan json.RawMessage, 1)
		}
		return answers[id]
	}
	go func() {
		br := bufio.NewReaderSize(out, 1<<20)
		for {
			line, err := br.ReadBytes('\n')
			now := time.Now()
			if len(line) > 0 {
				var m struct {
					ID     *float64        `json:"id"`
					Method string          `json:"method"`
					Params json.RawMessage `json:"params"`
					Result json.RawMessage `json:"result"`
				}
				if json.Unmarshal(line, &m) == nil {
					switch {
					case m.Method == "session/update":
						var p struct {
							SessionID string `json:"sessionId"`
							Update    update `json:"update"`
						}
						_ = json.Unmarshal(m.Params, &p)
						if p.Update.SessionUpdate == "agent_message_chunk" {
							got.see(p.SessionID, p.Update.text(), now)
						}
					case m.ID != nil && m.Method == "":
						answer(*m.ID) <- line
					}
				}
			}
			if err != nil {
				return
			}
		}
	}()
	var wmu sync.Mutex
	nextID := 0.0
	call := func(method string, params any) json.RawMessage {
		wmu.Lock()
		nextID++
		id := nextID
		raw, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params})
		_, err := in.Write(append(raw, '\n'))
		wmu.Unlock()
		if err != nil {
			b.Fatal(err)
		}
		select {
		case a := <-answer(id):
			return a
		case <-time.After(3 * time.Minute):
			b.Fatalf("%s: no answer", method)
		}
		return nil
	}
	newSession := func() string {
		var r struct {
			Result struct {
				SessionID string `json:"sessionId"`
			} `json:"result"`
		}
		_ = json.Unmarshal(call("session/new", map[string]any{"cwd": sb.Workspace, "mcpServers": []any{}}), &r)
		if r.Result.SessionID == "" {
			b.Fatal("session/new failed")
		}
		return r.Result.SessionID
	}
	prompt := func(sid, text string) {
		a := call("session/prompt", map[string]any{"sessionId": sid, "prompt": []any{map[string]any{"type": "text", "text": text}}})
		if !bytes.Contains(a, []byte(`"end_turn"`)) {
			b.Fatalf("prompt: %s", a)
		}
	}
	call("initialize", map[string]any{"protocolVersion": 1, "clientCapabilities": map[string]any{}})
	sid := newSession()

	// The A2A stream read directly, through the same proxy.
	direct, err := agent.Load(ctx, proxy.URL, agent.NewHTTPClient())
	if err != nil {
		b.Fatal(err)
	}
	line := direct.NewLine()
	defer line.Close()
	seen := newStamps()
	taskID, contextID := "", ""
	directTurn := func() {
		msg := agent.TextMessage(taskID, contextID, "go on")
		for u, err := range line.Send(ctx, msg) {
			now := time.Now()
			if err != nil {
				b.Fatal(err)
			}
			taskID, contextID = u.TaskID, u.ContextID
			if u.Kind == agent.KindText {
				seen.see("direct", u.Text, now)
			}
			if u.Final {
				break
			}
		}
		_ = a2a.TaskStateWorking
	}

	b.ResetTimer()
	var viaACP, viaA2A []time.Duration
	for i := 0; i < b.N; i++ {
		reply()
		first := turn
		prompt(sid, "go on")
		reply()
		second := turn
		directTurn()
		for k := 0; k < parts; k++ {
			t1, t2 := fmt.Sprintf("tok-%d-%d", first, k), fmt.Sprintf("tok-%d-%d", second, k)
			viaACP = append(viaACP, got.at[t1].Sub(tap.at[t1]))
			viaA2A = append(viaA2A, seen.at[t2].Sub(tap.at[t2]))
		}
	}
	b.StopTimer()
	p := func(d []time.Duration, q float64) time.Duration {
		s := append([]time.Duration(nil), d...)
		sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
		return s[int(q*float64(len(s)-1))]
	}
	added := p(viaACP, .5) - p(viaA2A, .5)
	b.ReportMetric(float64(added)/1e6, "added-ms-p50")
	fmt.Printf("updates over %d turns of %d per path: A2A stream read directly p50 %v p99 %v | through gemini-a2a-acp p50 %v p99 %v | added p50 %v (ratio %.2f), target <= 2ms\n",
		b.N, parts, p(viaA2A, .5), p(viaA2A, .99), p(viaACP, .5), p(viaACP, .99), added, float64(p(viaACP, .5))/float64(p(viaA2A, .5)))

	// 10 sessions at once, one turn each.
	const sessions = 10
	sids := make([]string, sessions)
	for i := range sids {
		sids[i] = newSession()
	}
	firstTurn := turn + 1
	for range sids {
		reply()
	}
	start := time.Now()
	var wg sync.WaitGroup
	for _, s := range sids {
		wg.Add(1)
		go func() {
			defer wg.Done()
			prompt(s, "go on")
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	lost, reordered := 0, 0
	for tn := firstTurn; tn <= turn; tn++ {
		prefix := fmt.Sprintf("tok-%d-", tn)
		var owner string
		for _, s := range sids {
			for _, tok := range got.order[s] {
				if strings.HasPrefix(tok, prefix) {
					owner = s
				}
			}
		}
		var order []string
		for _, tok := range got.order[owner] {
			if strings.HasPrefix(tok, prefix) {
				order = append(order, tok)
			}
		}
		for k := 0; k < parts; k++ {
			if k >= len(order) {
				lost++
			} else if order[k] != fmt.Sprintf("%s%d", prefix, k) {
				reordered++
			}
		}
	}
	fmt.Printf("%d concurrent sessions, %d updates each: all turns ended in %v; updates lost %d, out of order %d\n",
		sessions, parts, elapsed, lost, reordered)
	if lost > 0 || reordered > 0 {
		b.Fatalf("%d updates lost and %d out of order across %d concurrent sessions", lost, reordered, sessions)
	}
}

// notable reports whether a line of the server's output tells of a
// connection closing, an abort or an error.
func notable(line string) bool {
	low := strings.ToLower(line)
	return strings.Contains(low, "socket") || strings.Contains(low, "abort") || strings.Contains(low, "error") || strings.Contains(low, "cancel")
}

// lastLines returns the last max lines of out that keep accepts (all of
// them when keep is nil).
func lastLines(out string, max int, keep func(string) bool) string {
	var kept []string
	for _, l := range strings.Split(strings.TrimRight(out, "\n"), "\n") {
		if keep == nil || keep(l) {
			kept = append(kept, l)
		}
	}
	if len(kept) > max {
		kept = kept[len(kept)-max:]
	}
	return strings.Join(kept, "\n")
}

// reqIDKey keys a proxied request's name in its context, for the proxy's log.
type reqIDKey struct{}
