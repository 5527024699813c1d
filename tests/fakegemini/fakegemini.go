// Package fakegemini is a scripted stand-in for the Gemini API, so that tests
// can run the real Gemini CLI (pointed at it with GOOGLE_GEMINI_BASE_URL)
// without any network access.
//
// The CLI sends two kinds of model calls. The main conversation goes through
// `models/{model}:streamGenerateContent?alt=sse`; each of those requests is
// recorded and answered with the next turn a test scripted with
// [Server.Reply]. Everything else the CLI asks a model for on its own (the
// routing classifier that wants `complexity_score`, next-speaker checks, loop
// detection, escaping correction, titles and summaries) is answered by the
// fake itself with a plausible, schema-conforming reply, so that a test only
// scripts what a user would see.
package fakegemini

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"
)

// DefaultReplyText is what the fake answers to a main request once the
// scripted turns have run out.
const DefaultReplyText = "OK."

// Part is one piece of a scripted model turn: text or a function call.
type Part struct {
	text    string
	call    *FunctionCall
	thought bool
}

// FunctionCall is a tool call the fake model makes.
type FunctionCall struct {
	// Name is the tool name as the CLI declares it (e.g. "write_file").
	Name string
	// Args are the tool's arguments.
	Args map[string]any
}

// Text returns a Part that makes the model say s.
func Text(s string) Part { return Part{text: s} }

// Thought returns a Part in which the model thinks s (a part marked
// "thought", as thinking models stream them; Gemini CLI reads
// "**Subject** description" from it).
func Thought(s string) Part { return Part{text: s, thought: true} }

// Call returns a Part that makes the model call the tool name with args.
func Call(name string, args map[string]any) Part {
	if args == nil {
		args = map[string]any{}
	}
	return Part{call: &FunctionCall{Name: name, Args: args}}
}

// MarshalJSON renders the part in the Gemini API's wire form.
func (p Part) MarshalJSON() ([]byte, error) {
	if p.call != nil {
		return json.Marshal(map[string]any{
			"functionCall": map[string]any{"name": p.call.Name, "args": p.call.Args},
		})
	}
	if p.thought {
		return json.Marshal(map[string]any{"text": p.text, "thought": true})
	}
	return json.Marshal(map[string]any{"text": p.text})
}

// Request is one model call the CLI made, as received.
type Request struct {
	// Model is the model name taken from the URL path.
	Model string
	// Method is the API method: "streamGenerateContent", "generateContent",
	// "countTokens", ...
	Method string
	// Body is the raw JSON request body.
	Body []byte
	// Time is when the fake received the request.
	Time time.Time
}

// FunctionResponse is a tool result the CLI sent back to the model.
type FunctionResponse struct {
	Name     string         `json:"name"`
	Response map[string]any `json:"response"`
}

type wirePart struct {
	Text             string            `json:"text"`
	FunctionResponse *FunctionResponse `json:"functionResponse"`
	FunctionCall     *struct {
		Name string         `json:"name"`
		Args map[string]any `json:"args"`
	} `json:"functionCall"`
}

type wireRequest struct {
	Contents []struct {
		Role  string     `json:"role"`
		Parts []wirePart `json:"parts"`
	} `json:"contents"`
	SystemInstruction *struct {
		Parts []wirePart `json:"parts"`
	} `json:"systemInstruction"`
	GenerationConfig *struct {
		ResponseMimeType   string          `json:"responseMimeType"`
		ResponseJSONSchema json.RawMessage `json:"responseJsonSchema"`
		ResponseSchema     json.RawMessage `json:"responseSchema"`
	} `json:"generationConfig"`
	// Some SDK versions put the generation options at the top level.
	ResponseMimeType   string          `json:"responseMimeType"`
	ResponseJSONSchema json.RawMessage `json:"responseJsonSchema"`
	ResponseSchema     json.RawMessage `json:"responseSchema"`
}

func (r Request) decode() wireRequest {
	var w wireRequest
	_ = json.Unmarshal(r.Body, &w) // a body that does not parse simply has no parts
	return w
}

// Text returns the text of every text part of every content in the request,
// in order, joined by newlines. The system instruction is not included. This
// is where the CLI puts the user's prompt and the editor context it got from
// the IDE.
func (r Request) Text() string {
	var b strings.Builder
	for _, c := range r.decode().Contents {
		for _, p := range c.Parts {
			if p.Text == "" {
				continue
			}
			if b.Len() > 0 {
				b.WriteByte('\n')
			}
			b.WriteString(p.Text)
		}
	}
	return b.String()
}

// SystemInstruction returns the text of the request's system instruction.
func (r Request) SystemInstruction() string {
	w := r.decode()
	if w.SystemInstruction == nil {
		return ""
	}
	var parts []string
	for _, p := range w.SystemInstruction.Parts {
		parts = append(parts, p.Text)
	}
	return strings.Join(parts, "\n")
}

// FunctionResponses returns the tool results carried by the request, oldest
// first.
func (r Request) FunctionResponses() []FunctionResponse {
	var out []FunctionResponse
	for _, c := range r.decode().Contents {
		for _, p := range c.Parts {
			if p.FunctionResponse != nil {
				out = append(out, *p.FunctionResponse)
			}
		}
	}
	return out
}

// editorContextIntro starts the text part in which the CLI hands the model
// the full editor context it got from the IDE (core/client.js).
const editorContextIntro = "Here is the user's editor context as a JSON object."

// EditorContext is the editor context the CLI sends the model, as JSON.
type EditorContext struct {
	ActiveFile *struct {
		Path   string `json:"path"`
		Cursor *struct {
			Line      int `json:"line"`
			Character int `json:"character"`
		} `json:"cursor"`
		SelectedText string `json:"selectedText"`
	} `json:"activeFile"`
	OtherOpenFiles []string `json:"otherOpenFiles"`
}

// EditorContext returns the last full editor context in the request (the CLI
// sends one with the first prompt of a session, and after a reset; later
// prompts carry only changes, which this does not decode).
func (r Request) EditorContext() (EditorContext, bool) {
	var found EditorContext
	ok := false
	for _, c := range r.decode().Contents {
		for _, p := range c.Parts {
			at := strings.Index(p.Text, editorContextIntro)
			if at < 0 {
				continue
			}
			m := fenced.FindStringSubmatch(p.Text[at:])
			if m == nil {
				continue
			}
			var ec EditorContext
			if json.Unmarshal([]byte(m[1]), &ec) == nil {
				found, ok = ec, true
			}
		}
	}
	return found, ok
}

// jsonSchema returns the JSON schema the request asks its reply to follow,
// and whether it asks for JSON at all.
func (r Request) jsonSchema() (json.RawMessage, bool) {
	w := r.decode()
	mime, js, s := w.ResponseMimeType, w.ResponseJSONSchema, w.ResponseSchema
	if g := w.GenerationConfig; g != nil {
		if g.ResponseMimeType != "" {
			mime = g.ResponseMimeType
		}
		if len(g.ResponseJSONSchema) > 0 {
			js = g.ResponseJSONSchema
		}
		if len(g.ResponseSchema) > 0 {
			s = g.ResponseSchema
		}
	}
	switch {
	case len(js) > 0 && string(js) != "null":
		return js, true
	case len(s) > 0 && string(s) != "null":
		return s, true
	case mime == "application/json":
		return nil, true
	}
	return nil, false
}

// Server is a running fake Gemini API. It is closed when the test that
// started it ends.
type Server struct {
	// URL is the base URL to put in GOOGLE_GEMINI_BASE_URL, e.g.
	// "http://127.0.0.1:40123".
	URL string

	hs *httptest.Server

	mu        sync.Mutex
	script    [][]Part
	main      []Request
	aux       []Request
	unhandled []string
	changed   chan struct{}
}

// Start starts a fake Gemini API on 127.0.0.1 and closes it when t ends.
func Start(t testing.TB) *Server {
	t.Helper()
	s := &Server{changed: make(chan struct{})}
	s.hs = httptest.NewServer(http.HandlerFunc(s.serveHTTP))
	s.URL = s.hs.URL
	t.Cleanup(s.hs.Close)
	return s
}

// Reply scripts the model's next turn: the next main request that has not
// been answered yet gets these parts, in order. Turns are used in the order
// they were scripted; once they run out, main requests get a short text
// ([DefaultReplyText]).
func (s *Server) Reply(parts ...Part) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.script = append(s.script, append([]Part(nil), parts...))
}

// Requests returns every main (conversation) request received so far, oldest
// first.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.main...)
}

// Auxiliary returns every other model request the fake answered by itself
// (routing, next-speaker checks, summaries, ...), oldest first.
func (s *Server) Auxiliary() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.aux...)
}

// Unhandled returns "METHOD /path" for every request the fake did not
// understand and answered with 404.
func (s *Server) Unhandled() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.unhandled...)
}

// WaitRequests waits until at least n main requests have arrived and returns
// all of them. It fails the test if that does not happen within timeout.
func (s *Server) WaitRequests(t testing.TB, n int, timeout time.Duration) []Request {
	t.Helper()
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	for {
		s.mu.Lock()
		if len(s.main) >= n {
			out := append([]Request(nil), s.main...)
			s.mu.Unlock()
			return out
		}
		got, changed := len(s.main), s.changed
		s.mu.Unlock()
		select {
		case <-changed:
		case <-deadline.C:
			t.Fatalf("fakegemini: waited %v for %d main request(s), got %d (auxiliary: %d, unhandled: %v)",
				timeout, n, got, len(s.Auxiliary()), s.Unhandled())
			return nil
		}
	}
}

// record appends req to the main or auxiliary list and, for a main request,
// takes the next scripted turn.
func (s *Server) record(req Request, isMain bool) []Part {
	s.mu.Lock()
	defer s.mu.Unlock()
	var turn []Part
	if isMain {
		s.main = append(s.main, req)
		if len(s.script) > 0 {
			turn, s.script = s.script[0], s.script[1:]
		} else {
			turn = []Part{Text(DefaultReplyText)}
		}
	} else {
		s.aux = append(s.aux, req)
	}
	close(s.changed)
	s.changed = make(chan struct{})
	return turn
}

// modelPath matches ".../models/{model}:{method}" as the genai SDK builds it.
var modelPath = regexp.MustCompile(`/models/([^/:]+):([A-Za-z]+)$`)

func (s *Server) serveHTTP(w http.ResponseWriter, r *http.Request) {
	m := modelPath.FindStringSubmatch(r.URL.Path)
	if r.Method == http.MethodGet && strings.HasSuffix(r.URL.Path, "/models") {
		writeJSON(w, map[string]any{"models": []any{}})
		return
	}
	if m == nil || r.Method != http.MethodPost {
		s.mu.Lock()
		s.unhandled = append(s.unhandled, r.Method+" "+r.URL.Path)
		s.mu.Unlock()
		writeError(w, http.StatusNotFound, fmt.Sprintf("fakegemini: no handler for %s %s", r.Method, r.URL.Path))
		return
	}
	body, err := io.ReadAll(r.Body)
	if err != nil {
		writeError(w, http.StatusBadRequest, "fakegemini: reading body: "+err.Error())
		return
	}
	req := Request{Model: m[1], Method: m[2], Body: body, Time: time.Now()}
	if !json.Valid(body) {
		s.record(req, false)
		writeError(w, http.StatusBadRequest, "fakegemini: request body is not JSON")
		return
	}

	switch req.Method {
	case "countTokens":
		s.record(req, false)
		writeJSON(w, map[string]any{"totalTokens": len(body)/4 + 1})
	case "embedContent", "batchEmbedContents":
		s.record(req, false)
		writeJSON(w, map[string]any{"embedding": map[string]any{"values": []float64{0, 0, 0}},
			"embeddings": []any{map[string]any{"values": []float64{0, 0, 0}}}})
	case "generateContent", "streamGenerateContent":
		stream := req.Method == "streamGenerateContent"
		if schema, wantsJSON := req.jsonSchema(); wantsJSON {
			s.record(req, false)
			reply, err := json.Marshal(fillSchema(schema, "", req.Text()))
			if err != nil {
				writeError(w, http.StatusInternalServerError, "fakegemini: "+err.Error())
				return
			}
			writeTurn(w, stream, req.Model, []Part{Text(string(reply))})
			return
		}
		if !stream {
			// Non-streaming free-text calls are the CLI's own helpers
			// (summaries, titles, acknowledgements).
			s.record(req, false)
			writeTurn(w, false, req.Model, []Part{Text(DefaultReplyText)})
			return
		}
		writeTurn(w, true, req.Model, s.record(req, true))
	default:
		s.mu.Lock()
		s.unhandled = append(s.unhandled, r.Method+" "+r.URL.Path)
		s.mu.Unlock()
		writeError(w, http.StatusNotFound, "fakegemini: unsupported method "+req.Method)
	}
}

func candidate(parts []Part, final bool) map[string]any {
	c := map[string]any{
		"content": map[string]any{"role": "model", "parts": parts},
		"index":   0,
	}
	if final {
		c["finishReason"] = "STOP"
	}
	return c
}

func response(model string, parts []Part, final bool) map[string]any {
	r := map[string]any{
		"candidates":   []any{candidate(parts, final)},
		"modelVersion": model,
	}
	if final {
		r["usageMetadata"] = map[string]any{
			"promptTokenCount": 10, "candidatesTokenCount": 5, "totalTokenCount": 15,
		}
	}
	return r
}

// writeTurn answers with one model turn, either as a single JSON response or
// as a server-sent-event stream with one event per part; the last event
// carries finishReason STOP, without which the CLI retries the call.
func writeTurn(w http.ResponseWriter, stream bool, model string, parts []Part) {
	if len(parts) == 0 {
		parts = []Part{Text(DefaultReplyText)}
	}
	if !stream {
		writeJSON(w, response(model, parts, true))
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	flusher, _ := w.(http.Flusher)
	for i, p := range parts {
		data, err := json.Marshal(response(model, []Part{p}, i == len(parts)-1))
		if err != nil {
			return
		}
		if _, err := fmt.Fprintf(w, "data: %s\r\n\r\n", data); err != nil {
			return
		}
		if flusher != nil {
			flusher.Flush()
		}
	}
}

func writeJSON(w http.ResponseWriter, v any) {
	data, err := json.Marshal(v)
	if err != nil {
		writeError(w, http.StatusInternalServerError, "fakegemini: "+err.Error())
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(data)
}

func writeError(w http.ResponseWriter, code int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	data, _ := json.Marshal(map[string]any{"error": map[string]any{
		"code": code, "message": msg, "status": http.StatusText(code),
	}})
	_, _ = w.Write(data)
}

// fenced matches the first ``` fenced block in a prompt.
var fenced = regexp.MustCompile("(?s)```[a-z]*\\n(.*?)\\n```")

// fillSchema builds a value that satisfies schema (a JSON schema or a Gemini
// "Schema", whose type names are upper case). Properties whose meaning the
// CLI acts on get values that keep the conversation where the test put it:
// the user speaks next, nothing is a loop, routing picks the fast model, and
// an escaping correction returns the text unchanged.
func fillSchema(raw json.RawMessage, name, prompt string) any {
	switch name {
	case "next_speaker":
		return "user"
	case "complexity_score":
		return 10
	case "model_choice":
		return "flash"
	case "unproductive_state_confidence", "confidence":
		return 0
	case "corrected_string_escaping", "corrected_new_string_escaping", "corrected_target_snippet",
		"corrected_new_string", "corrected_old_string":
		if m := fenced.FindStringSubmatch(prompt); m != nil {
			return m[1]
		}
	}
	var s struct {
		Type       any                        `json:"type"`
		Properties map[string]json.RawMessage `json:"properties"`
		Items      json.RawMessage            `json:"items"`
		Enum       []any                      `json:"enum"`
		Minimum    *float64                   `json:"minimum"`
	}
	if len(raw) == 0 || json.Unmarshal(raw, &s) != nil {
		return map[string]any{}
	}
	if len(s.Enum) > 0 {
		return s.Enum[0]
	}
	typ := ""
	switch t := s.Type.(type) {
	case string:
		typ = strings.ToLower(t)
	case []any: // ["string", "null"]
		for _, e := range t {
			if str, ok := e.(string); ok && str != "null" {
				typ = strings.ToLower(str)
				break
			}
		}
	}
	if typ == "" && s.Properties != nil {
		typ = "object"
	}
	switch typ {
	case "object":
		out := map[string]any{}
		keys := make([]string, 0, len(s.Properties))
		for k := range s.Properties {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			out[k] = fillSchema(s.Properties[k], k, prompt)
		}
		return out
	case "array":
		return []any{}
	case "integer", "number":
		if s.Minimum != nil {
			return *s.Minimum
		}
		return 1
	case "boolean":
		return false
	case "string":
		return "Answered by the test's fake Gemini API."
	}
	return map[string]any{}
}
