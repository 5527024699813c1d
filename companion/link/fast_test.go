package link

import (
	"bytes"
	"encoding/json"
	"testing"
)

// TestDecodeFastTakesCommonLines: the lines plugins send (cursor reports,
// requests with a number or string id) take the fast path, and come out as
// json.Unmarshal reads them; lines outside its shapes go to json.Unmarshal.
func TestDecodeFastTakesCommonLines(t *testing.T) {
	taken := []string{
		`{"jsonrpc":"2.0","method":"context/selectionChanged","params":{"path":"/p/a.go","cursor":{"line":3,"character":1}}}`,
		`{"method":"context/fileFocused","jsonrpc":"2.0","params":{"path":"C:\\Users\\me\\a.go","selectedText":"x\ny é"}}`,
		` { "jsonrpc" : "2.0" , "id" : 7 , "method" : "status/get" } `,
		`{"jsonrpc":"2.0","id":"a-1","method":"diff/accepted","params":{"filePath":"/p/a","content":"\u00e9 [1, 2.5e3, true, null]"}}`,
		`{"jsonrpc":"2.0","method":"x","params":[]}`,
	}
	for _, line := range taken {
		var c Conn
		var fast wireMessage
		if !c.decodeFast([]byte(line), &fast) {
			t.Errorf("fast path refused %s", line)
			continue
		}
		sameAsJSON(t, []byte(line), fast)
	}
	slow := []string{
		`{"jsonrpc":"2.0","Method":"context/selectionChanged","params":{}}`, // a key of another case
		`{"jsonrpc":"2.0","method":"a","method":"b"}`,                       // twice
		`{"jsonrpc":"2.0","method":"a","params":null}`,                      // null params
		`{"jsonrpc":"2.0","id":1,"result":{}}`,                              // a response
		`{"jsonrpc":"2.0","method":"a\u0062"}`,                              // an escape in the method
		`{"jsonrpc":"2.0","method":"a","params":{"a":1}`,                    // cut short
		`{"jsonrpc":"2.0","method":"a","params":{"a":01}}`,                  // not JSON
		`{"jsonrpc":"2.0","method":"a","params":{"a":"\x"}}`,                // a bad escape
		`{"jsonrpc":"2.0","method":"a","id":1.5}`,                           // not an integer id
		`{"jsonrpc":"2.0","method":"a"} x`,                                  // trailing bytes
		`{"jsonrpc":"1.0","method":"a"}`,                                    // another version
		`{"jsonrpc":"2.0","method":"a","params":` + deep(40) + `}`,          // deeper than it follows
		`{"jsonrpc":"2.0","method":"a","params":{"s":"` + "\x01" + `"}}`,    // a control character
		`{"jsonrpc":"2.0","method":"é"}`,                                    // not ASCII
		`{"jsonrpc":"2.0","method":"a","params":{"a":tru}}`,                 // not a literal
		`{"jsonrpc":"2.0","method":"a","params":{"a":1,}}`,                  // a trailing comma
		`{"jsonrpc":"2.0"}`,                                                 // no method
	}
	for _, line := range slow {
		var c Conn
		var fast wireMessage
		if c.decodeFast([]byte(line), &fast) {
			t.Errorf("fast path took %s", line)
		}
	}
}

func deep(n int) string {
	return string(bytes.Repeat([]byte("["), n)) + string(bytes.Repeat([]byte("]"), n))
}

// sameAsJSON fails unless json.Unmarshal reads line as fast.
func sameAsJSON(t *testing.T, line []byte, fast wireMessage) {
	t.Helper()
	var slow wireMessage
	if err := json.Unmarshal(line, &slow); err != nil {
		t.Fatalf("fast path took %q, which json.Unmarshal refuses: %v", line, err)
	}
	if fast.JSONRPC != slow.JSONRPC || (fast.Method == nil) != (slow.Method == nil) ||
		(fast.Method != nil && *fast.Method != *slow.Method) ||
		!bytes.Equal(fast.ID, slow.ID) || !bytes.Equal(fast.Params, slow.Params) ||
		slow.Result != nil || slow.Error != nil {
		t.Fatalf("%q: fast path read %+v, json.Unmarshal %+v", line, fast, slow)
	}
}

// FuzzDecodeFast: whatever the fast path takes, json.Unmarshal takes too
// and reads the same.
func FuzzDecodeFast(f *testing.F) {
	f.Add([]byte(`{"jsonrpc":"2.0","method":"context/selectionChanged","params":{"path":"/p/a.go","cursor":{"line":3,"character":1}}}`))
	f.Add([]byte(`{"jsonrpc":"2.0","id":"x","method":"m","params":[1,-0.5E+2,"\ud83d\ude00",{"a":[true,false,null]}]}`))
	f.Add([]byte(`{"jsonrpc":"2.0","id":12,"method":"m"}`))
	f.Fuzz(func(t *testing.T, line []byte) {
		var c Conn
		var fast wireMessage
		if c.decodeFast(line, &fast) {
			sameAsJSON(t, line, fast)
		}
	})
}
