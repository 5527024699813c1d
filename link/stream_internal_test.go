package link

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
)

type sample struct {
	Name  string  `json:"name"`
	Text  string  `json:"text"`
	Orig  *string `json:"orig"`
	ID    uint64  `json:"id"`
	Flag  bool    `json:"flag,omitempty"`
	Other string  `json:"other,omitempty"`
}

func (s sample) StreamJSON(o *Object) {
	o.String("name", s.Name)
	o.String("text", s.Text)
	if s.Orig == nil {
		o.Value("orig", nil)
	} else {
		o.String("orig", *s.Orig)
	}
	o.Value("id", s.ID)
	if s.Flag {
		o.Value("flag", true)
	}
	if s.Other != "" {
		o.String("other", s.Other)
	}
}

// encodingJSON is what encoding/json writes for v without HTML escaping.
func encodingJSON(t *testing.T, v any) string {
	t.Helper()
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		t.Fatal(err)
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// TestStreamedParamsAreEncodingJSONBytes holds the streamed encoding to
// encoding/json's, byte for byte, for every kind of character (controls,
// quotes, HTML characters, invalid UTF-8, U+2028/2029, astral runes) and
// for strings longer than the writer's chunk.
func TestStreamedParamsAreEncodingJSONBytes(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	alphabet := []string{"a", "\"", "\\", "\n", "\t", "\b", "\f", "\r", "\x00", "\x1f", "\x7f", "<", ">", "&",
		"\xff", "\xe4\xb8", "中", "😀", "\u2028", "\u2029", "\ufffd", " "}
	randText := func(n int) string {
		var b strings.Builder
		for range n {
			b.WriteString(alphabet[r.IntN(len(alphabet))])
		}
		return b.String()
	}
	long := strings.Repeat("x", 3*jsonChunk+7) + "\n" + randText(5000) + strings.Repeat("é", jsonChunk)
	for i := range 300 {
		orig := randText(r.IntN(200))
		s := sample{Name: randText(r.IntN(10)), Text: randText(r.IntN(300)), ID: r.Uint64(), Flag: i%2 == 0}
		if i%3 != 0 {
			s.Orig = &orig
		}
		if i%5 == 0 {
			s.Other = randText(3)
		}
		if i == 7 {
			s.Text = long
		}
		var out bytes.Buffer
		j := newJSONWriter(&out)
		streamParams(j, s)
		if err := j.flush(); err != nil {
			t.Fatal(err)
		}
		if want := encodingJSON(t, s); out.String() != want {
			t.Fatalf("case %d:\nstreamed %q\nencoding/json %q", i, out.String(), want)
		}
		if j.n != int64(out.Len()) {
			t.Fatalf("counted %d bytes, wrote %d", j.n, out.Len())
		}
	}
}

// TestStreamedMessageInBothFramings: a streamed message goes out as one
// NDJSON line, or under an LSP header whose Content-Length is exactly its
// body, and is in both the bytes encoding/json writes.
func TestStreamedMessageInBothFramings(t *testing.T) {
	orig := strings.Repeat("é\"<x>\n", 3*jsonChunk)
	s := sample{Name: "n", Text: strings.Repeat("t\t", jsonChunk), Orig: &orig, ID: 9}
	want := `{"jsonrpc":"2.0","method":"diff/open","params":` + encodingJSON(t, s) + `}`
	for _, f := range []Framing{NDJSON, LSP} {
		var out bytes.Buffer
		c := New(strings.NewReader(""), &out, nil, WithFraming(f))
		if err := c.Notify("diff/open", s); err != nil {
			t.Fatal(err)
		}
		got := out.String()
		if f == LSP {
			head, body, ok := strings.Cut(got, "\r\n\r\n")
			if !ok || head != "Content-Length: "+strconv.Itoa(len(body)) {
				t.Fatalf("LSP header %q for a body of %d bytes", head, len(body))
			}
			got = body
		} else {
			if !strings.HasSuffix(got, "\n") || strings.Count(got, "\n") != 1 {
				t.Fatal("NDJSON: not one line")
			}
			got = strings.TrimSuffix(got, "\n")
		}
		if got != want {
			t.Fatalf("%v: the streamed message differs from encoding/json's (%d vs %d bytes)", f, len(got), len(want))
		}
	}
}
