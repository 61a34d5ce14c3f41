package tools_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/harness-dev/harness/internal/errcode"
	"github.com/harness-dev/harness/internal/model"
	"github.com/harness-dev/harness/tools"
)

var update = flag.Bool("update", false, "rewrite golden files")

func TestAllOrder(t *testing.T) {
	type entry struct {
		Name    string
		Mutates bool
	}
	var got []entry
	for _, s := range tools.All() {
		got = append(got, entry{s.Name, s.Mutates})
	}
	want := []entry{
		{"fs.read", false}, {"fs.list", false}, {"fs.write", true}, {"process.exec", true}, {"git.diff", false},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("All (-want +got):\n%s", diff)
	}
}

func TestModelSpecsMatchAll(t *testing.T) {
	var want []model.ToolSpec
	for _, s := range tools.All() {
		want = append(want, model.ToolSpec{Name: s.Name, Description: s.Description, Parameters: s.Schema})
	}
	if diff := cmp.Diff(want, tools.ModelSpecs()); diff != "" {
		t.Errorf("ModelSpecs (-want +got):\n%s", diff)
	}
}

// TestAllReturnsCopies proves a caller cannot change what the next caller
// advertises.
func TestAllReturnsCopies(t *testing.T) {
	first := tools.All()
	before := string(first[0].Schema)
	first[0].Schema[0] = 'X'
	first[0].Name = "changed"
	if again := tools.All(); string(again[0].Schema) != before || again[0].Name != "fs.read" {
		t.Error("All shares its schema bytes or slice with callers")
	}
}

// TestSpecsGolden pins names, descriptions and schemas: what the model reads
// changes only through a reviewed diff (go test ./tools -run Golden -update).
func TestSpecsGolden(t *testing.T) {
	var b bytes.Buffer
	for _, s := range tools.ModelSpecs() {
		line, err := model.MarshalCanonical(s)
		if err != nil {
			t.Fatal(err)
		}
		b.Write(line)
		b.WriteByte('\n')
	}
	checkGolden(t, "specs.golden", b.Bytes())
}

// checkGolden compares got with testdata/name, which -update rewrites.
func checkGolden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("read golden (run with -update to create it): %v", err)
	}
	if diff := cmp.Diff(string(want), string(got)); diff != "" {
		t.Errorf("%s differs (-want +got):\n%s", path, diff)
	}
}

// schemaDoc is the part of a JSON Schema the tools use.
type schemaDoc struct {
	Type                 string                     `json:"type"`
	Properties           map[string]json.RawMessage `json:"properties"`
	Required             []string                   `json:"required"`
	AdditionalProperties *bool                      `json:"additionalProperties"`
}

type propDoc struct {
	Type    string   `json:"type"`
	Minimum *int64   `json:"minimum"`
	Enum    []string `json:"enum"`
}

// callShapes are the ways of calling a tool whose properties do not all go
// together (a JSON Schema the providers take cannot say so): each shape
// lists its properties, those it needs marked with a star, and the
// values its sample takes where the smallest allowed value does not fit.
// A tool not listed has one shape: all of its properties, required as the
// schema says.
var callShapes = map[string][]struct {
	props  []string
	sample map[string]any
}{
	"process.exec": {
		{props: []string{"argv*", "cwd", "timeoutMs", "background"}},
		{props: []string{"action*", "job*", "offset"}, sample: map[string]any{"action": "output"}},
	},
}

// TestSchemasAgreeWithParse reads each advertised schema as a provider
// would, builds the smallest object it allows, and checks that Parse
// accepts it, refuses it with any required property missing, and refuses
// it with one extra property.
func TestSchemasAgreeWithParse(t *testing.T) {
	for _, s := range tools.All() {
		t.Run(s.Name, func(t *testing.T) {
			var doc schemaDoc
			dec := json.NewDecoder(bytes.NewReader(s.Schema))
			dec.DisallowUnknownFields()
			if err := dec.Decode(&doc); err != nil {
				t.Fatalf("schema is not a JSON object of known keys: %v", err)
			}
			if doc.Type != "object" || doc.AdditionalProperties == nil || *doc.AdditionalProperties {
				t.Fatalf("schema must be a closed object: %s", s.Schema)
			}
			all := map[string]any{}
			for name, raw := range doc.Properties {
				var p propDoc
				if err := json.Unmarshal(raw, &p); err != nil {
					t.Fatal(err)
				}
				switch p.Type {
				case "string":
					all[name] = "x"
					if len(p.Enum) > 0 {
						all[name] = p.Enum[0]
					}
				case "integer":
					all[name] = *p.Minimum
				case "array":
					all[name] = []string{"x"}
				case "boolean":
					all[name] = true
				default:
					t.Fatalf("property %s has type %q", name, p.Type)
				}
			}
			shapes := callShapes[s.Name]
			if shapes == nil {
				var props []string
				for name := range doc.Properties {
					if slices.Contains(doc.Required, name) {
						name += "*"
					}
					props = append(props, name)
				}
				shapes = append(shapes, struct {
					props  []string
					sample map[string]any
				}{props: props})
			}
			seen := map[string]bool{}
			for _, shape := range shapes {
				obj := map[string]any{}
				var required []string
				for _, name := range shape.props {
					if n, ok := strings.CutSuffix(name, "*"); ok {
						name = n
						required = append(required, name)
					}
					if _, ok := doc.Properties[name]; !ok {
						t.Fatalf("shape names %s, which the schema lacks", name)
					}
					seen[name] = true
					obj[name] = all[name]
					if v, ok := shape.sample[name]; ok {
						obj[name] = v
					}
				}
				for _, req := range doc.Required {
					if !slices.Contains(required, req) {
						t.Fatalf("shape %v lacks the schema's required %s", shape.props, req)
					}
				}
				mustParse(t, s.Name, obj)
				for _, req := range required {
					less := maps.Clone(obj)
					delete(less, req)
					wantCode(t, s.Name, less, errcode.ToolBadInput)
				}
				more := maps.Clone(obj)
				more["extra"] = "x"
				wantCode(t, s.Name, more, errcode.ToolBadInput)
				for name := range obj {
					if !slices.Contains(required, name) {
						less := maps.Clone(obj)
						delete(less, name)
						mustParse(t, s.Name, less)
					}
				}
			}
			if len(seen) != len(doc.Properties) {
				t.Fatalf("the shapes name %d of the schema's %d properties", len(seen), len(doc.Properties))
			}
		})
	}
}

func mustParse(t *testing.T, name string, obj any) tools.Call {
	t.Helper()
	args, err := json.Marshal(obj)
	if err != nil {
		t.Fatal(err)
	}
	c, rerr := tools.Parse(name, args)
	if rerr != nil {
		t.Fatalf("Parse(%s, %s) = %+v", name, args, rerr)
	}
	return c
}

func wantCode(t *testing.T, name string, obj any, code errcode.Code) {
	t.Helper()
	args, err := json.Marshal(obj)
	if err != nil {
		t.Fatal(err)
	}
	_, rerr := tools.Parse(name, args)
	if rerr == nil || rerr.Code != code {
		t.Fatalf("Parse(%s, %s) = %+v, want %s", name, args, rerr, code)
	}
}
