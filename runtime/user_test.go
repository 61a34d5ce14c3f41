package runtime

import (
	"slices"
	"testing"
)

func TestMentionsAndShellCommand(t *testing.T) {
	for _, c := range []struct {
		text string
		want []string
	}{
		{"look at @README.md.", []string{"README.md"}},
		{"@cmd/main.go and @pkg/a_b-c.go, then @cmd/main.go again", []string{"cmd/main.go", "pkg/a_b-c.go"}},
		{"mail me@example.com or ping @", nil},
		{"@./dir/", []string{"./dir/"}},
		{"read @notes/日本語.txt, @c++/a+b.h and @pkg/@types/x.d.ts!", []string{"notes/日本語.txt", "c++/a+b.h", "pkg/@types/x.d.ts"}},
		{"(see @a.go)", []string{"a.go"}},
	} {
		if got := Mentions(c.text); !slices.Equal(got, c.want) {
			t.Errorf("Mentions(%q) = %q, want %q", c.text, got, c.want)
		}
	}
	for _, c := range []struct {
		text, cmd string
		ok        bool
	}{{"!ls -la", "ls -la", true}, {"! go test ./...", "go test ./...", true}, {"!", "", false}, {"hi !ls", "", false}, {"!a\nb", "", false}} {
		if cmd, ok := ShellCommand(c.text); cmd != c.cmd || ok != c.ok {
			t.Errorf("ShellCommand(%q) = %q, %v", c.text, cmd, ok)
		}
	}
}
