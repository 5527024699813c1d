package edtools

import (
	"bufio"
	"encoding/json"
	"os"
	"sort"
	"strings"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/gemini-ide-companion/gemini-ide-companion/companion/protocol"
	idectx "github.com/gemini-ide-companion/gemini-ide-companion/context"
	"github.com/gemini-ide-companion/gemini-ide-companion/internal/fspath"
)

// What the companion does to every answer before the model reads it: sort
// and filter again (a plugin may not have), cut to MaxResults items and to
// MaxBytes of JSON, and say when it cut.

var severities = []string{protocol.SeverityError, protocol.SeverityWarning, protocol.SeverityInfo, protocol.SeverityHint}

// severityRank is 0 for error … 3 for hint, -1 for anything else.
func severityRank(s string) int {
	for i, v := range severities {
		if v == s {
			return i
		}
	}
	return -1
}

// encode is v's JSON; the types encode without fail.
func encode(v any) []byte {
	data, err := json.Marshal(v)
	if err != nil {
		return []byte(`{"error":"cannot encode the answer"}`)
	}
	return data
}

// fit returns the JSON of build(k) for the largest k <= n whose JSON is at
// most maxBytes (k = 0 if none is), and whether it cut (k < n).
func fit(n, maxBytes int, build func(k int) any) ([]byte, bool) {
	data := encode(build(n))
	if len(data) <= maxBytes {
		return data, false
	}
	lo, hi := 0, n-1 // the answer is in [lo, hi]
	for lo < hi {
		mid := (lo + hi + 1) / 2
		if len(encode(build(mid))) <= maxBytes {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	return encode(build(lo)), true
}

func (s *Service) capDiagnostics(res protocol.DiagnosticsResult, p protocol.DiagnosticsParams) []byte {
	least := len(severities) - 1
	if p.Severity != "" {
		least = severityRank(p.Severity)
	}
	ds := res.Diagnostics[:0:0]
	for _, d := range res.Diagnostics {
		r := severityRank(d.Severity)
		if r < 0 {
			d.Severity, r = protocol.SeverityInfo, 2
		}
		if r > least || (p.Path != "" && !fspath.Equal(d.Path, p.Path)) {
			continue
		}
		ds = append(ds, d)
	}
	sort.SliceStable(ds, func(i, j int) bool {
		a, b := ds[i], ds[j]
		if ra, rb := severityRank(a.Severity), severityRank(b.Severity); ra != rb {
			return ra < rb
		}
		if a.Path != b.Path {
			return a.Path < b.Path
		}
		if a.Range.Start.Line != b.Range.Start.Line {
			return a.Range.Start.Line < b.Range.Start.Line
		}
		return a.Range.Start.Character < b.Range.Start.Character
	})
	truncated := res.Truncated
	if len(ds) > s.opts.MaxResults {
		ds, truncated = ds[:s.opts.MaxResults], true
	}
	if ds == nil {
		ds = []protocol.Diagnostic{}
	}
	data, _ := fit(len(ds), s.opts.MaxBytes, func(k int) any {
		return protocol.DiagnosticsResult{Diagnostics: ds[:k], Truncated: truncated || k < len(ds)}
	})
	return data
}

// maxLines is the most lines read of a file to fill in a location's text.
const maxLines = 1 << 20

// lineReader reads lines of files on disk, each file once.
type lineReader map[string][]string

// line returns line n (1-based) of path, "" when there is none.
func (lr lineReader) line(path string, n int) string {
	lines, ok := lr[path]
	if !ok {
		lines = readLines(path)
		lr[path] = lines
	}
	if n < 1 || n > len(lines) {
		return ""
	}
	return lines[n-1]
}

// readLines reads the lines of path (at most maxLines); nil when it cannot
// be read.
func readLines(path string) []string {
	f, err := os.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64<<10), 4<<20)
	var lines []string
	for sc.Scan() {
		lines = append(lines, strings.TrimSuffix(sc.Text(), "\r"))
		if len(lines) >= maxLines {
			break
		}
	}
	return lines
}

// cutChars cuts s to at most n characters.
func cutChars(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	i := 0
	for k := range s {
		if i == n {
			return s[:k]
		}
		i++
	}
	return s
}

func (s *Service) capLocations(res protocol.LocationsResult) []byte {
	locs := res.Locations
	truncated := res.Truncated
	if len(locs) > s.opts.MaxResults {
		locs, truncated = locs[:s.opts.MaxResults], true
	}
	lr := lineReader{}
	out := make([]protocol.Location, len(locs))
	for i, l := range locs {
		if l.Text == "" {
			l.Text = strings.TrimSpace(lr.line(l.Path, l.Range.Start.Line))
		}
		l.Text = cutChars(l.Text, protocol.MaxLocationTextChars)
		out[i] = l
	}
	data, _ := fit(len(out), s.opts.MaxBytes, func(k int) any {
		return protocol.LocationsResult{Locations: out[:k], Truncated: truncated || k < len(out)}
	})
	return data
}

func (s *Service) capHover(res protocol.HoverResult) []byte {
	data := encode(res)
	if len(data) <= s.opts.MaxBytes {
		return data
	}
	// Contents is the only thing that grows: cut it (its JSON may take up
	// to 6 bytes a byte) until the answer fits.
	c := res.Contents
	for len(data) > s.opts.MaxBytes && c != "" {
		n := len(c) - (len(data) - s.opts.MaxBytes)
		if n < 0 {
			n = 0
		}
		for n > 0 && !utf8.RuneStart(c[n]) {
			n--
		}
		c = c[:n]
		res.Contents, res.Truncated = c, true
		data = encode(res)
	}
	return data
}

// countSymbols counts the symbols of an outline, children included.
func countSymbols(syms []protocol.DocumentSymbol) int {
	n := 0
	for _, s := range syms {
		n += 1 + countSymbols(s.Children)
	}
	return n
}

// firstSymbols is the outline cut to its first k symbols, in file order
// (a symbol before its children).
func firstSymbols(syms []protocol.DocumentSymbol, k *int) []protocol.DocumentSymbol {
	var out []protocol.DocumentSymbol
	for _, s := range syms {
		if *k <= 0 {
			break
		}
		*k--
		s.Children = firstSymbols(s.Children, k)
		out = append(out, s)
	}
	return out
}

func (s *Service) capSymbols(res protocol.DocumentSymbolsResult) []byte {
	syms := res.Symbols
	truncated := res.Truncated
	n := countSymbols(syms)
	if n > s.opts.MaxResults {
		k := s.opts.MaxResults
		syms, n, truncated = firstSymbols(syms, &k), s.opts.MaxResults, true
	}
	if syms == nil {
		syms = []protocol.DocumentSymbol{}
	}
	data, _ := fit(n, s.opts.MaxBytes, func(k int) any {
		cut := truncated || k < n
		kk := k
		out := firstSymbols(syms, &kk)
		if out == nil {
			out = []protocol.DocumentSymbol{}
		}
		return protocol.DocumentSymbolsResult{Symbols: out, Truncated: cut}
	})
	return data
}

func (s *Service) capWorkspaceSymbols(res protocol.WorkspaceSymbolsResult) []byte {
	syms := res.Symbols
	truncated := res.Truncated
	if len(syms) > s.opts.MaxResults {
		syms, truncated = syms[:s.opts.MaxResults], true
	}
	if syms == nil {
		syms = []protocol.WorkspaceSymbol{}
	}
	data, _ := fit(len(syms), s.opts.MaxBytes, func(k int) any {
		return protocol.WorkspaceSymbolsResult{Symbols: syms[:k], Truncated: truncated || k < len(syms)}
	})
	return data
}

// cutUTF16 cuts s to at most n UTF-16 code units without splitting a
// character.
func cutUTF16(s string, n int) string {
	units := 0
	for i, r := range s {
		units += utf16.RuneLen(r)
		if units > n {
			return s[:i]
		}
	}
	return s
}

func (s *Service) capEditors(res protocol.OpenEditorsResult) []byte {
	eds := append([]protocol.OpenEditor(nil), res.Editors...)
	// The active one first.
	sort.SliceStable(eds, func(i, j int) bool { return eds[i].Active && !eds[j].Active })
	truncated := res.Truncated
	if len(eds) > s.opts.MaxResults {
		eds, truncated = eds[:s.opts.MaxResults], true
	}
	for i := range eds {
		eds[i].SelectedText = cutUTF16(eds[i].SelectedText, idectx.MaxSelectedUTF16)
	}
	if eds == nil {
		eds = []protocol.OpenEditor{}
	}
	data, _ := fit(len(eds), s.opts.MaxBytes, func(k int) any {
		return protocol.OpenEditorsResult{Editors: eds[:k], Truncated: truncated || k < len(eds)}
	})
	return data
}

// fromContext is the open editors as the context the companion keeps for
// the CLI has them: without unsaved changes, the cursor converted from
// UTF-16 units to characters with the line on disk.
func fromContext(files []idectx.File) protocol.OpenEditorsResult {
	lr := lineReader{}
	res := protocol.OpenEditorsResult{Editors: []protocol.OpenEditor{}}
	for _, f := range files {
		e := protocol.OpenEditor{Path: f.Path, Active: f.IsActive}
		if f.Cursor != nil {
			e.Cursor = &protocol.Position{Line: f.Cursor.Line, Character: charColumn(lr.line(f.Path, f.Cursor.Line), f.Cursor.Character)}
		}
		if f.SelectedText != nil {
			e.SelectedText = *f.SelectedText
		}
		res.Editors = append(res.Editors, e)
	}
	return res
}

// charColumn converts a 1-based column in UTF-16 units of line into a
// 1-based column in characters.
func charColumn(line string, utf16Col int) int {
	units, chars := 0, 1
	for _, r := range line {
		if units >= utf16Col-1 {
			break
		}
		units += utf16.RuneLen(r)
		chars++
	}
	if units < utf16Col-1 {
		chars += utf16Col - 1 - units // past the line's end (or no line)
	}
	return chars
}
