package tools_test

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/harness-dev/harness/internal/errcode"
	"github.com/harness-dev/harness/internal/model"
	"github.com/harness-dev/harness/tools"
)

// fuzzParse checks, for arbitrary arguments to one tool, that Parse never
// panics; that a refusal carries TOOL_BAD_INPUT or WORKSPACE_PATH; and that
// anything accepted is one valid JSON object whose keys are exactly the
// schema's (case included, required ones present, no shell-style key), whose
// typed input marshals back to arguments Parse accepts as the same call.
func fuzzParse(f *testing.F, tool string, seeds ...string) {
	var spec tools.Spec
	for _, s := range tools.All() {
		if s.Name == tool {
			spec = s
		}
	}
	var doc schemaDoc
	if err := json.Unmarshal(spec.Schema, &doc); err != nil {
		f.Fatal(err)
	}
	common := []string{
		``, `{}`, `null`, `[]`, `"x"`, `{"cmd":"ls -la"}`, `{"command":"ls"}`, `{"argv":"ls -la"}`,
		`{"path":"a"} {}`, `{"path":"a","path":"b"}`, `{"PATH":"a"}`, `{"path":"\ud800"}`,
	}
	for _, s := range append(common, seeds...) {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, args []byte) {
		c, rerr := tools.Parse(tool, args)
		if rerr != nil {
			if rerr.Code != errcode.ToolBadInput && rerr.Code != errcode.WorkspacePath {
				t.Fatalf("refused with %s: %s", rerr.Code, rerr.Message)
			}
			if rerr.Message == "" {
				t.Fatal("refusal without a message")
			}
			return
		}
		if c.Tool != tool {
			t.Fatalf("tool %q, want %q", c.Tool, tool)
		}
		var obj map[string]json.RawMessage
		dec := json.NewDecoder(bytes.NewReader(args))
		if err := dec.Decode(&obj); err != nil || obj == nil {
			t.Fatalf("accepted arguments that are not a JSON object: %q (%v)", args, err)
		}
		if dec.More() {
			t.Fatalf("accepted trailing data: %q", args)
		}
		for key, raw := range obj {
			if _, ok := doc.Properties[key]; !ok {
				t.Fatalf("accepted unknown key %q in %q", key, args)
			}
			if key == "argv" && (len(raw) == 0 || raw[0] != '[') {
				t.Fatalf("accepted argv that is not an array: %q", args)
			}
		}
		for _, req := range doc.Required {
			if raw, ok := obj[req]; !ok || string(raw) == "null" {
				t.Fatalf("accepted without required %q: %q", req, args)
			}
		}
		for _, shell := range []string{"cmd", "command", "shell", "script"} {
			if _, ok := obj[shell]; ok {
				t.Fatalf("accepted a shell-style key %q", shell)
			}
		}
		again, err := model.MarshalCanonical(c.Input)
		if err != nil {
			t.Fatal(err)
		}
		c2, rerr := tools.Parse(tool, again)
		if rerr != nil {
			t.Fatalf("re-parse of %s refused: %+v", again, rerr)
		}
		if diff := cmp.Diff(c, c2); diff != "" {
			t.Fatalf("re-parse differs (-first +second):\n%s", diff)
		}
		if len(c.Subject) > 4096+len("…") {
			t.Fatalf("subject is %d bytes", len(c.Subject))
		}
	})
}

func FuzzParseRead(f *testing.F) {
	fuzzParse(f, "fs.read", `{"path":"a/b.go"}`, `{"path":"../x"}`, `{"path":".git/x"}`, `{"path":"a\\b"}`)
}

func FuzzParseList(f *testing.F) {
	fuzzParse(f, "fs.list", `{"path":"."}`, `{"path":"./"}`, `{"path":"a//b"}`)
}

func FuzzParseWrite(f *testing.F) {
	fuzzParse(f, "fs.write", `{"path":"a","contents":"x"}`, `{"path":"a","contents":"x","mode":1}`,
		`{"path":"a","contents":"\ud83d\ude00"}`, `{"contents":null,"path":"a"}`)
}

func FuzzParseExec(f *testing.F) {
	fuzzParse(f, "process.exec", `{"argv":["ls","-la"]}`, `{"argv":["ls"],"cwd":".","timeoutMs":100}`,
		`{"argv":["a\u0000"]}`, `{"argv":[1]}`, `{"argv":["ls"],"timeoutMs":1e3}`, `{"argv":["ls"],"timeoutMs":-0}`,
		`{"argv":["sleep","9"],"background":true}`, `{"argv":["ls"],"background":null}`, `{"background":true}`,
		`{"action":"list"}`, `{"action":"output","job":"job-1","offset":0}`, `{"action":"stop","job":"job-1","timeoutMs":5}`,
		`{"action":"stop"}`, `{"action":"list","job":"j"}`, `{"argv":["ls"],"action":"list"}`, `{"action":"Stop","job":"j"}`)
}

func FuzzParseDiff(f *testing.F) {
	fuzzParse(f, "git.diff", `{}`, ` {} `, `{"x":1}`)
}
