// Package schema builds the JSON Schema of the editor link from the Go types
// of package protocol: every params and result type of protocol.Methods
// becomes a definition, with the types' and fields' doc comments (read from
// the package's source) as descriptions.
package schema

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"go/ast"
	"go/doc"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"

	"github.com/gemini-ide-companion/gemini-ide-companion/link"
	"github.com/gemini-ide-companion/gemini-ide-companion/link/protocol"
)

// docs holds the doc comments of package protocol: per type, and per
// type.field.
type docs map[string]string

func readDocs(dir string) (docs, error) {
	fset := token.NewFileSet()
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", dir, err)
	}
	var files []*ast.File
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() || !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, filepath.Join(dir, name), nil, parser.ParseComments)
		if err != nil {
			return nil, fmt.Errorf("parse %s: %w", name, err)
		}
		if f.Name.Name == "protocol" {
			files = append(files, f)
		}
	}
	if len(files) == 0 {
		return nil, errors.New("package protocol not found in " + dir)
	}
	p, err := doc.NewFromFiles(fset, files, "github.com/gemini-ide-companion/gemini-ide-companion/link/protocol")
	if err != nil {
		return nil, fmt.Errorf("read docs: %w", err)
	}
	d := docs{}
	for _, t := range p.Types {
		d[t.Name] = clean(t.Doc)
		for _, spec := range t.Decl.Specs {
			ts, ok := spec.(*ast.TypeSpec)
			if !ok {
				continue
			}
			st, ok := ts.Type.(*ast.StructType)
			if !ok {
				continue
			}
			for _, f := range st.Fields.List {
				text := f.Doc.Text()
				if text == "" {
					text = f.Comment.Text()
				}
				for _, n := range f.Names {
					d[t.Name+"."+n.Name] = clean(text)
				}
			}
		}
	}
	return d, nil
}

// clean joins a doc comment's lines into one paragraph per blank line.
func clean(s string) string {
	paras := strings.Split(strings.TrimSpace(s), "\n\n")
	for i, p := range paras {
		paras[i] = strings.Join(strings.Fields(p), " ")
	}
	return strings.Join(paras, "\n\n")
}

// gen builds definitions for Go types.
type gen struct {
	docs docs
	defs map[string]any
}

func (g *gen) ref(t reflect.Type) map[string]any {
	name := t.Name()
	if _, ok := g.defs[name]; !ok {
		g.defs[name] = nil // placeholder against recursion
		g.defs[name] = g.structSchema(t)
	}
	return map[string]any{"$ref": "#/$defs/" + name}
}

// schema returns the schema of a value of type t. nullable says whether Go
// may encode it as null.
func (g *gen) schema(t reflect.Type, enum string) map[string]any {
	switch t.Kind() {
	case reflect.Pointer:
		return nullable(g.schema(t.Elem(), enum))
	case reflect.Struct:
		return g.ref(t)
	case reflect.Slice:
		return nullable(map[string]any{"type": "array", "items": g.schema(t.Elem(), "")})
	case reflect.Map:
		return nullable(map[string]any{"type": "object", "additionalProperties": g.schema(t.Elem(), "")})
	case reflect.String:
		s := map[string]any{"type": "string"}
		if enum != "" {
			s["enum"] = strings.Split(enum, ",")
		}
		return s
	case reflect.Bool:
		return map[string]any{"type": "boolean"}
	case reflect.Int, reflect.Int32, reflect.Int64:
		s := map[string]any{"type": "integer"}
		if enum != "" {
			var vals []int
			for _, v := range strings.Split(enum, ",") {
				var n int
				fmt.Sscan(v, &n)
				vals = append(vals, n)
			}
			s["enum"] = vals
		}
		return s
	case reflect.Uint, reflect.Uint32, reflect.Uint64:
		return map[string]any{"type": "integer", "minimum": 0}
	case reflect.Interface:
		return map[string]any{} // any JSON value
	}
	panic(fmt.Sprintf("schemagen: no schema for %s", t))
}

// nullable lets s be null too.
func nullable(s map[string]any) map[string]any {
	if ref, ok := s["$ref"]; ok {
		return map[string]any{"anyOf": []any{map[string]any{"$ref": ref}, map[string]any{"type": "null"}}}
	}
	out := map[string]any{}
	for k, v := range s {
		out[k] = v
	}
	out["type"] = []any{s["type"], "null"}
	return out
}

func (g *gen) structSchema(t reflect.Type) map[string]any {
	props := map[string]any{}
	var required []string
	g.fields(t, t.Name(), props, &required)
	s := map[string]any{"type": "object", "properties": props}
	if d := g.docs[t.Name()]; d != "" {
		s["description"] = d
	}
	if len(required) > 0 {
		sort.Strings(required)
		s["required"] = required
	}
	return s
}

// fields adds t's fields (and those of embedded structs) to props.
func (g *gen) fields(t reflect.Type, owner string, props map[string]any, required *[]string) {
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		tag := f.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		if f.Anonymous && name == "" {
			g.fields(f.Type, f.Type.Name(), props, required)
			continue
		}
		if name == "" {
			name = f.Name
		}
		ps := g.schema(f.Type, f.Tag.Get("enum"))
		if d := g.docs[owner+"."+f.Name]; d != "" {
			if _, isRef := ps["$ref"]; isRef {
				ps = map[string]any{"allOf": []any{ps}}
			}
			ps["description"] = d
		}
		props[name] = ps
		omit := strings.Contains(opts, "omitempty") || strings.Contains(opts, "omitzero")
		req := !omit && f.Type.Kind() != reflect.Pointer
		switch f.Tag.Get("schema") {
		case "required":
			req = true
		case "optional":
			req = false
		}
		if req {
			*required = append(*required, name)
		}
	}
}

// Generate returns the schema document, indented, for the protocol package
// whose source is in src.
func Generate(src string) ([]byte, error) {
	d, err := readDocs(src)
	if err != nil {
		return nil, err
	}
	g := &gen{docs: d, defs: map[string]any{}}
	methods := map[string]any{}
	for _, m := range protocol.Methods {
		kind := "request"
		if m.Notification {
			kind = "notification"
		}
		entry := map[string]any{"from": string(m.From), "kind": kind, "since": m.Since, "description": m.Doc}
		if m.Group != "" {
			entry["group"] = m.Group
		}
		if m.Params != nil && m.OptionalParams {
			entry["params"] = nullable(g.ref(reflect.TypeOf(m.Params)))
		} else if m.Params != nil {
			entry["params"] = g.ref(reflect.TypeOf(m.Params))
		} else {
			entry["params"] = map[string]any{"type": []any{"object", "null"}, "maxProperties": 0}
		}
		if !m.Notification {
			if m.Result != nil {
				entry["result"] = g.ref(reflect.TypeOf(m.Result))
			} else {
				entry["result"] = map[string]any{"type": "null"}
			}
		}
		methods[m.Name] = entry
	}
	g.defs["Error"] = map[string]any{
		"type": "object",
		"description": fmt.Sprintf("A JSON-RPC error object. code is one of %d (parse error), %d (invalid request, too big, not initialized), %d (method not found), %d (invalid params), %d (internal error).",
			link.CodeParseError, link.CodeInvalidRequest, link.CodeMethodNotFound, link.CodeInvalidParams, link.CodeInternalError),
		"properties": map[string]any{
			"code":    map[string]any{"type": "integer"},
			"message": map[string]any{"type": "string"},
			"data":    map[string]any{},
		},
		"required": []string{"code", "message"},
	}
	root := map[string]any{
		"$schema": "https://json-schema.org/draft/2020-12/schema",
		"$id":     "https://github.com/gemini-ide-companion/gemini-ide-companion/link/protocol/editor-link.schema.json",
		"title":   fmt.Sprintf("gemini-ide-companion editor link, protocol %d", protocol.LatestVersion),
		"description": "Generated from the Go types of package link/protocol by go generate; do not edit. " +
			"$defs holds the params and result types; x-methods maps each method to its direction, kind, " +
			"protocol version and params/result schemas. Messages are JSON-RPC 2.0.",
		"$defs":     g.defs,
		"x-methods": methods,
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(root); err != nil {
		return nil, fmt.Errorf("encode schema: %w", err)
	}
	return buf.Bytes(), nil
}
