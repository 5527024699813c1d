package fakegemini_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gemini-ide-companion/gemini-ide-companion/tests/fakegemini"
	"github.com/gemini-ide-companion/gemini-ide-companion/tests/tmuxdrive"
)

// post sends body to the fake's model method and returns the response.
func post(t *testing.T, s *fakegemini.Server, model, method, body string) *http.Response {
	t.Helper()
	url := s.URL + "/v1beta/models/" + model + ":" + method
	if method == "streamGenerateContent" {
		url += "?alt=sse"
	}
	resp, err := http.Post(url, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatalf("POST %s: %v", url, err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

type chunk struct {
	Candidates []struct {
		Content struct {
			Parts []map[string]any `json:"parts"`
		} `json:"content"`
		FinishReason string `json:"finishReason"`
	} `json:"candidates"`
}

// readSSE parses a server-sent-event stream the way the genai SDK does:
// "data: <json>" records separated by a blank line.
func readSSE(t *testing.T, r io.Reader) []chunk {
	t.Helper()
	var out []chunk
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		line := strings.TrimRight(sc.Text(), "\r")
		if line == "" {
			continue
		}
		data, ok := strings.CutPrefix(line, "data: ")
		if !ok {
			t.Fatalf("stream line %q is not a data record", line)
		}
		var c chunk
		if err := json.Unmarshal([]byte(data), &c); err != nil {
			t.Fatalf("stream record %q: %v", data, err)
		}
		out = append(out, c)
	}
	return out
}

func TestScriptedTurnsAreServedInOrderAndRecorded(t *testing.T) {
	s := fakegemini.Start(t)
	s.Reply(fakegemini.Text("first answer"))
	s.Reply(fakegemini.Text("writing it"), fakegemini.Call("write_file", map[string]any{"file_path": "/w/a.txt", "content": "x\n"}))

	const prompt = `{"contents":[{"role":"user","parts":[{"text":"hello"},{"text":"<editor context>"}]}],
		"tools":[{"functionDeclarations":[{"name":"write_file"}]}]}`
	first := readSSE(t, post(t, s, "gemini-2.5-pro", "streamGenerateContent", prompt).Body)
	if len(first) != 1 || first[0].Candidates[0].Content.Parts[0]["text"] != "first answer" {
		t.Fatalf("first turn = %+v, want the text \"first answer\"", first)
	}
	if first[len(first)-1].Candidates[0].FinishReason != "STOP" {
		t.Fatalf("the last chunk has no finishReason STOP: %+v", first)
	}

	second := readSSE(t, post(t, s, "gemini-2.5-pro", "streamGenerateContent", prompt).Body)
	if len(second) != 2 {
		t.Fatalf("second turn has %d chunks, want 2 (one per part)", len(second))
	}
	call, _ := second[1].Candidates[0].Content.Parts[0]["functionCall"].(map[string]any)
	if call["name"] != "write_file" || call["args"].(map[string]any)["content"] != "x\n" {
		t.Fatalf("second turn's call = %v, want write_file with the scripted args", call)
	}
	if second[0].Candidates[0].FinishReason != "" || second[1].Candidates[0].FinishReason != "STOP" {
		t.Fatalf("only the last chunk may carry finishReason: %+v", second)
	}

	third := readSSE(t, post(t, s, "gemini-2.5-pro", "streamGenerateContent", prompt).Body)
	if got := third[0].Candidates[0].Content.Parts[0]["text"]; got != fakegemini.DefaultReplyText {
		t.Fatalf("after the script ran out the reply is %q, want %q", got, fakegemini.DefaultReplyText)
	}

	reqs := s.WaitRequests(t, 3, time.Second)
	if len(reqs) != 3 {
		t.Fatalf("recorded %d main requests, want 3", len(reqs))
	}
	if got := reqs[0].Text(); got != "hello\n<editor context>" {
		t.Fatalf("Text() = %q, want both text parts joined", got)
	}
	if reqs[0].Model != "gemini-2.5-pro" || reqs[0].Method != "streamGenerateContent" {
		t.Fatalf("request recorded as model %q method %q", reqs[0].Model, reqs[0].Method)
	}
	if len(s.Auxiliary()) != 0 {
		t.Fatalf("main requests were counted as auxiliary: %d", len(s.Auxiliary()))
	}
}

func TestAuxiliaryJSONRequestsAreAnsweredBySchema(t *testing.T) {
	s := fakegemini.Start(t)
	s.Reply(fakegemini.Text("scripted turn that routing must not consume"))

	cases := []struct {
		name, body string
		check      func(map[string]any) bool
	}{
		{"numerical router", `{"contents":[{"role":"user","parts":[{"text":"fix it"}]}],
			"generationConfig":{"responseMimeType":"application/json","responseJsonSchema":{"type":"OBJECT",
			"properties":{"complexity_reasoning":{"type":"STRING"},"complexity_score":{"type":"INTEGER"}},
			"required":["complexity_reasoning","complexity_score"]}}}`,
			func(m map[string]any) bool {
				score, ok := m["complexity_score"].(float64)
				_, hasReason := m["complexity_reasoning"].(string)
				return ok && score >= 1 && score <= 100 && hasReason
			}},
		{"next speaker", `{"contents":[{"role":"user","parts":[{"text":"who next"}]}],
			"generationConfig":{"responseMimeType":"application/json","responseJsonSchema":{"type":"object",
			"properties":{"reasoning":{"type":"string"},"next_speaker":{"type":"string","enum":["model","user"]}}}}}`,
			func(m map[string]any) bool { return m["next_speaker"] == "user" }},
		{"escaping correction keeps the text", "{\"contents\":[{\"role\":\"user\",\"parts\":[{\"text\":\"potentially_problematic_string:\\n```\\nline one\\nline two\\n```\\n\"}]}]," +
			`"generationConfig":{"responseMimeType":"application/json","responseJsonSchema":{"type":"object",
			"properties":{"corrected_string_escaping":{"type":"string"}}}}}`,
			func(m map[string]any) bool { return m["corrected_string_escaping"] == "line one\nline two" }},
	}
	for _, c := range cases {
		resp := post(t, s, "gemini-2.5-flash", "generateContent", c.body)
		var r chunk
		if err := json.NewDecoder(resp.Body).Decode(&r); err != nil {
			t.Fatalf("%s: decoding: %v", c.name, err)
		}
		text, _ := r.Candidates[0].Content.Parts[0]["text"].(string)
		var m map[string]any
		if err := json.Unmarshal([]byte(text), &m); err != nil || !c.check(m) {
			t.Fatalf("%s: reply %q does not satisfy the schema's meaning (%v)", c.name, text, err)
		}
	}
	// Streaming JSON requests are auxiliary too.
	chunks := readSSE(t, post(t, s, "gemini-2.5-flash", "streamGenerateContent", cases[0].body).Body)
	if !json.Valid([]byte(chunks[0].Candidates[0].Content.Parts[0]["text"].(string))) {
		t.Fatalf("streamed JSON reply is not JSON: %+v", chunks)
	}
	if n := len(s.Requests()); n != 0 {
		t.Fatalf("auxiliary requests were recorded as %d main request(s)", n)
	}
	if n := len(s.Auxiliary()); n != 4 {
		t.Fatalf("recorded %d auxiliary requests, want 4", n)
	}
	// The scripted turn is still there for the first main request.
	first := readSSE(t, post(t, s, "gemini-2.5-pro", "streamGenerateContent", `{"contents":[]}`).Body)
	if first[0].Candidates[0].Content.Parts[0]["text"] != "scripted turn that routing must not consume" {
		t.Fatalf("an auxiliary request consumed the scripted turn: %+v", first)
	}
}

func TestEditorContextIsDecoded(t *testing.T) {
	// The shape core/client.js gives the context: intro, fenced JSON.
	ctx := "Here is the user's editor context as a JSON object. This is for your information only.\n```json\n" +
		`{"activeFile":{"path":"/w/a.go","cursor":{"line":3,"character":7},"selectedText":"foo"},"otherOpenFiles":["/w/b.go"]}` +
		"\n```"
	body, err := json.Marshal(map[string]any{"contents": []any{
		map[string]any{"role": "user", "parts": []any{map[string]any{"text": ctx}}},
		map[string]any{"role": "user", "parts": []any{map[string]any{"text": "explain this"}}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	s := fakegemini.Start(t)
	post(t, s, "m", "streamGenerateContent", string(body))
	req := s.WaitRequests(t, 1, 5*time.Second)[0]
	ec, ok := req.EditorContext()
	if !ok || ec.ActiveFile == nil {
		t.Fatalf("no editor context decoded from %s", req.Text())
	}
	if ec.ActiveFile.Path != "/w/a.go" || ec.ActiveFile.Cursor.Line != 3 || ec.ActiveFile.Cursor.Character != 7 ||
		ec.ActiveFile.SelectedText != "foo" || len(ec.OtherOpenFiles) != 1 || ec.OtherOpenFiles[0] != "/w/b.go" {
		t.Fatalf("decoded %+v", ec)
	}
	if !strings.Contains(req.Text(), "explain this") {
		t.Fatalf("Text() lost the prompt: %q", req.Text())
	}
	if _, ok := (fakegemini.Request{Body: []byte(`{"contents":[]}`)}).EditorContext(); ok {
		t.Fatalf("an empty request reported an editor context")
	}
}

func TestBadRequestsGetClearErrors(t *testing.T) {
	s := fakegemini.Start(t)
	resp := post(t, s, "m", "streamGenerateContent", "not json")
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusBadRequest || !bytes.Contains(body, []byte("not JSON")) {
		t.Fatalf("bad body: status %d, body %s", resp.StatusCode, body)
	}
	resp2, err := http.Get(s.URL + "/v1beta/something/else")
	if err != nil {
		t.Fatal(err)
	}
	defer resp2.Body.Close()
	if resp2.StatusCode != http.StatusNotFound || len(s.Unhandled()) != 1 {
		t.Fatalf("unknown path: status %d, unhandled %v", resp2.StatusCode, s.Unhandled())
	}
	if len(s.Requests()) != 0 {
		t.Fatalf("a bad request was recorded as a main request")
	}
}

func TestWaitRequestsWakesOnArrival(t *testing.T) {
	s := fakegemini.Start(t)
	go func() {
		resp, err := http.Post(s.URL+"/v1beta/models/m:streamGenerateContent?alt=sse", "application/json",
			strings.NewReader(`{"contents":[{"role":"user","parts":[{"text":"late"}]}]}`))
		if err == nil {
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
	}()
	reqs := s.WaitRequests(t, 1, 10*time.Second)
	if reqs[0].Text() != "late" {
		t.Fatalf("got %q", reqs[0].Text())
	}
}

// TestRealCLIHeadless runs the real Gemini CLI once, non-interactively,
// against the fake: the CLI must print the scripted answer, which proves the
// fake's wire format and auxiliary answers are what the CLI accepts.
func TestRealCLIHeadless(t *testing.T) {
	bin := tmuxdrive.GeminiBin(t)
	s := fakegemini.Start(t)
	s.Reply(fakegemini.Text("The fake model says hello."))

	home, tmp, work := t.TempDir(), t.TempDir(), t.TempDir()
	env := tmuxdrive.MergeEnv(os.Environ(), tmuxdrive.GeminiEnv(t, home, tmp, s.URL)...)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "-p", "say hello")
	cmd.Dir = work
	cmd.Env = env
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("gemini -p: %v\nstdout:\n%s\nstderr:\n%s\nunhandled: %v", err, stdout.String(), stderr.String(), s.Unhandled())
	}
	if !strings.Contains(stdout.String(), "The fake model says hello.") {
		t.Fatalf("the CLI did not print the scripted answer; stdout:\n%s\nstderr:\n%s", stdout.String(), stderr.String())
	}
	for _, a := range s.Auxiliary() {
		t.Logf("auxiliary request: %s %s", a.Model, a.Method)
	}
	reqs := s.Requests()
	if len(reqs) != 1 || !strings.Contains(reqs[0].Text(), "say hello") {
		t.Fatalf("main requests = %d, want 1 carrying the prompt", len(reqs))
	}
	if _, err := os.Stat(filepath.Join(home, ".gemini", "settings.json")); err != nil {
		t.Fatalf("GeminiEnv did not write settings.json: %v", err)
	}
}
