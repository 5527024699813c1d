package transcripts

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/gemini-ide-companion/gemini-ide-companion/link/protocol"
	"github.com/gemini-ide-companion/gemini-ide-companion/tests/testkit"
	"github.com/gemini-ide-companion/gemini-ide-companion/tests/transcript"
	"github.com/gemini-ide-companion/gemini-ide-companion/tests/wirecheck"
)

// wait bounds every wait of a replay for one message or result: long, so
// that a loaded machine running the race detector never fails a test, yet
// short enough that a missing message is reported.
const wait = 20 * time.Second

// TestTranscripts replays every transcript against the real sidecar, in
// both framings: plugin messages are sent, sidecar messages must arrive and
// match (and fit the JSON Schema), cli steps are performed by a real MCP
// client against the sidecar's HTTP endpoint.
func TestTranscripts(t *testing.T) {
	root := testkit.ModuleRoot(t)
	trs, err := transcript.Load(transcript.Dir(root))
	if err != nil {
		t.Fatal(err)
	}
	if len(trs) == 0 {
		t.Fatal("no transcripts found")
	}
	sch := loadSchema(t, root)
	bin := testkit.Binary(t)
	for _, framing := range []string{"ndjson", "lsp"} {
		t.Run(framing, func(t *testing.T) {
			for _, tr := range trs {
				t.Run(tr.Name, func(t *testing.T) {
					t.Parallel()
					r := newReplayer(t, bin, framing, sch)
					r.run(tr)
				})
			}
		})
	}
}

// TestPluginLinesFitTheSchema checks that every plugin message of the
// transcripts (except those of the error transcripts, which are wrong on
// purpose) is valid against the JSON Schema: plugin replays hold plugins to
// these lines, so they must be what the schema allows.
func TestPluginLinesFitTheSchema(t *testing.T) {
	root := testkit.ModuleRoot(t)
	trs, err := transcript.Load(transcript.Dir(root))
	if err != nil {
		t.Fatal(err)
	}
	sch := loadSchema(t, root)
	checked := 0
	for _, tr := range trs {
		if strings.HasPrefix(tr.Name, "sidecar-errors-") {
			continue
		}
		for _, st := range tr.Steps {
			if st.Actor != "plugin" {
				continue
			}
			v, err := transcript.Substitute(st.Body, map[string]string{"workspace": "/w", "file": "/w/file.txt", "file2": "/w/file2.txt"})
			if err != nil {
				t.Fatalf("%s:%d: %v", tr.Name, st.Line, err)
			}
			m, ok := transcript.Concretize(v, nil).(map[string]any)
			if !ok {
				t.Errorf("%s:%d: a plugin line outside errors-* is not a message object", tr.Name, st.Line)
				continue
			}
			if method, ok := m["method"].(string); ok {
				if err := sch.params(method, m["params"]); err != nil {
					t.Errorf("%s:%d: %s params: %v", tr.Name, st.Line, method, err)
				}
				checked++
			}
		}
	}
	if checked < 10 {
		t.Fatalf("only %d plugin messages checked", checked)
	}
}

// schemaSet validates messages against editor-link.schema.json.
type schemaSet struct {
	root    map[string]any
	methods map[string]map[string]any
	mu      sync.Mutex
	cache   map[string]*jsonschema.Resolved
}

func loadSchema(t *testing.T, root string) *schemaSet {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(root, "link", "protocol", "editor-link.schema.json"))
	if err != nil {
		t.Fatalf("read schema: %v", err)
	}
	s := &schemaSet{cache: map[string]*jsonschema.Resolved{}}
	if err := json.Unmarshal(data, &s.root); err != nil {
		t.Fatalf("schema: %v", err)
	}
	raw, _ := json.Marshal(s.root["x-methods"])
	if err := json.Unmarshal(raw, &s.methods); err != nil {
		t.Fatalf("schema x-methods: %v", err)
	}
	for _, m := range protocol.Methods {
		if _, ok := s.methods[m.Name]; !ok {
			t.Fatalf("schema has no method %s: run go generate ./link/protocol", m.Name)
		}
	}
	return s
}

// validate checks v against the sub-schema sub, resolved with the root's
// $defs.
func (s *schemaSet) validate(cacheKey string, sub any, v any) error {
	s.mu.Lock()
	rs, ok := s.cache[cacheKey]
	s.mu.Unlock()
	if !ok {
		doc := map[string]any{"$schema": s.root["$schema"], "$defs": s.root["$defs"], "allOf": []any{sub}}
		raw, err := json.Marshal(doc)
		if err != nil {
			return err
		}
		var sc jsonschema.Schema
		if err := json.Unmarshal(raw, &sc); err != nil {
			return fmt.Errorf("schema for %s: %w", cacheKey, err)
		}
		rs, err = sc.Resolve(nil)
		if err != nil {
			return fmt.Errorf("resolve schema for %s: %w", cacheKey, err)
		}
		s.mu.Lock()
		s.cache[cacheKey] = rs
		s.mu.Unlock()
	}
	return rs.Validate(v)
}

func (s *schemaSet) params(method string, v any) error {
	m, ok := s.methods[method]
	if !ok {
		return nil // not ours (e.g. agent/*): another package's schema
	}
	if v == nil {
		v = map[string]any{}
	}
	return s.validate(method+" params", m["params"], v)
}

func (s *schemaSet) result(method string, v any) error {
	m, ok := s.methods[method]
	if !ok {
		return nil
	}
	return s.validate(method+" result", m["result"], v)
}

func (s *schemaSet) errorObject(v any) error {
	return s.validate("error", map[string]any{"$ref": "#/$defs/Error"}, v)
}

// sidecar is one run of the sidecar process.
type sidecar struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	msgs   chan []byte // frames read, closed at the end of stdout
	exited chan struct{}
	stderr *testkit.SyncBuffer
	bad    chan error // framing errors seen by the reader
}

type pending struct {
	id     any
	method string
}

type cliResult struct {
	res *mcp.CallToolResult
	err error
}

// replayer plays the plugin (and the CLI) of one transcript.
type replayer struct {
	t       *testing.T
	bin     string
	framing string
	sch     *schemaSet
	sb      *testkit.Sandbox
	vars    map[string]string

	sc       *sidecar
	pool     []map[string]any // sidecar messages not matched yet
	captured map[string]any
	nextID   int
	fromUs   []pending // plugin requests not answered yet
	fromIt   []pending // sidecar requests not answered yet
	lastInit map[string]any

	cli      *testkit.CLI
	cliMark  int
	cliCalls []chan cliResult
}

func newReplayer(t *testing.T, bin, framing string, sch *schemaSet) *replayer {
	sb := testkit.NewSandbox(t)
	vars, err := transcript.Workspace(sb.Workspace)
	if err != nil {
		t.Fatal(err)
	}
	r := &replayer{t: t, bin: bin, framing: framing, sch: sch, sb: sb, captured: map[string]any{}, vars: vars}
	r.start()
	return r
}

func (r *replayer) start() {
	t := r.t
	args := []string{"--stdio", "--log-level", "debug"}
	if r.framing != "ndjson" {
		args = append(args, "--framing="+r.framing)
	}
	cmd := exec.Command(r.bin, args...)
	cmd.Dir = r.sb.Workspace
	cmd.Env = r.sb.Env()
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	sc := &sidecar{cmd: cmd, stdin: stdin, msgs: make(chan []byte, 256), exited: make(chan struct{}),
		stderr: &testkit.SyncBuffer{}, bad: make(chan error, 1)}
	cmd.Stderr = sc.stderr
	if err := cmd.Start(); err != nil {
		t.Fatalf("start sidecar: %v", err)
	}
	go func() {
		defer close(sc.msgs)
		br := bufio.NewReaderSize(stdout, 1<<20)
		for {
			body, err := transcript.ReadFrame(br, r.framing, true)
			if err != nil {
				if !errors.Is(err, io.EOF) {
					sc.bad <- err
				}
				io.Copy(io.Discard, stdout)
				return
			}
			sc.msgs <- body
		}
	}()
	go func() {
		defer close(sc.exited)
		_ = cmd.Wait()
	}()
	r.sc = sc
	t.Cleanup(func() { r.stop(sc, false) })
}

// stop ends a sidecar run: by closing its stdin (it must exit by itself),
// or by killing it (restart).
func (r *replayer) stop(sc *sidecar, kill bool) {
	if kill {
		_ = sc.cmd.Process.Kill()
	} else {
		sc.stdin.Close()
	}
	select {
	case <-sc.exited:
	case <-time.After(10 * time.Second):
		_ = sc.cmd.Process.Kill()
		<-sc.exited
		r.t.Errorf("sidecar did not exit within 10 s of its stdin closing")
	}
	if r.t.Failed() && !kill {
		r.t.Logf("sidecar stderr:\n%s", sc.stderr.String())
	}
}

func (r *replayer) run(tr transcript.Transcript) {
	for _, st := range tr.Steps {
		r.step(tr.Name, st)
	}
	r.finish(tr.Name)
}

func (r *replayer) fatalf(where string, format string, args ...any) {
	r.t.Helper()
	r.t.Fatalf("%s: %s\nunmatched sidecar messages: %s", where, fmt.Sprintf(format, args...), r.describePool())
}

func (r *replayer) describePool() string {
	if len(r.pool) == 0 {
		return "none"
	}
	var b strings.Builder
	for _, m := range r.pool {
		b.WriteString("\n  ")
		b.WriteString(transcript.Show(m))
	}
	return b.String()
}

func (r *replayer) step(name string, st transcript.Step) {
	where := fmt.Sprintf("%s:%d (%s)", name, st.Line, r.framing)
	switch st.Actor {
	case "comment", "user":
		// Go replays leave the user's actions to the plugin message after
		// them.
	case "plugin":
		r.send(where, st.Body)
	case "sidecar":
		r.expect(where, st.Body)
	case "cli":
		r.cliStep(where, st.Body)
	case "restart":
		r.restart()
	default:
		r.fatalf(where, "unknown actor %q", st.Actor)
	}
}

// send writes a plugin message.
func (r *replayer) send(where string, body json.RawMessage) {
	var raw string
	if json.Unmarshal(body, &raw) == nil {
		// A string is sent as is (after substitution): malformed input.
		if raw == "${oversized}" {
			r.sendOversized(where)
			return
		}
		v, _ := transcript.Substitute(body, r.vars)
		r.write(where, []byte(v.(string)))
		return
	}
	v, err := transcript.Substitute(body, r.vars)
	if err != nil {
		r.fatalf(where, "%v", err)
	}
	m, ok := transcript.Concretize(v, r.captured).(map[string]any)
	if !ok {
		r.fatalf(where, "a plugin line must be an object or a string")
	}
	if orig, ok := v.(map[string]any); ok && orig["id"] == transcript.ID {
		if method, isCall := m["method"].(string); isCall {
			r.nextID++
			m["id"] = float64(r.nextID)
			r.fromUs = append(r.fromUs, pending{m["id"], method})
		} else {
			if len(r.fromIt) == 0 {
				r.fatalf(where, "a reply with <id> but no request of the sidecar is waiting for one")
			}
			m["id"] = r.fromIt[0].id
			r.fromIt = r.fromIt[1:]
		}
	} else if method, isCall := m["method"].(string); isCall && m["id"] != nil {
		r.fromUs = append(r.fromUs, pending{m["id"], method})
	}
	data, err := json.Marshal(m)
	if err != nil {
		r.fatalf(where, "%v", err)
	}
	r.write(where, data)
}

func (r *replayer) write(where string, body []byte) {
	if _, err := r.sc.stdin.Write(transcript.Frame(body, r.framing)); err != nil {
		r.fatalf(where, "write to sidecar: %v", err)
	}
}

// sendOversized sends one message a byte over the limit, without holding
// it in memory.
func (r *replayer) sendOversized(where string) {
	n := protocol.MaxMessageBytes + 1
	w := bufio.NewWriterSize(r.sc.stdin, 1<<20)
	if r.framing == "lsp" {
		fmt.Fprintf(w, "Content-Length: %d\r\n\r\n", n)
	}
	chunk := bytes.Repeat([]byte("x"), 1<<20)
	for left := n; left > 0; {
		k := min(left, len(chunk))
		if _, err := w.Write(chunk[:k]); err != nil {
			r.fatalf(where, "write oversized message: %v", err)
		}
		left -= k
	}
	if r.framing == "ndjson" {
		w.WriteByte('\n')
	}
	if err := w.Flush(); err != nil {
		r.fatalf(where, "write oversized message: %v", err)
	}
}

// receive takes the next sidecar message into the pool, checking it
// against the wire format and the schema.
func (r *replayer) receive(where string, deadline <-chan time.Time) {
	select {
	case body, ok := <-r.sc.msgs:
		if !ok {
			select {
			case err := <-r.sc.bad:
				r.fatalf(where, "sidecar output is not %s framed: %v", r.framing, err)
			default:
			}
			r.fatalf(where, "the sidecar closed its output (exited?)\nstderr:\n%s", tail(r.sc.stderr.String()))
		}
		if err := wirecheck.CheckLine(body); err != nil {
			r.fatalf(where, "sidecar sent a malformed message %q: %v", body, err)
		}
		var m map[string]any
		if err := json.Unmarshal(body, &m); err != nil {
			r.fatalf(where, "%v", err)
		}
		r.checkSchema(where, m)
		r.pool = append(r.pool, m)
	case <-deadline:
		r.fatalf(where, "no matching sidecar message within %s", wait)
	}
}

func tail(s string) string {
	if len(s) > 4000 {
		return "…" + s[len(s)-4000:]
	}
	return s
}

func (r *replayer) checkSchema(where string, m map[string]any) {
	if method, ok := m["method"].(string); ok {
		if err := r.sch.params(method, m["params"]); err != nil {
			r.fatalf(where, "sidecar %s params do not fit the schema: %v\n%s", method, err, transcript.Show(m))
		}
		return
	}
	if e, ok := m["error"]; ok {
		if err := r.sch.errorObject(e); err != nil {
			r.fatalf(where, "sidecar error does not fit the schema: %v", err)
		}
		return
	}
	for _, p := range r.fromUs {
		if sameID(p.id, m["id"]) {
			if err := r.sch.result(p.method, m["result"]); err != nil {
				r.fatalf(where, "sidecar %s result does not fit the schema: %v\n%s", p.method, err, transcript.Show(m))
			}
			return
		}
	}
}

func sameID(a, b any) bool {
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	return bytes.Equal(ja, jb)
}

// expect waits for a sidecar message matching body. Messages of the
// sidecar may arrive in another order than the transcript lists them when
// they do not depend on each other; notifications that no line expects are
// ignored.
func (r *replayer) expect(where string, body json.RawMessage) {
	v, err := transcript.Substitute(body, r.vars)
	if err != nil {
		r.fatalf(where, "%v", err)
	}
	deadline := time.After(wait)
	for {
		for i, m := range r.pool {
			_, isCall := m["method"]
			var answered int = -1
			idOK := func(id any) bool {
				if isCall {
					return id != nil
				}
				for j, p := range r.fromUs {
					if sameID(p.id, id) {
						answered = j
						return true
					}
				}
				return false
			}
			ok, caps, _ := transcript.Match(v, m, idOK)
			if !ok {
				continue
			}
			r.pool = append(r.pool[:i:i], r.pool[i+1:]...)
			for _, c := range caps {
				if c.Key != "" && c.Key != "id" {
					r.captured[c.Key] = c.Value
				}
			}
			if isCall {
				if _, hasID := m["id"]; hasID {
					r.fromIt = append(r.fromIt, pending{m["id"], m["method"].(string)})
				}
			} else if answered >= 0 {
				if r.fromUs[answered].method == protocol.MethodInitialize {
					if res, ok := m["result"].(map[string]any); ok {
						r.lastInit = res
					}
				}
				r.fromUs = append(r.fromUs[:answered:answered], r.fromUs[answered+1:]...)
			}
			return
		}
		r.receive(where, deadline)
	}
}

// finish checks that nothing the transcript did not expect is left: no
// reply or request of the sidecar unmatched, no CLI call without its result.
func (r *replayer) finish(name string) {
	where := fmt.Sprintf("%s: end (%s)", name, r.framing)
	// Take what has arrived already without waiting.
	for {
		select {
		case body, ok := <-r.sc.msgs:
			if !ok {
				goto done
			}
			var m map[string]any
			if json.Unmarshal(body, &m) == nil {
				r.pool = append(r.pool, m)
			}
			continue
		default:
		}
		break
	}
done:
	for _, m := range r.pool {
		if _, isCall := m["method"]; !isCall || m["id"] != nil {
			r.fatalf(where, "the sidecar sent %s, which the transcript does not expect", transcript.Show(m))
		}
	}
	if len(r.cliCalls) > 0 {
		r.fatalf(where, "%d CLI tool calls have no result line", len(r.cliCalls))
	}
}

// restart kills the sidecar and starts a new one; the CLI connection goes
// with it.
func (r *replayer) restart() {
	r.stop(r.sc, true)
	if r.cli != nil {
		r.cli.Session.Close()
		r.cli = nil
	}
	r.pool, r.fromUs, r.fromIt, r.cliCalls, r.lastInit = nil, nil, nil, nil, nil
	r.start()
}

// cliStep performs or checks what a Gemini CLI does.
func (r *replayer) cliStep(where string, body json.RawMessage) {
	v, err := transcript.Substitute(body, r.vars)
	if err != nil {
		r.fatalf(where, "%v", err)
	}
	step, ok := v.(map[string]any)
	if !ok {
		r.fatalf(where, "a cli line must be an object")
	}
	r.connectCLI(where)
	switch {
	case step["tool"] != nil:
		args, _ := step["arguments"].(map[string]any)
		ch := make(chan cliResult, 1)
		cli, tool := r.cli, step["tool"].(string)
		go func() {
			ctx, cancel := context.WithTimeout(context.Background(), 2*wait)
			defer cancel()
			res, err := cli.Session.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
			ch <- cliResult{res, err}
		}()
		r.cliCalls = append(r.cliCalls, ch)
	case step["result"] != nil:
		if len(r.cliCalls) == 0 {
			r.fatalf(where, "a result line without a CLI call before it")
		}
		ch := r.cliCalls[0]
		r.cliCalls = r.cliCalls[1:]
		var got cliResult
		select {
		case got = <-ch:
		case <-time.After(2 * wait):
			r.fatalf(where, "the CLI's tool call got no result within %s", 2*wait)
		}
		if got.err != nil {
			r.fatalf(where, "the CLI's tool call failed: %v", got.err)
		}
		raw, _ := json.Marshal(got.res)
		var actual any
		_ = json.Unmarshal(raw, &actual)
		if ok, _, why := transcript.Match(step["result"], actual, nil); !ok {
			r.fatalf(where, "CLI tool result %s does not match: %s", raw, why)
		}
	case step["notification"] != nil:
		n, _ := step["notification"].(map[string]any)
		method, _ := n["method"].(string)
		_, idx := r.cli.WaitFrom(r.t, r.cliMark, method, wait, func(params json.RawMessage) bool {
			var actual any
			if json.Unmarshal(params, &actual) != nil {
				return false
			}
			ok, _, _ := transcript.Match(n["params"], actual, nil)
			return ok
		})
		r.cliMark = idx + 1
	default:
		r.fatalf(where, "a cli line needs tool, result or notification")
	}
}

// connectCLI connects a CLI, the first time one acts, to the sidecar that
// answered the last initialize.
func (r *replayer) connectCLI(where string) {
	if r.cli != nil {
		return
	}
	if r.lastInit == nil {
		r.fatalf(where, "a cli line before any initialize result")
	}
	port, _ := r.lastInit["port"].(float64)
	token, _ := r.lastInit["authToken"].(string)
	cli, err := testkit.DialCLI(context.Background(), int(port), token)
	if err != nil {
		r.fatalf(where, "connect the CLI: %v", err)
	}
	r.t.Cleanup(func() { cli.Session.Close() })
	r.cli, r.cliMark = cli, 0
}
