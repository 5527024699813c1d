// Package transcript reads the editor link's recorded exchanges
// (link/protocol/transcripts/*.jsonl, format in the README there) and
// implements their rules once for every replay: the sidecar's
// (tests/transcripts) and the plugins' (tests/nvim, tests/vim), which differ
// only in how a step reaches the code under test.
package transcript

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// Step is one line of a transcript: who acts, and what.
type Step struct {
	// Line is the 1-based line number in the file.
	Line int
	// Actor is comment, plugin, sidecar, cli, user or restart.
	Actor string
	// Body is the value under the actor's key.
	Body json.RawMessage
}

// Transcript is one file of steps.
type Transcript struct {
	Name  string
	Steps []Step
}

// Actors are the keys a step may have.
var Actors = []string{"comment", "plugin", "sidecar", "cli", "user", "restart"}

// Load reads every *.jsonl file of dir, sorted by name.
func Load(dir string) ([]Transcript, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.jsonl"))
	if err != nil {
		return nil, fmt.Errorf("list transcripts: %w", err)
	}
	sort.Strings(files)
	var out []Transcript
	for _, f := range files {
		tr, err := Parse(f)
		if err != nil {
			return nil, err
		}
		out = append(out, tr)
	}
	return out, nil
}

// Parse reads one transcript file. Every line must be one JSON object with
// exactly one key, an actor's.
func Parse(path string) (Transcript, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return Transcript{}, fmt.Errorf("read transcript: %w", err)
	}
	tr := Transcript{Name: strings.TrimSuffix(filepath.Base(path), ".jsonl")}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, 16<<20)
	for n := 1; sc.Scan(); n++ {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		var m map[string]json.RawMessage
		if err := json.Unmarshal(line, &m); err != nil {
			return Transcript{}, fmt.Errorf("%s:%d: %v", path, n, err)
		}
		if len(m) != 1 {
			return Transcript{}, fmt.Errorf("%s:%d: want exactly one key, have %d", path, n, len(m))
		}
		for k, v := range m {
			known := false
			for _, a := range Actors {
				known = known || a == k
			}
			if !known {
				return Transcript{}, fmt.Errorf("%s:%d: unknown actor %q", path, n, k)
			}
			if k == "user" {
				var u User
				if err := json.Unmarshal(v, &u); err != nil {
					return Transcript{}, fmt.Errorf("%s:%d: user step: %v", path, n, err)
				}
			}
			tr.Steps = append(tr.Steps, Step{Line: n, Actor: k, Body: append(json.RawMessage(nil), v...)})
		}
	}
	if err := sc.Err(); err != nil {
		return Transcript{}, fmt.Errorf("read %s: %w", path, err)
	}
	return tr, nil
}

// Dir is the folder of the shared transcripts in the checkout at root.
func Dir(root string) string {
	return filepath.Join(root, "link", "protocol", "transcripts")
}

// ForPlugins lists the transcripts a plugin replays: the shared ones except
// sidecar-* (they test the sidecar's own answers, errors and protocol 1:
// nothing a plugin sends), then those of the folders own, the plugin's
// own, sorted by name within each folder.
func ForPlugins(root string, own ...string) ([]string, error) {
	var files []string
	for _, dir := range append([]string{Dir(root)}, own...) {
		m, err := filepath.Glob(filepath.Join(dir, "*.jsonl"))
		if err != nil {
			return nil, fmt.Errorf("list transcripts in %s: %w", dir, err)
		}
		sort.Strings(m)
		for _, f := range m {
			if !strings.HasPrefix(filepath.Base(f), "sidecar-") {
				files = append(files, f)
			}
		}
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("no transcripts in %s or %q", Dir(root), own)
	}
	return files, nil
}

// Object decodes the step's body as a message object; a body that is not
// one (a raw plugin string, in sidecar-* files) is an error.
func (s Step) Object() (map[string]any, error) {
	var m map[string]any
	if err := json.Unmarshal(s.Body, &m); err != nil {
		return nil, fmt.Errorf("line %d: %s is not a message object: %w", s.Line, s.Body, err)
	}
	if m == nil {
		return nil, fmt.Errorf("line %d: %s is not a message object", s.Line, s.Body)
	}
	return m, nil
}

// User is what a user step does in the editor.
type User struct {
	// Action is accept, reject, edit, close or acceptOverDiskChange.
	Action string `json:"action"`
	// Content replaces the proposed side for edit.
	Content string `json:"content"`
}

// User decodes a user step's body (Parse checked that it decodes).
func (s Step) User() User {
	var u User
	_ = json.Unmarshal(s.Body, &u)
	return u
}

// FileContent is what ${file} holds when a replay starts.
const FileContent = "one\ntwo\nthree\n"

// Workspace returns the substitutions for a replay in the folder ws
// (${workspace}, ${file}, ${file2}, ${file3}) and writes ${file} with
// FileContent; ${file2} and ${file3} do not exist.
func Workspace(ws string) (map[string]string, error) {
	vars := map[string]string{"workspace": ws}
	for _, name := range []string{"file", "file2", "file3"} {
		vars[name] = filepath.Join(ws, name+".txt")
	}
	if err := os.WriteFile(vars["file"], []byte(FileContent), 0o644); err != nil {
		return nil, fmt.Errorf("write the transcript's file: %w", err)
	}
	return vars, nil
}
