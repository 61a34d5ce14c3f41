package argv

import "testing"

// What a reader sees is what runs: an argument a POSIX shell would split
// or expand is quoted, a control character is escaped.
func TestLine(t *testing.T) {
	for _, c := range []struct {
		argv []string
		want string
	}{
		{[]string{"go", "test", "./..."}, "go test ./..."},
		{[]string{"sh", "-c", "echo hi > f", ""}, `sh -c 'echo hi > f' ''`},
		{[]string{"echo", "it's"}, `echo 'it'\''s'`},
		{[]string{"printf", "a\nb\x01"}, `printf $'a\nb\x01'`},
		{[]string{"echo", "$HOME", "*.go"}, `echo '$HOME' '*.go'`},
		{[]string{"rm", "-rf", "build dir"}, `rm -rf 'build dir'`},
	} {
		if got := Line(c.argv); got != c.want {
			t.Errorf("Line(%q) = %s, want %s", c.argv, got, c.want)
		}
	}
}
