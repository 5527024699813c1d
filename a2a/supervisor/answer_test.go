package supervisor

import "testing"

// The supervisor's words map to the A2A server's outcomes; a modified file's
// content is kept byte for byte.
func TestOutcomeOf(t *testing.T) {
	for _, c := range []struct{ in, outcome, rest string }{
		{"approved", "proceed_once", ""},
		{" Approve ", "proceed_once", ""},
		{"denied", "cancel", ""},
		{"abort", "cancel", ""},
		{"modify: new body\n", "modify", "new body\n"},
		{"MODIFY:  two spaces\n\n", "modify", " two spaces\n\n"},
		{"adjust: smaller steps", "text", "smaller steps"},
		{"use the other file", "text", "use the other file"},
	} {
		o, r := outcomeOf(c.in)
		if o != c.outcome || r != c.rest {
			t.Errorf("outcomeOf(%q) = %q, %q; want %q, %q", c.in, o, r, c.outcome, c.rest)
		}
	}
}
