package agent

import (
	"strings"
	"testing"
)

// The SSE reader takes events far over a2a-go's 64 KiB line limit, joins
// multi-line data, and ignores comments and other fields.
func TestReadSSE(t *testing.T) {
	big := strings.Repeat("x", 300<<10)
	in := ": comment\nevent: message\ndata: {\"a\":\"" + big + "\"}\n\ndata: one\ndata: two\r\n\r\ndata: last"
	var got []string
	for data, err := range readSSE(strings.NewReader(in)) {
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, string(data))
	}
	if len(got) != 3 || got[0] != `{"a":"`+big+`"}` || got[1] != "one\ntwo" || got[2] != "last" {
		t.Fatalf("events: %d, sizes %v", len(got), func() (n []int) {
			for _, g := range got {
				n = append(n, len(g))
			}
			return
		}())
	}
}

func TestBaseURL(t *testing.T) {
	for in, want := range map[string]string{
		"http://127.0.0.1:4000":                             "http://127.0.0.1:4000",
		"http://127.0.0.1:4000/":                            "http://127.0.0.1:4000",
		"http://127.0.0.1:4000/.well-known/agent-card.json": "http://127.0.0.1:4000",
	} {
		if got, err := BaseURL(in); err != nil || got != want {
			t.Errorf("BaseURL(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "ftp://x", "127.0.0.1:4000", "http://"} {
		if _, err := BaseURL(bad); err == nil {
			t.Errorf("BaseURL(%q) succeeded", bad)
		}
	}
}
