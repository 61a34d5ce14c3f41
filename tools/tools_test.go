package tools_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"maps"
	"os"
	"path/filepath"
	"slices"
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
	Type    string `json:"type"`
	Minimum *int64 `json:"minimum"`
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
			obj := map[string]any{}
			for name, raw := range doc.Properties {
				var p propDoc
				if err := json.Unmarshal(raw, &p); err != nil {
					t.Fatal(err)
				}
				switch p.Type {
				case "string":
					obj[name] = "x"
				case "integer":
					obj[name] = *p.Minimum
				case "array":
					obj[name] = []string{"x"}
				default:
					t.Fatalf("property %s has type %q", name, p.Type)
				}
			}
			mustParse(t, s.Name, obj)
			for _, req := range doc.Required {
				less := maps.Clone(obj)
				delete(less, req)
				wantCode(t, s.Name, less, errcode.ToolBadInput)
			}
			more := maps.Clone(obj)
			more["extra"] = "x"
			wantCode(t, s.Name, more, errcode.ToolBadInput)
			for name := range doc.Properties {
				if !slices.Contains(doc.Required, name) {
					less := maps.Clone(obj)
					delete(less, name)
					mustParse(t, s.Name, less)
				}
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
