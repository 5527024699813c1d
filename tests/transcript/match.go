package transcript

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
)

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

// IsID reports whether v can be a JSON-RPC id (a number or a string): what
// "<id>" matches in a plugin replay.
func IsID(v any) bool {
	switch v.(type) {
	case float64, string:
		return true
	}
	return false
}

// IsRequest reports whether m is a request (a method and an id).
func IsRequest(m map[string]any) bool {
	_, id := m["id"]
	_, method := m["method"]
	return id && method
}

// IsResponse reports whether m is a reply (an id, no method).
func IsResponse(m map[string]any) bool {
	_, id := m["id"]
	_, method := m["method"]
	return id && !method
}

// Match reports whether actual matches pattern under the transcript rules:
// objects match when every key of the pattern matches (extra keys are
// allowed), arrays and scalars must be equal, and the placeholder strings
// match as the README says. id, if not nil, decides whether a value
// matches "<id>" (else any value but null does). It returns what the
// placeholders matched, and when actual does not match, why, naming the
// place ("message.params.path") in it.
func Match(pattern, actual any, id func(any) bool) (bool, []Capture, string) {
	var caps []Capture
	why := match("", "message", pattern, actual, id, &caps)
	return why == "", caps, why
}

// Remember records the captures of a match in last, by key: the values
// Concretize sends for placeholders later.
func Remember(last map[string]any, caps []Capture) {
	for _, c := range caps {
		last[c.Key] = c.Value
	}
}

func match(key, path string, pattern, actual any, id func(any) bool, caps *[]Capture) string {
	if s, ok := pattern.(string); ok {
		var ok bool
		switch s {
		case Any:
			ok = true
		case String:
			_, ok = actual.(string)
		case Number:
			_, ok = actual.(float64)
		case ID:
			ok = actual != nil
			if id != nil {
				ok = id(actual)
			}
		default:
			if a, is := actual.(string); is && a == s {
				return ""
			}
			return fmt.Sprintf("%s: want %q, have %s", path, s, show(actual))
		}
		if !ok {
			return fmt.Sprintf("%s: want %s, have %s", path, s, show(actual))
		}
		*caps = append(*caps, Capture{key, actual})
		return ""
	}
	switch p := pattern.(type) {
	case map[string]any:
		a, ok := actual.(map[string]any)
		if !ok {
			return fmt.Sprintf("%s: want an object, have %s", path, show(actual))
		}
		keys := make([]string, 0, len(p))
		for k := range p {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			av, present := a[k]
			if !present {
				return fmt.Sprintf("%s.%s: missing", path, k)
			}
			if why := match(k, path+"."+k, p[k], av, id, caps); why != "" {
				return why
			}
		}
		return ""
	case []any:
		a, ok := actual.([]any)
		if !ok || len(a) != len(p) {
			return fmt.Sprintf("%s: want %d elements, have %s", path, len(p), show(actual))
		}
		for i := range p {
			if why := match(key, fmt.Sprintf("%s[%d]", path, i), p[i], a[i], id, caps); why != "" {
				return why
			}
		}
		return ""
	}
	pj, _ := json.Marshal(pattern)
	aj, _ := json.Marshal(actual)
	if bytes.Equal(pj, aj) {
		return ""
	}
	return fmt.Sprintf("%s: want %s, have %s", path, pj, show(actual))
}

// Show is v as compact JSON, cut to 200 bytes: for failure messages.
func Show(v any) string { return show(v) }

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

// Substitute decodes the raw JSON value and replaces ${name} in every
// string of it with vars[name].
func Substitute(raw json.RawMessage, vars map[string]string) (any, error) {
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return nil, fmt.Errorf("transcript value %s: %w", raw, err)
	}
	return SubstituteValue(v, vars), nil
}

// SubstituteValue replaces ${name} in every string of the decoded value v
// with vars[name].
func SubstituteValue(v any, vars map[string]string) any {
	switch x := v.(type) {
	case string:
		for k, val := range vars {
			x = strings.ReplaceAll(x, "${"+k+"}", val)
		}
		return x
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = SubstituteValue(e, vars)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = SubstituteValue(e, vars)
		}
		return out
	}
	return v
}

// MatchMessage matches a message the plugin sent (got) against a plugin
// line (want) under the id rules of the README: the two must be of one
// kind (request, reply, notification); a request's id is any id the
// sender chose; a reply's id must answer the request the line answers,
// which answers decides (it returns why not, or ""). It returns why got
// does not match, or "", and what the placeholders matched.
func MatchMessage(want, got map[string]any, answers func(id any) string) (string, []Capture) {
	w := make(map[string]any, len(want))
	for k, v := range want {
		w[k] = v
	}
	switch {
	case IsResponse(want):
		if !IsResponse(got) {
			return "want a reply", nil
		}
		if why := answers(got["id"]); why != "" {
			return why, nil
		}
		delete(w, "id")
	case IsRequest(want):
		if !IsRequest(got) {
			return "want a request", nil
		}
		w["id"] = ID
	default:
		if _, has := got["id"]; has {
			return "want a notification", nil
		}
	}
	_, caps, why := Match(w, got, IsID)
	return why, caps
}
