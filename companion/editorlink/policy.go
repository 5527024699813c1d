package editorlink

import (
	"fmt"
	"strings"
	"time"

	"github.com/gemini-ide-companion/gemini-ide-companion/companion/protocol"
	idectx "github.com/gemini-ide-companion/gemini-ide-companion/context"
)

// maxSelectionBytes is enough UTF-8 for the CLI's 16384 UTF-16 units in
// every script, plus a little so the sidecar can tell the text was cut.
const maxSelectionBytes = 4*idectx.MaxSelectedUTF16 + 16

// newPolicy returns the policy for an editor whose restart command is
// restartCommand ("" when the plugin did not say), given how long it may
// take to answer (companion.Options.EditorTimeout): what every plugin does
// the same way, decided here once and sent in the initialize result
// (protocol 2).
func newPolicy(restartCommand string, editorTimeout time.Duration) protocol.Policy {
	again := "restart the companion to try again"
	if c := strings.TrimSpace(restartCommand); c != "" {
		again = fmt.Sprintf("run %s to try again", c)
	}
	return protocol.Policy{
		Restart: protocol.RestartPolicy{DelaysMs: []int{100, 500, 1000, 2000, 5000}, WindowMs: 60000, MaxRestarts: 5},
		Limits: protocol.Limits{
			MaxSelectionBytes:    maxSelectionBytes,
			MaxOpenFiles:         idectx.MaxOpenFiles,
			MaxSelectedTextUtf16: idectx.MaxSelectedUTF16,
			MaxMessageBytes:      protocol.MaxMessageBytes,

			EditorRequestTimeoutMs: int(editorTimeout.Milliseconds()),
			MaxToolResults:         protocol.MaxToolResults,
			MaxToolResultBytes:     protocol.MaxToolResultBytes,
		},
		Messages: protocol.Messages{
			Restarting: "gemini-ide-companion exited ({reason}); restarting it. Gemini CLI sessions reconnect with /ide enable.",
			GaveUp:     fmt.Sprintf("gemini-ide-companion exited {count} times in a minute ({reason}); not restarting it: %s.", again),
			Restarted:  "gemini-ide-companion restarted; Gemini CLI sessions reconnect with /ide enable.",
		},
	}
}

// statusText is the status line for a plugin to show as is.
func statusText(connected int) string {
	switch connected {
	case 0:
		return "Gemini: no CLI connected"
	case 1:
		return "Gemini: 1 CLI connected"
	}
	return fmt.Sprintf("Gemini: %d CLIs connected", connected)
}
