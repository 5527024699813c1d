package mcptools

import "testing"

// A decision may come as a string or as an object.
func TestAnswerText(t *testing.T) {
	for in, want := range map[string]string{
		`"approved"`:                          "approved",
		`{"answer":"denied"}`:                 "denied",
		`{"action":"modify","content":"x\n"}`: "modify: x\n",
	} {
		got, err := answerText([]byte(in))
		if err != nil || got != want {
			t.Errorf("answerText(%s) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, bad := range []string{``, `null`, `42`, `{"other":1}`} {
		if _, err := answerText([]byte(bad)); err == nil {
			t.Errorf("answerText(%s) succeeded", bad)
		}
	}
}
