package rpc

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/gemini-ide-companion/gemini-ide-companion/companion/protocol"
)

// TestDecodeFocusTakesCursorReports: the params plugins send with a
// cursor report take the fast path and come out as encoding/json reads
// them; other shapes go to encoding/json.
func TestDecodeFocusTakesCursorReports(t *testing.T) {
	taken := []string{
		`{"path":"/p/a.go","cursor":{"line":3,"character":1}}`,
		`{"path":"/p/a.go","cursor":{"line":3,"character":1},"selectedText":"line one\nline \"two\" é"}`,
		`{ "selectedText" : null , "path" : "C:\\Users\\me\\a.go" , "cursor" : null }`,
		`{"path":"/p/a.go","cursor":{}}`,
		`{}`,
	}
	for _, raw := range taken {
		var fast protocol.FocusParams
		if !decodeFocus([]byte(raw), &fast) {
			t.Errorf("fast path refused %s", raw)
			continue
		}
		sameFocus(t, []byte(raw), fast)
	}
	slow := []string{
		`{"path":"/p/a","Path":"/q"}`,                         // a key of another case
		`{"path":"/p/a","path":"/q"}`,                         // twice
		`{"path":"/p/\u00e9"}`,                                // \u escape
		`{"path":"/p/a","cursor":{"line":1.0,"character":1}}`, // not an integer
		`{"path":"/p/a","cursor":{"line":1234567890123456}}`,  // too long
		`{"path":"/p/a","isActive":true}`,                     // another key
		`{"path":null}`,                                       // null path
		`{"path":"/p/a"} x`,                                   // trailing bytes
		`{"path":"/p/` + "\xff" + `"}`,                        // not UTF-8
		`{"path":"/p/a","cursor":{"line":01}}`,                // not JSON
	}
	for _, raw := range slow {
		var fast protocol.FocusParams
		if decodeFocus([]byte(raw), &fast) {
			t.Errorf("fast path took %s", raw)
		}
	}
}

func sameFocus(t *testing.T, raw []byte, fast protocol.FocusParams) {
	t.Helper()
	var slow protocol.FocusParams
	if err := json.Unmarshal(raw, &slow); err != nil {
		t.Fatalf("fast path took %q, which encoding/json refuses: %v", raw, err)
	}
	if !reflect.DeepEqual(fast, slow) {
		t.Fatalf("%q: fast path read %+v, encoding/json %+v", raw, fast, slow)
	}
}

// FuzzDecodeFocus: whatever the fast path takes, encoding/json takes too
// and reads the same.
func FuzzDecodeFocus(f *testing.F) {
	f.Add([]byte(`{"path":"/p/a.go","cursor":{"line":3,"character":1},"selectedText":"a\tb"}`))
	f.Add([]byte(`{"path":"C:\\x","cursor":null,"selectedText":null}`))
	f.Fuzz(func(t *testing.T, raw []byte) {
		var fast protocol.FocusParams
		if decodeFocus(raw, &fast) {
			sameFocus(t, raw, fast)
		}
	})
}
