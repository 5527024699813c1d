package supervisor

import (
	"strings"
	"testing"
)

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

func TestCheckpointRaceFailureSaysWhatToDo(t *testing.T) {
	raw := "Failed to initialize checkpointing: fatal: cannot lock ref 'HEAD': reference already exists\n. Please check that Git is working properly or disable checkpointing."
	if got := explainFailure(raw); !strings.HasPrefix(got, raw) || !strings.Contains(got, "start the task again") {
		t.Fatalf("explainFailure = %q", got)
	}
	if got := explainFailure("model quota exceeded"); got != "model quota exceeded" {
		t.Fatalf("an unrelated failure changed: %q", got)
	}
}
