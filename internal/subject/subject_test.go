package subject

import (
	"encoding/json"
	"testing"
)

// A call shows as a reader would type it: a path, a shell-quoted command
// line with its directory, the input on one line for any other tool.
func TestOf(t *testing.T) {
	for _, c := range []struct {
		tool, input, want string
	}{
		{"fs.read", `{"path":"src/main.go","offset":3}`, "src/main.go"},
		{"fs.list", `{"path":""}`, ""},
		{"process.exec", `{"argv":["go","test","./..."]}`, "go test ./..."},
		{"process.exec", `{"argv":["sh","-c","echo 'hi' > f"],"cwd":"sub"}`, `sh -c 'echo '\''hi'\'' > f'  (in sub)`},
		{"process.exec", `{"argv":["printf","a\nb"]}`, "printf 'a⏎b'"},
		{"git.diff", `{}`, ""},
		{"web.fetch", "{\"url\":\n  \"x\"}", `{"url": "x"}`},
	} {
		if got := Of(c.tool, json.RawMessage(c.input)); got != c.want {
			t.Errorf("Of(%s, %s) = %q, want %q", c.tool, c.input, got, c.want)
		}
	}
}
