package rpc

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/gemini-ide-companion/gemini-ide-companion/link"
	"github.com/gemini-ide-companion/gemini-ide-companion/link/protocol"
)

type nopLinkHandler struct{}

func (nopLinkHandler) HandleRequest(context.Context, string, json.RawMessage) (any, error) {
	return nil, nil
}
func (nopLinkHandler) HandleNotification(context.Context, string, json.RawMessage) {}

// line is what a Conn writes for a notification with params.
func line(t *testing.T, params any) string {
	t.Helper()
	var out bytes.Buffer
	c := link.New(strings.NewReader(""), &out, nopLinkHandler{})
	if err := c.Notify("m", params); err != nil {
		t.Fatal(err)
	}
	return out.String()
}

// TestStreamedParamsMatchTheirJSON: diff/open and diff/state params,
// written field by field by their generated encoders, are the bytes
// encoding/json writes for the same struct, with every optional field set
// and unset.
func TestStreamedParamsMatchTheirJSON(t *testing.T) {
	orig, disk, content := "old <text>\n\"quoted\"\u2028", "disk\x00\xff", "accepted & kept"
	requests := []protocol.DiffOpenParams{
		{FilePath: "/w/f.txt", NewContent: "new\n", Title: "f.txt ↔ proposed", DiffID: 1},
		{FilePath: "/w/f.txt", NewContent: strings.Repeat("line\t\"x\"\n", 20000), OriginalContent: &orig,
			UnifiedDiff: "--- a\n+++ b\n", Title: "t", DiffID: 1 << 60, Owner: "abc123", OutsideWorkspace: true,
			Notice: "outside", Queued: 2},
	}

	for _, r := range requests {
		if got, want := line(t, diffOpenParamsStream(r)), line(t, r); got != want {
			t.Fatalf("diff/open streamed:\n%.300s\nencoding/json:\n%.300s", got, want)
		}
	}
	states := []protocol.DiffStateParams{
		{FilePath: "/w/f", DiffID: 3, State: protocol.StateQueued},
		{FilePath: "/w/f", DiffID: 3, State: protocol.StateChangedOnDisk, Message: "m", DiskContent: &disk, UnifiedDiff: "d", Content: &content, Queued: 1},
	}

	for _, st := range states {
		if got, want := line(t, diffStateParamsStream(st)), line(t, st); got != want {
			t.Fatalf("diff/state streamed:\n%s\nencoding/json:\n%s", got, want)
		}
	}
}
