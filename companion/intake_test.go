package companion

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
)

// scan runs the intake's scanner over body as a request of unknown length.
func scan(t *testing.T, body []byte) (*liftScanner, error) {
	t.Helper()
	ls := &liftScanner{br: bufio.NewReaderSize(bytes.NewReader(body), 16), size: -1, key: "lifted:KEY"}
	return ls, ls.run()
}

// openDiffBody is a tools/call of openDiff whose newContent is raw JSON.
func openDiffBody(rawContent string) []byte {
	return []byte(`{"method":"tools/call","params":{"name":"openDiff","arguments":{"filePath":"/w/f.txt","newContent":` +
		rawContent + `}},"jsonrpc":"2.0","id":7}`)
}

// TestIntakeDecodesLikeEncodingJSON holds the lifted content to what
// encoding/json makes of the same string, for escapes, surrogates (paired,
// lone, reversed), invalid UTF-8 and multi-byte runes cut by the reader's
// buffer, and the body the SDK gets to the original with the string
// replaced by the key.
func TestIntakeDecodesLikeEncodingJSON(t *testing.T) {
	cases := []string{
		`""`,
		`"plain text\nwith a newline"`,
		`"quotes \" and \\ backslashes \/ slash \b\f\n\r\t"`,
		`"\u00e9\u4e2d\uD83D\uDE00 pair, lone \uD83D then text, reversed \uDE00\uD83D, lone at end \uD800"`,
		`"\uD83D\u0041 high then not low"`,
		"\"invalid \xff\xfe utf8 and cut \xe4\xb8 sequence\"",
		"\"日本語のテキスト、とても長い行が続きます。😀 emoji 😀\"",
	}
	r := rand.New(rand.NewPCG(1, 2))
	for range 200 {
		b := make([]byte, r.IntN(100))
		for i := range b {
			b[i] = byte(r.IntN(256))
		}
		raw, _ := json.Marshal(string(b))
		cases = append(cases, string(raw))
		// Raw invalid UTF-8 in the JSON text itself.
		s := strings.ReplaceAll(strings.ReplaceAll(string(b), `\`, ``), `"`, ``)
		var clean strings.Builder
		for _, c := range []byte(s) {
			if c >= ' ' {
				clean.WriteByte(c)
			}
		}
		cases = append(cases, `"`+clean.String()+`"`)
	}
	for _, c := range cases {
		body := openDiffBody(c)
		var want string
		if err := json.Unmarshal([]byte(c), &want); err != nil {
			t.Fatalf("bad case %q: %v", c, err)
		}
		ls, err := scan(t, body)
		if err != nil {
			t.Fatalf("%q: %v", c, err)
		}
		if ls.content == nil {
			t.Fatalf("%q: not lifted", c)
		}
		if *ls.content != want {
			t.Fatalf("%q: lifted %q, encoding/json %q", c, *ls.content, want)
		}
		if got, wantBody := ls.out.String(), string(openDiffBody(`"lifted:KEY"`)); got != wantBody {
			t.Fatalf("body for the SDK:\n%s\nwant\n%s", got, wantBody)
		}
	}
}

// TestIntakeLeavesOtherBodiesAlone: whatever is not a tools/call of
// openDiff with a string newContent reaches the SDK byte for byte.
func TestIntakeLeavesOtherBodiesAlone(t *testing.T) {
	bodies := []string{
		`{"method":"tools/call","params":{"name":"closeDiff","arguments":{"filePath":"/w/f","newContent":"x"}},"jsonrpc":"2.0","id":1}`,
		`{"method":"tools/list","params":{"arguments":{"newContent":"x"}},"jsonrpc":"2.0","id":1}`,
		`{"params":{"name":"openDiff","arguments":{"newContent":"x"}},"method":"tools/call","jsonrpc":"2.0","id":1}`,
		`{"method":"tools/call","params":{"name":"openDiff","arguments":{"newContent":12}},"jsonrpc":"2.0","id":1}`,
		`{"method":"tools/call","params":{"name":"openDiff","arguments":{"new\u0043ontent":"x"}},"jsonrpc":"2.0","id":1}`,
		`[{"method":"tools/call","params":{"name":"openDiff","arguments":{"newContent":"x"}},"jsonrpc":"2.0","id":1}]`,
		`{"method":"tools/call","params":{"name":"openDiff","_meta":{"a":[1,{"b":"}]"}],"c":null},"arguments":{"newContent":1e5}}} trailing`,
		`{"method":"tools/call",,"params":{}}`,
		`{"method":"tools/call","params":{"name":"openDiff","arguments":{"x":[[[[[[`,
		`not json at all`,
		``,
	}
	for _, b := range bodies {
		ls, err := scan(t, []byte(b))
		if err != nil {
			t.Fatalf("%s: %v", b, err)
		}
		if ls.content != nil {
			t.Fatalf("%s: lifted %q", b, *ls.content)
		}
		if ls.out.String() != b {
			t.Fatalf("changed:\n%s\nto\n%s", b, ls.out.String())
		}
	}
	// Spaces anywhere, and another argument after the content.
	body := " {\n \"jsonrpc\" : \"2.0\" , \"id\" : 3 , \"method\" : \"tools/call\" , \"params\" : { \"name\" : \"openDiff\" , \"arguments\" : { \"newContent\" : \"a\\nb\" , \"filePath\" : \"/w/f\" } } }\n"
	ls, err := scan(t, []byte(body))
	if err != nil || ls.content == nil || *ls.content != "a\nb" {
		t.Fatalf("spaced body: %v %v", err, ls.content)
	}
	if want := strings.Replace(body, `"a\nb"`, `"lifted:KEY"`, 1); ls.out.String() != want {
		t.Fatalf("spaced body for the SDK: %q", ls.out.String())
	}
}

// TestIntakeRefusesABrokenContentString: a newContent that is not a valid
// JSON string is refused as the SDK refuses malformed bodies.
func TestIntakeRefusesABrokenContentString(t *testing.T) {
	for _, c := range []string{"\"raw\ncontrol\"", `"bad \x escape"`, `"short \u12 escape"`, `"ends in a backslash \`} {
		_, err := scan(t, openDiffBody(c))
		if !errors.Is(err, errBadString) {
			t.Fatalf("%q: got %v, want errBadString", c, err)
		}
	}
	body := openDiffBody(`"cut off`)
	if _, err := scan(t, body[:bytes.Index(body, []byte("off"))+3]); !errors.Is(err, errBadString) {
		t.Fatalf("body ending inside newContent: got %v, want errBadString", err)
	}
}

// TestIntakeSizesTheContentOnlyWithinItsBudget: a body's Content-Length
// sizes the content's buffer in advance only while the budget allows; past
// it, the buffer grows with the bytes that actually arrive, and the content
// is the same.
func TestIntakeSizesTheContentOnlyWithinItsBudget(t *testing.T) {
	body := openDiffBody(`"` + strings.Repeat("a", 1000) + `"`)
	for _, allow := range []bool{true, false} {
		asked := int64(0)
		ls := &liftScanner{br: bufio.NewReader(bytes.NewReader(body)), size: int64(len(body)), key: "lifted:K",
			reserve: func(n int64) bool { asked = n; return allow }}
		if err := ls.run(); err != nil || ls.content == nil || *ls.content != strings.Repeat("a", 1000) {
			t.Fatalf("allow %v: %v", allow, err)
		}
		if asked < 1000 || asked > int64(len(body)) {
			t.Fatalf("asked to reserve %d bytes for a %d-byte body", asked, len(body))
		}
	}
}

// FuzzIntakeScanner: whatever the body, the scanner does not fail except
// on a broken newContent; a body it lifts nothing from reaches the SDK
// unchanged; and a body it lifts from, with the content put back as JSON,
// decodes exactly as the original does.
func FuzzIntakeScanner(f *testing.F) {
	f.Add(openDiffBody(`"a\nb \u00e9 \ud83d\ude00"`))
	f.Add(openDiffBody(`"` + "\xff" + `"`))
	f.Add([]byte(`{"method":"tools/call","params":{"name":"openDiff","arguments":{"newContent":"x","newContent":"y"}}}`))
	f.Add([]byte(`[{"method":"tools/call"}]`))
	f.Fuzz(func(t *testing.T, body []byte) {
		const key = "lifted:\x00"
		ls := &liftScanner{br: bufio.NewReaderSize(bytes.NewReader(body), 16), size: int64(len(body)), key: key}
		err := ls.run()
		if err != nil {
			if !errors.Is(err, errBadString) {
				t.Fatalf("scan: %v", err)
			}
			return
		}
		if ls.content == nil {
			if !bytes.Equal(ls.out.Bytes(), body) {
				t.Fatalf("nothing lifted, yet the body changed:\n%q\n%q", body, ls.out.Bytes())
			}
			return
		}
		enc, _ := json.Marshal(*ls.content)
		back := bytes.Replace(ls.out.Bytes(), []byte(`"`+key+`"`), enc, 1)
		var a, b any
		ea, eb := json.Unmarshal(body, &a), json.Unmarshal(back, &b)
		if (ea == nil) != (eb == nil) || (ea == nil && !reflect.DeepEqual(a, b)) {
			t.Fatalf("the body and its lifted form decode differently:\n%q (%v)\n%q (%v)", body, ea, back, eb)
		}
	})
}
