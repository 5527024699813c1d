package transcript

import (
	"bufio"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestMatchFollowsTheREADME(t *testing.T) {
	cases := []struct {
		pattern, actual any
		ok              bool
	}{
		{map[string]any{"a": 1.0}, map[string]any{"a": 1.0, "extra": true}, true},
		{map[string]any{"a": 1.0}, map[string]any{"b": 1.0}, false},
		{map[string]any{"a": Any}, map[string]any{"a": nil}, true},
		{map[string]any{"a": Any}, map[string]any{}, false},
		{String, "x", true},
		{String, 1.0, false},
		{Number, 2.0, true},
		{Number, "2", false},
		{[]any{1.0, 2.0}, []any{1.0, 2.0}, true},
		{[]any{1.0}, []any{1.0, 2.0}, false},
		{"text", "text", true},
		{"text", "other", false},
	}
	for _, c := range cases {
		if ok, _, why := Match(c.pattern, c.actual, nil); ok != c.ok {
			t.Errorf("Match(%v, %v) = %v (%s), want %v", c.pattern, c.actual, ok, why, c.ok)
		}
	}
	ok, caps, _ := Match(map[string]any{"params": map[string]any{"diffId": Number}}, map[string]any{"params": map[string]any{"diffId": 7.0}}, nil)
	if !ok || len(caps) != 1 || caps[0].Key != "diffId" || caps[0].Value != 7.0 {
		t.Errorf("captures %v, want diffId 7", caps)
	}
	last := map[string]any{}
	Remember(last, caps)
	sent := Concretize(map[string]any{"diffId": Number, "name": String, "x": Any}, last).(map[string]any)
	if sent["diffId"] != 7.0 || sent["name"] != "x" || sent["x"] != nil {
		t.Errorf("Concretize sent %v, want the captured diffId and defaults", sent)
	}
	if _, _, why := Match(map[string]any{"a": map[string]any{"b": "x"}}, map[string]any{"a": map[string]any{"b": "y"}}, nil); !strings.HasPrefix(why, "message.a.b:") {
		t.Errorf("mismatch says %q, want it to name message.a.b", why)
	}
}

func TestMatchMessageKeepsKindsAndReplyIDs(t *testing.T) {
	answersFirst := func(id any) string {
		if id != 5.0 {
			return "not the open request"
		}
		return ""
	}
	req := map[string]any{"id": ID, "method": "status/get"}
	if why, _ := MatchMessage(req, map[string]any{"id": "a", "method": "status/get"}, answersFirst); why != "" {
		t.Errorf("a request with its own id: %s", why)
	}
	if why, _ := MatchMessage(req, map[string]any{"method": "status/get"}, answersFirst); why == "" {
		t.Error("a notification matched a request line")
	}
	reply := map[string]any{"id": ID, "result": map[string]any{}}
	if why, _ := MatchMessage(reply, map[string]any{"id": 5.0, "result": map[string]any{}}, answersFirst); why != "" {
		t.Errorf("the reply to the open request: %s", why)
	}
	if why, _ := MatchMessage(reply, map[string]any{"id": 6.0, "result": map[string]any{}}, answersFirst); why == "" {
		t.Error("a reply to another request matched")
	}
	if why, _ := MatchMessage(map[string]any{"method": "log"}, map[string]any{"id": 1.0, "method": "log"}, answersFirst); why == "" {
		t.Error("a request matched a notification line")
	}
}

func TestReadFrame(t *testing.T) {
	read := func(in, framing string, strict bool) (string, error) {
		b, err := ReadFrame(bufio.NewReader(strings.NewReader(in)), framing, strict)
		return string(b), err
	}
	if got, err := read("Content-Length: 2\r\n\r\n{}", LSP, true); err != nil || got != "{}" {
		t.Errorf("lsp frame: %q, %v", got, err)
	}
	if _, err := read("Content-Length: 2\n\n{}", LSP, true); err == nil {
		t.Error("strict reading took header lines without CRLF")
	}
	if got, err := read("Content-Length: 2\n\n{}", LSP, false); err != nil || got != "{}" {
		t.Errorf("lenient reading of LF headers: %q, %v", got, err)
	}
	if _, err := read("X-Other: 1\r\n\r\n{}", LSP, true); err == nil {
		t.Error("a header block without Content-Length was taken")
	}
	if _, err := read("", LSP, true); err != io.EOF {
		t.Errorf("clean end: %v, want io.EOF", err)
	}
	if got, err := read("{}\n", NDJSON, true); err != nil || got != "{}" {
		t.Errorf("ndjson: %q, %v", got, err)
	}
	if _, err := read("{}", NDJSON, true); err == nil || err == io.EOF {
		t.Errorf("an unterminated last line: %v, want an error", err)
	}
	if got := string(Frame([]byte("{}"), LSP)); got != "Content-Length: 2\r\n\r\n{}" {
		t.Errorf("Frame = %q", got)
	}
}

func TestParseAndPluginFiles(t *testing.T) {
	dir := t.TempDir()
	shared := filepath.Join(dir, "link", "protocol", "transcripts")
	own := filepath.Join(dir, "own")
	for _, d := range []string{shared, own} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	write := func(path, text string) {
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(shared, "b.jsonl"), `{"comment": "x"}`+"\n\n"+`{"user": {"action": "edit", "content": "c"}}`+"\n")
	write(filepath.Join(shared, "sidecar-errors.jsonl"), `{"plugin": "not json"}`+"\n")
	write(filepath.Join(own, "a.jsonl"), `{"restart": {}}`+"\n")
	files, err := ForPlugins(dir, own)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, f := range files {
		names = append(names, filepath.Base(f))
	}
	if !slices.Equal(names, []string{"b.jsonl", "a.jsonl"}) {
		t.Errorf("plugin transcripts %q, want the shared ones but sidecar-*, then the plugin's own", names)
	}
	tr, err := Parse(filepath.Join(shared, "b.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if len(tr.Steps) != 2 || tr.Steps[1].Line != 3 || tr.Steps[1].User() != (User{Action: "edit", Content: "c"}) {
		t.Errorf("steps %+v", tr.Steps)
	}
	for _, bad := range []string{`{"plugin": {}, "sidecar": {}}`, `{"someone": {}}`, `{"user": "accept"}`, `not json`} {
		write(filepath.Join(dir, "bad.jsonl"), bad+"\n")
		if _, err := Parse(filepath.Join(dir, "bad.jsonl")); err == nil {
			t.Errorf("Parse took %s", bad)
		}
	}
	if _, err := (Step{Line: 1, Actor: "plugin", Body: []byte(`"raw"`)}).Object(); err == nil {
		t.Error("a raw plugin string decoded as a message object")
	}
}
