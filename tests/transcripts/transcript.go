// Package transcripts reads the editor link's recorded exchanges
// (companion/protocol/transcripts/*.jsonl, format in the README there) and
// implements their matching rules, for the Go replay test in this folder.
package transcripts

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
			tr.Steps = append(tr.Steps, Step{Line: n, Actor: k, Body: append(json.RawMessage(nil), v...)})
		}
	}
	if err := sc.Err(); err != nil {
		return Transcript{}, fmt.Errorf("read %s: %w", path, err)
	}
	return tr, nil
}

// Placeholders that match values (see the README).
const (
	Any    = "<any>"
	String = "<string>"
	Number = "<number>"
	ID     = "<id>"
)

// Capture is a value a placeholder matched, under the key it was found at.
type Capture struct {
	Key   string
	Value any
}

// Match reports whether actual matches pattern under the transcript rules:
// objects match when every key of the pattern matches (extra keys are
// allowed), arrays and scalars must be equal, and the placeholder strings
// match as the README says. id, if not nil, decides whether a value under
// the key "id" matches "<id>". It returns what the placeholders matched.
func Match(pattern, actual any, id func(any) bool) (bool, []Capture, string) {
	var caps []Capture
	ok, why := match("", pattern, actual, id, &caps)
	return ok, caps, why
}

func match(key string, pattern, actual any, id func(any) bool, caps *[]Capture) (bool, string) {
	if s, ok := pattern.(string); ok {
		switch s {
		case Any:
			*caps = append(*caps, Capture{key, actual})
			return true, ""
		case String:
			_, ok := actual.(string)
			*caps = append(*caps, Capture{key, actual})
			return ok, fmt.Sprintf("%s: want a string, have %s", key, show(actual))
		case Number:
			_, ok := actual.(float64)
			*caps = append(*caps, Capture{key, actual})
			return ok, fmt.Sprintf("%s: want a number, have %s", key, show(actual))
		case ID:
			ok := actual != nil
			if id != nil {
				ok = id(actual)
			}
			return ok, fmt.Sprintf("%s: id %s is not the one expected", key, show(actual))
		}
	}
	switch p := pattern.(type) {
	case map[string]any:
		a, ok := actual.(map[string]any)
		if !ok {
			return false, fmt.Sprintf("%s: want an object, have %s", key, show(actual))
		}
		keys := make([]string, 0, len(p))
		for k := range p {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			av, present := a[k]
			if !present {
				return false, fmt.Sprintf("%s: key %q missing", key, k)
			}
			if ok, why := match(k, p[k], av, id, caps); !ok {
				return false, why
			}
		}
		return true, ""
	case []any:
		a, ok := actual.([]any)
		if !ok || len(a) != len(p) {
			return false, fmt.Sprintf("%s: want %s, have %s", key, show(pattern), show(actual))
		}
		for i := range p {
			if ok, why := match(key, p[i], a[i], id, caps); !ok {
				return false, why
			}
		}
		return true, ""
	}
	pj, _ := json.Marshal(pattern)
	aj, _ := json.Marshal(actual)
	if bytes.Equal(pj, aj) {
		return true, ""
	}
	return false, fmt.Sprintf("%s: want %s, have %s", key, pj, show(actual))
}

func show(v any) string {
	b, _ := json.Marshal(v)
	if len(b) > 200 {
		return string(b[:200]) + "…"
	}
	return string(b)
}

// Concretize returns v with its placeholders replaced for sending: each
// takes the value last captured under the same key, else a default
// ("<number>" 1, "<string>" "x", "<any>" null). "<id>" is left to the
// caller.
func Concretize(v any, captured map[string]any) any {
	return concretize("", v, captured)
}

func concretize(key string, v any, captured map[string]any) any {
	switch x := v.(type) {
	case string:
		switch x {
		case Any, String, Number:
			if c, ok := captured[key]; ok {
				return c
			}
			switch x {
			case Number:
				return float64(1)
			case String:
				return "x"
			}
			return nil
		}
		return x
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = concretize(k, e, captured)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = concretize(key, e, captured)
		}
		return out
	}
	return v
}

// Substitute replaces ${name} in every string of the raw JSON value with
// vars[name].
func Substitute(raw json.RawMessage, vars map[string]string) (any, error) {
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return nil, err
	}
	return substitute(v, vars), nil
}

func substitute(v any, vars map[string]string) any {
	switch x := v.(type) {
	case string:
		for k, val := range vars {
			x = strings.ReplaceAll(x, "${"+k+"}", val)
		}
		return x
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = substitute(e, vars)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = substitute(e, vars)
		}
		return out
	}
	return v
}
