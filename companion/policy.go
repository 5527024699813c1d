package companion

import (
	"fmt"
	"strings"

	"github.com/gemini-ide-companion/gemini-ide-companion/companion/link"
	idectx "github.com/gemini-ide-companion/gemini-ide-companion/context"
)

// Policy is what every plugin does the same way, decided here once and sent
// in the initialize result (protocol 2): when to restart a sidecar that
// died, how much context to send, and the texts to show the user.
type Policy struct {
	Restart  RestartPolicy  `json:"restart"`
	Limits   Limits         `json:"limits"`
	Messages PolicyMessages `json:"messages"`
}

// RestartPolicy says how a plugin restarts a sidecar that exited without
// being asked to: wait DelaysMs[n] (n = restarts within the last WindowMs,
// the last entry repeating), and give up after MaxRestarts in WindowMs.
type RestartPolicy struct {
	DelaysMs    []int `json:"delaysMs"`
	WindowMs    int   `json:"windowMs"`
	MaxRestarts int   `json:"maxRestarts"`
}

// Limits are the sizes plugins need to know. MaxSelectionBytes is how much
// selected text a plugin sends at most (the sidecar makes the exact cut the
// CLI expects); the others are what the sidecar enforces.
type Limits struct {
	MaxSelectionBytes    int `json:"maxSelectionBytes"`
	MaxOpenFiles         int `json:"maxOpenFiles"`
	MaxSelectedTextUTF16 int `json:"maxSelectedTextUtf16"`
	MaxMessageBytes      int `json:"maxMessageBytes"`
}

// PolicyMessages are texts a plugin shows as is when the sidecar cannot
// speak for itself (it has exited), after replacing {reason} and {count}.
type PolicyMessages struct {
	Restarting string `json:"restarting"`
	GaveUp     string `json:"gaveUp"`
	Restarted  string `json:"restarted"`
}

// maxSelectionBytes is enough UTF-8 for the CLI's 16384 UTF-16 units in
// every script, plus a little so the sidecar can tell the text was cut.
const maxSelectionBytes = 4*idectx.MaxSelectedUTF16 + 16

// NewPolicy returns the policy for an editor whose restart command is
// restartCommand ("" when the plugin did not say).
func NewPolicy(restartCommand string) Policy {
	again := "restart the companion to try again"
	if c := strings.TrimSpace(restartCommand); c != "" {
		again = fmt.Sprintf("run %s to try again", c)
	}
	return Policy{
		Restart: RestartPolicy{DelaysMs: []int{100, 500, 1000, 2000, 5000}, WindowMs: 60000, MaxRestarts: 5},
		Limits: Limits{
			MaxSelectionBytes:    maxSelectionBytes,
			MaxOpenFiles:         idectx.MaxOpenFiles,
			MaxSelectedTextUTF16: idectx.MaxSelectedUTF16,
			MaxMessageBytes:      link.DefaultMaxLine,
		},
		Messages: PolicyMessages{
			Restarting: "gemini-ide-companion exited ({reason}); restarting it. Gemini CLI sessions reconnect with /ide enable.",
			GaveUp:     fmt.Sprintf("gemini-ide-companion exited {count} times in a minute ({reason}); not restarting it: %s.", again),
			Restarted:  "gemini-ide-companion restarted; Gemini CLI sessions reconnect with /ide enable.",
		},
	}
}

// StatusText is the status line for a plugin to show as is.
func StatusText(connected int) string {
	switch connected {
	case 0:
		return "Gemini: no CLI connected"
	case 1:
		return "Gemini: 1 CLI connected"
	}
	return fmt.Sprintf("Gemini: %d CLIs connected", connected)
}
