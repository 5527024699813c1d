// Package rpcsrc writes the Go source of package rpc from protocol.Methods:
// for each group, the interface a handler of its plugin → sidecar methods
// implements and the function that routes them to it, decoding params (a
// bad field is refused with -32602 naming it); one client method per
// sidecar → plugin method; and, for params marked Stream, an encoder that
// writes them field by field. go generate runs it in link/protocol
// (internal/rpcgen); with -check it fails when the file is stale.
package rpcsrc

import (
	"bytes"
	"fmt"
	"go/format"
	"reflect"
	"sort"
	"strings"
	"text/template"

	"github.com/gemini-ide-companion/gemini-ide-companion/link/protocol"
)

// GoName is the Go name of a method: its path segments, each with a
// capital ("status/get" is StatusGet, "context/fileFocused"
// ContextFileFocused).
func GoName(method string) string {
	var b strings.Builder
	for _, seg := range strings.Split(method, "/") {
		if seg == "" {
			continue
		}
		b.WriteString(strings.ToUpper(seg[:1]) + seg[1:])
	}
	return b.String()
}

// groupName is the Go name of a group: "" is the link's own.
func groupName(g string) string {
	if g == "" {
		return "Link"
	}
	return strings.ToUpper(g[:1]) + g[1:]
}

// method is what the template needs of one method.
type method struct {
	protocol.Method
	Go         string // GoName
	ParamsType string // "protocol.X", "" for none
	ResultType string // "protocol.X", "" for a null result
	// Decode: the result is worth decoding (a type with fields).
	Decode bool
	// StreamType names the params' field-by-field encoder.
	StreamType string
}

type group struct {
	Name    string // Link, Agent...: its handler is NameHandler
	Whose   string // "the link's own", "the agent panel's"...
	Methods []method
}

// whose says whose methods a group's are.
func whose(g string) string {
	switch g {
	case "":
		return "the link's own"
	case "agent":
		return "the agent panel's"
	}
	return "the " + g + " group's"
}

type field struct {
	Name, JSON string
	Omit       bool
	Kind       string // string, *string, value
	Zero       string // the Go zero literal for an omittable value
}

type stream struct {
	Type, Of string
	Fields   []field
}

func typeName(v any) string {
	if v == nil {
		return ""
	}
	return "protocol." + reflect.TypeOf(v).Name()
}

// hasFields reports whether a result of v's type carries anything.
func hasFields(v any) bool {
	return v != nil && reflect.TypeOf(v).NumField() > 0
}

// streamOf describes the field-by-field encoder of a params type: every
// field in order, as encoding/json writes it.
func streamOf(v any) (stream, error) {
	t := reflect.TypeOf(v)
	s := stream{Type: strings.ToLower(t.Name()[:1]) + t.Name()[1:] + "Stream", Of: "protocol." + t.Name()}
	for i := range t.NumField() {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		if !f.IsExported() || tag == "-" || f.Anonymous {
			return stream{}, fmt.Errorf("%s.%s: a streamed type has only plain exported fields", t.Name(), f.Name)
		}
		name, opts, _ := strings.Cut(tag, ",")
		if name == "" {
			name = f.Name
		}
		fd := field{Name: f.Name, JSON: name, Omit: strings.Contains(opts, "omitempty")}
		switch {
		case f.Type.Kind() == reflect.String:
			fd.Kind, fd.Zero = "string", `""`
		case f.Type.Kind() == reflect.Pointer && f.Type.Elem().Kind() == reflect.String:
			fd.Kind = "*string"
		case f.Type.Kind() == reflect.Bool:
			fd.Kind = "bool"
		case f.Type.Kind() >= reflect.Int && f.Type.Kind() <= reflect.Uint64:
			fd.Kind, fd.Zero = "value", "0"
		default:
			return stream{}, fmt.Errorf("%s.%s: %s cannot be streamed", t.Name(), f.Name, f.Type)
		}
		s.Fields = append(s.Fields, fd)
	}
	return s, nil
}

// Generate returns the formatted source of package rpc.
func Generate() ([]byte, error) {
	groups := map[string]*group{}
	var calls []method
	var streams []stream
	for _, m := range protocol.Methods {
		md := method{Method: m, Go: GoName(m.Name), ParamsType: typeName(m.Params), ResultType: typeName(m.Result), Decode: hasFields(m.Result)}
		if m.Stream {
			st, err := streamOf(m.Params)
			if err != nil {
				return nil, err
			}
			md.StreamType = st.Type
			streams = append(streams, st)
		}
		if m.From == protocol.FromSidecar {
			calls = append(calls, md)
			continue
		}
		if m.Stream {
			return nil, fmt.Errorf("%s: only what the sidecar sends is streamed", m.Name)
		}
		g := groups[m.Group]
		if g == nil {
			g = &group{Name: groupName(m.Group), Whose: whose(m.Group)}
			groups[m.Group] = g
		}
		g.Methods = append(g.Methods, md)
	}
	var gs []*group
	for _, g := range groups {
		gs = append(gs, g)
	}
	sort.Slice(gs, func(i, j int) bool { return gs[i].Name > gs[j].Name }) // Link first, then the others
	var buf bytes.Buffer
	if err := tmpl.Execute(&buf, struct {
		Groups  []*group
		Calls   []method
		Streams []stream
	}{gs, calls, streams}); err != nil {
		return nil, fmt.Errorf("render package rpc: %w", err)
	}
	out, err := format.Source(buf.Bytes())
	if err != nil {
		return nil, fmt.Errorf("format package rpc: %w\n%s", err, buf.Bytes())
	}
	return out, nil
}

var tmpl = template.Must(template.New("rpc").Parse(`// Code generated by go generate in link/protocol from protocol.Methods; DO NOT EDIT.

package rpc

import (
	"context"
	"encoding/json"

	"github.com/gemini-ide-companion/gemini-ide-companion/link"
	"github.com/gemini-ide-companion/gemini-ide-companion/link/protocol"
)
{{range .Groups}}{{$g := .}}
// {{.Name}}Handler serves {{.Whose}} plugin → sidecar methods:
// Register{{.Name}} routes each to its method. A request's error goes back
// to the plugin (a *link.Error as is, any other as -32603); a
// notification's has no answer to go in and is reported to dropped.
type {{.Name}}Handler interface {
{{- range .Methods}}
	// {{.Go}} takes the {{.Name}} {{if .Notification}}notification{{else}}request{{end}}. {{.Doc}}
	{{.Go}}(ctx context.Context{{if .ParamsType}}, params {{.ParamsType}}{{end}}) {{if .Notification}}error{{else if .ResultType}}({{.ResultType}}, error){{else}}error{{end}}
{{- end}}
}

// Register{{.Name}} routes {{.Whose}} plugin → sidecar methods on m to h,
// their params decoded: absent ones are refused unless optional, a field
// of the wrong type is refused with -32602 naming it. A notification that
// cannot be decoded, or that h fails to take, goes to dropped.
func Register{{.Name}}(m *link.Mux, h {{.Name}}Handler, dropped func(method string, err error)) {
{{- range .Methods}}
{{- if .Notification}}
	m.NotifyFunc({{printf "%q" .Name}}, func(ctx context.Context, raw json.RawMessage) {
{{- if .ParamsType}}
		var params {{.ParamsType}}
		if err := decode(raw, &params, {{.OptionalParams}}); err != nil {
			dropped({{printf "%q" .Name}}, err)
			return
		}
		if err := h.{{.Go}}(ctx, params); err != nil {
{{- else}}
		if err := h.{{.Go}}(ctx); err != nil {
{{- end}}
			dropped({{printf "%q" .Name}}, err)
		}
	})
{{- else}}
	m.HandleFunc({{printf "%q" .Name}}, func(ctx context.Context, raw json.RawMessage) (any, error) {
{{- if .ParamsType}}
		var params {{.ParamsType}}
		if err := decode(raw, &params, {{.OptionalParams}}); err != nil {
			return nil, err
		}
{{- end}}
{{- if .ResultType}}
		res, err := h.{{.Go}}(ctx{{if .ParamsType}}, params{{end}})
		if err != nil {
			return nil, err
		}
{{- if .Final}}
		return link.Final{Result: res}, nil
{{- else}}
		return res, nil
{{- end}}
{{- else}}
		if err := h.{{.Go}}(ctx{{if .ParamsType}}, params{{end}}); err != nil {
			return nil, err
		}
{{- if .Final}}
		return link.Final{Result: nil}, nil
{{- else}}
		return nil, nil
{{- end}}
{{- end}}
	})
{{- end}}
{{- end}}
}
{{end}}
{{- range .Calls}}
{{if .Notification}}
// {{.Go}} sends the {{.Name}} notification. {{.Doc}}
func (p Plugin) {{.Go}}(params {{.ParamsType}}) error {
	return p.Caller.Notify({{printf "%q" .Name}}, {{if .StreamType}}{{.StreamType}}(params){{else}}params{{end}})
}
{{- else}}
// {{.Go}} sends the {{.Name}} request and waits for its answer. {{.Doc}}
// then, if given, runs as the answer is read, before the plugin's next
// message is handled (link.Conn.CallThen).
func (p Plugin) {{.Go}}(ctx context.Context, params {{.ParamsType}}, then ...func()) ({{.ResultType}}, error) {
	var res {{.ResultType}}
	err := p.Caller.CallThen(ctx, {{printf "%q" .Name}}, {{if .StreamType}}{{.StreamType}}(params){{else}}params{{end}}, {{if .Decode}}&res{{else}}nil{{end}}, hook(then))
	return res, err
}
{{- end}}
{{- end}}
{{range .Streams}}
// {{.Type}} is {{.Of}} as the link writes it: field by
// field (link.ObjectStreamer), its strings escaped straight into the link.
type {{.Type}} {{.Of}}

// StreamJSON implements link.ObjectStreamer: the bytes encoding/json
// writes for {{.Of}}.
func (v {{.Type}}) StreamJSON(o *link.Object) {
{{- range .Fields}}
{{- if eq .Kind "string"}}
{{- if .Omit}}
	if v.{{.Name}} != "" {
		o.String({{printf "%q" .JSON}}, v.{{.Name}})
	}
{{- else}}
	o.String({{printf "%q" .JSON}}, v.{{.Name}})
{{- end}}
{{- else if eq .Kind "bool"}}
{{- if .Omit}}
	if v.{{.Name}} {
		o.Value({{printf "%q" .JSON}}, true)
	}
{{- else}}
	o.Value({{printf "%q" .JSON}}, v.{{.Name}})
{{- end}}
{{- else if eq .Kind "*string"}}
	if v.{{.Name}} != nil {
		o.String({{printf "%q" .JSON}}, *v.{{.Name}})
	}{{if not .Omit}} else {
		o.Value({{printf "%q" .JSON}}, nil)
	}{{end}}
{{- else}}
{{- if .Omit}}
	if v.{{.Name}} != {{.Zero}} {
		o.Value({{printf "%q" .JSON}}, v.{{.Name}})
	}
{{- else}}
	o.Value({{printf "%q" .JSON}}, v.{{.Name}})
{{- end}}
{{- end}}
{{- end}}
}
{{end}}`))
