package companion

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/gemini-ide-companion/gemini-ide-companion/diffview"
	"github.com/gemini-ide-companion/gemini-ide-companion/internal/fspath"
)

// maxOriginal is the largest file whose current content is read to show a
// diff against.
const maxOriginal = 256 << 20

func (s *Server) addTools(srv *mcp.Server) {
	srv.AddTool(&mcp.Tool{
		Name:        "openDiff",
		Description: "Open a diff view in the editor to propose a change to a file. The user's decision arrives as ide/diffAccepted or ide/diffRejected.",
		InputSchema: map[string]any{
			"type": "object",
			"properties": map[string]any{
				"filePath":   map[string]any{"type": "string", "description": "Absolute path of the file to change."},
				"newContent": map[string]any{"type": "string", "description": "The proposed full content of the file."},
			},
			"required": []string{"filePath", "newContent"},
		},
	}, s.openDiffTool)
	srv.AddTool(&mcp.Tool{
		Name:        "closeDiff",
		Description: "Close the diff view for a file and return its proposed content as the user left it.",
		InputSchema: map[string]any{
			"type": "object",
			"properties": map[string]any{
				"filePath":             map[string]any{"type": "string", "description": "Absolute path of the file whose diff to close."},
				"suppressNotification": map[string]any{"type": "boolean", "description": "Accepted for compatibility; closing never sends a decision."},
			},
			"required": []string{"filePath"},
		},
	}, s.closeDiffTool)
}

func toolError(format string, args ...any) *mcp.CallToolResult {
	return &mcp.CallToolResult{
		IsError: true,
		Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprintf(format, args...)}},
	}
}

// checkPath returns why path cannot name a file to diff, or "".
func checkPath(path string) string {
	switch {
	case path == "":
		return "filePath is empty"
	case strings.ContainsRune(path, 0):
		return "filePath contains a NUL byte"
	case !filepath.IsAbs(path):
		return fmt.Sprintf("filePath %q is not absolute", path)
	case strings.HasSuffix(path, string(filepath.Separator)) || filepath.Base(path) == "." || filepath.Base(path) == "..":
		// Such a path can never be written as a file, whatever exists on
		// disk ("/a/missing/.." does not exist, yet cleans to "/a").
		return fmt.Sprintf("filePath %q names a directory, not a file", path)
	}
	return ""
}

func (s *Server) openDiffTool(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	var args struct {
		FilePath   *string `json:"filePath"`
		NewContent *string `json:"newContent"`
	}
	if err := json.Unmarshal(req.Params.Arguments, &args); err != nil {
		return toolError("openDiff: invalid arguments: %v", err), nil
	}
	if args.FilePath == nil || args.NewContent == nil {
		return toolError("openDiff: filePath and newContent are required"), nil
	}
	newContent := *args.NewContent
	if req.Extra != nil && req.Extra.Header != nil {
		c, err := s.lifts.lifted(req.Extra.Header, newContent)
		if err != nil {
			return toolError("openDiff: %v", err), nil
		}
		newContent = c
	}
	path := *args.FilePath
	if why := checkPath(path); why != "" {
		s.log.Warn().Str("path", path).Str("reason", why).Msg("openDiff refused")
		return toolError("openDiff: %s", why), nil
	}
	if !s.inWorkspace(path) {
		s.log.Warn().Str("path", path).Msg("openDiff for a file outside the workspace folders")
	}
	// A file proposed again is usually unchanged on disk since the last
	// proposal read it: share that text instead of holding it twice.
	var known *string
	if d, ok := s.diffs.Get(path); ok {
		known = d.Original
	}
	original, err := readOriginalLike(path, known)
	if err != nil {
		s.log.Warn().Err(err).Str("path", path).Msg("openDiff refused")
		return toolError("openDiff: %v", err), nil
	}
	s.mu.Lock()
	editor := s.editor
	s.mu.Unlock()
	if editor == nil {
		return toolError("openDiff: no editor is attached to show the diff"), nil
	}

	owner := ""
	if req.Session != nil {
		owner = req.Session.ID()
	}
	d, replaced := s.diffs.Propose(path, owner, original, newContent)
	if replaced != nil {
		// Unwatched once the new proposal watches the same file: the watch
		// on its folder then carries over instead of being dropped and
		// made again. Logged once, with "diff shown" below: a CLI that
		// proposes a file again replaces its own proposal, and a line each
		// would double the log writes of every such call.
		defer s.unwatch(replaced.ID)
	}
	if d.State == diffview.Queued {
		// Another session's proposal for this file is on screen: this one
		// waits its turn, and its CLI waits for the decision as usual.
		s.log.Info().Str("path", path).Msg("diff queued behind another session's proposal for the same file")
		s.notifyState(DiffState{FilePath: path, DiffID: d.ID, State: StateQueued, Queued: s.diffs.Queued(path),
			Message: fmt.Sprintf("Another Gemini CLI session proposed a change to %s; it will be shown when you decide the one open now.", filepath.Base(path))})
		return &mcp.CallToolResult{Content: []mcp.Content{}}, nil
	}
	if err := s.show(ctx, d); err != nil {
		s.log.Warn().Str("path", path).Str("reason", err.Error()).Msg("diff could not be shown")
		return toolError("openDiff: %s", err), nil
	}
	s.log.Info().Str("path", path).Bool("newFile", original == nil).Int("bytes", len(newContent)).
		Bool("replacedOwnProposal", replaced != nil).Msg("diff shown")
	return &mcp.CallToolResult{Content: []mcp.Content{}}, nil
}

func diffTitle(path string, isNew bool) string {
	if isNew {
		return filepath.Base(path) + " (new file) ↔ proposed by Gemini CLI"
	}
	return filepath.Base(path) + " ↔ proposed by Gemini CLI"
}

// readOriginal returns the file's current content, nil if it does not exist.
func readOriginal(path string) (*string, error) {
	return readOriginalLike(path, nil)
}

// readOriginalLike is readOriginal that returns known itself when the file
// holds exactly that text.
func readOriginalLike(path string, known *string) (*string, error) {
	st, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("cannot inspect %s: %w", path, err)
	}
	if st.IsDir() {
		return nil, fmt.Errorf("%s is a directory", path)
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file", path)
	}
	if st.Size() > maxOriginal {
		return nil, fmt.Errorf("%s is larger than %d MiB", path, maxOriginal>>20)
	}
	if known != nil && int64(len(*known)) != st.Size() {
		known = nil
	}
	text, same, err := readText(path, st.Size(), known)
	if err != nil {
		return nil, fmt.Errorf("cannot read %s: %w", path, err)
	}
	if same {
		return known, nil
	}
	return &text, nil
}

// readText reads a file of about size bytes straight into the string it
// returns: one buffer, no copy from bytes to string. While the file matches
// known (if not nil) it only compares, and reports same when it is all of
// known: then no buffer at all.
func readText(path string, size int64, known *string) (text string, same bool, err error) {
	f, err := openForRead(path)
	if err != nil {
		return "", false, err
	}
	defer f.Close()
	var b strings.Builder
	matched := 0 // bytes of known matched so far; -1 once it differs
	if known == nil {
		matched = -1
		b.Grow(int(size))
	}
	buf := make([]byte, min(32<<10, max(size+1, 512)))
	for {
		n, err := f.Read(buf)
		chunk := buf[:n]
		if matched >= 0 && n > 0 {
			if matched+n <= len(*known) && string(chunk) == (*known)[matched:matched+n] {
				matched += n
				chunk = nil
			} else {
				// It differs: from here on, read it.
				b.Grow(max(int(size), matched+n))
				b.WriteString((*known)[:matched])
				matched = -1
			}
		}
		b.Write(chunk)
		if b.Len() > maxOriginal {
			return "", false, fmt.Errorf("larger than %d MiB", maxOriginal>>20)
		}
		if errors.Is(err, io.EOF) {
			if matched >= 0 {
				if matched == len(*known) {
					return "", true, nil
				}
				b.WriteString((*known)[:matched]) // it ended early
			}
			return b.String(), false, nil
		}
		if err != nil {
			return "", false, err
		}
	}
}

func (s *Server) inWorkspace(path string) bool {
	s.mu.Lock()
	folders := s.id.Workspace
	s.mu.Unlock()
	for _, f := range folders {
		if fspath.Within(f, path) {
			return true
		}
	}
	return false
}

func (s *Server) closeDiffTool(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	var args struct {
		FilePath             *string `json:"filePath"`
		SuppressNotification *bool   `json:"suppressNotification"`
	}
	if err := json.Unmarshal(req.Params.Arguments, &args); err != nil {
		return toolError("closeDiff: invalid arguments: %v", err), nil
	}
	if args.FilePath == nil {
		return toolError("closeDiff: filePath is required"), nil
	}
	path := *args.FilePath
	if why := checkPath(path); why != "" {
		return toolError("closeDiff: %s", why), nil
	}
	owner := ""
	if req.Session != nil {
		owner = req.Session.ID()
	}
	var content *string
	// Close first: from here on a decision from the editor for this diff
	// is late and refused, so none can follow the close.
	d, shown, ok, err := s.diffs.Close(path, owner)
	if errors.Is(err, diffview.ErrNotOwner) {
		s.log.Warn().Str("path", path).Msg("closeDiff refused: the diff belongs to another session")
		return toolError("closeDiff: the diff for %s was proposed by another Gemini CLI session; a session can close only its own proposals", path), nil
	}
	defer d.Release()
	if ok && shown {
		s.unwatch(d.ID)
		s.mu.Lock()
		editor := s.editor
		s.mu.Unlock()
		if editor != nil {
			cctx, cancel := context.WithTimeout(ctx, s.opts.EditorTimeout)
			got, err := editor.CloseDiff(cctx, path)
			cancel()
			if err != nil {
				s.log.Warn().Err(err).Str("path", path).Msg("editor did not close the diff; returning the original proposal")
			} else if got != nil {
				content = got
			}
		}
		s.log.Info().Str("path", path).Msg("diff closed by the CLI")
		s.later(func() { s.showNext(path) })
	} else if ok {
		s.log.Info().Str("path", path).Msg("queued diff withdrawn by the CLI")
		s.queueChanged(path)
	}
	if ok && content == nil {
		// The proposal as the CLI made it: the editor has no other text.
		proposed, err := d.ProposedText()
		if err != nil {
			s.log.Error().Err(err).Str("path", path).Msg("closeDiff cannot return the proposed text")
			return toolError("closeDiff: the diff was closed, but %v", err), nil
		}
		content = &proposed
	}
	body, err := json.Marshal(map[string]*string{"content": content})
	if err != nil {
		return toolError("closeDiff: %v", err), nil
	}
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(body)}}}, nil
}
