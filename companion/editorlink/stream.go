package editorlink

import (
	"github.com/gemini-ide-companion/gemini-ide-companion/companion/link"
	"github.com/gemini-ide-companion/gemini-ide-companion/companion/protocol"
)

// diffOpenStream and diffStateStream are the params of diff/open and
// diff/state as the link writes them: field by field (link.ObjectStreamer),
// they carry whole files, which are then escaped straight into the link
// instead of being built into one message in memory. Each writes exactly
// what encoding/json writes for it (TestStreamedParamsMatchTheirJSON), so
// a field added to the struct must be added here too.

type (
	diffOpenStream  protocol.DiffOpenParams
	diffStateStream protocol.DiffStateParams
)

// StreamJSON implements link.ObjectStreamer.
func (r diffOpenStream) StreamJSON(o *link.Object) {
	o.String("filePath", r.FilePath)
	o.String("newContent", r.NewContent)
	optionalString(o, "originalContent", r.OriginalContent, false)
	o.String("unifiedDiff", r.UnifiedDiff)
	o.String("title", r.Title)
	o.Value("diffId", r.DiffID)
	o.String("owner", r.Owner)
	if r.OutsideWorkspace {
		o.Value("outsideWorkspace", true)
	}
	if r.Notice != "" {
		o.String("notice", r.Notice)
	}
	if r.Queued != 0 {
		o.Value("queued", r.Queued)
	}
}

// StreamJSON implements link.ObjectStreamer.
func (st diffStateStream) StreamJSON(o *link.Object) {
	o.String("filePath", st.FilePath)
	o.Value("diffId", st.DiffID)
	o.String("state", st.State)
	o.String("message", st.Message)
	optionalString(o, "diskContent", st.DiskContent, true)
	if st.UnifiedDiff != "" {
		o.String("unifiedDiff", st.UnifiedDiff)
	}
	optionalString(o, "content", st.Content, true)
	o.Value("queued", st.Queued)
}

// optionalString writes a *string field: null when nil, or left out when
// omitEmpty.
func optionalString(o *link.Object, name string, s *string, omitEmpty bool) {
	switch {
	case s != nil:
		o.String(name, *s)
	case !omitEmpty:
		o.Value(name, nil)
	}
}
