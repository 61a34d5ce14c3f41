package workspace_test

import (
	"io/fs"
	"path"
	"strings"
	"testing"

	"github.com/harness-dev/harness/internal/errcode"
	"github.com/harness-dev/harness/internal/workspace"
)

func TestCheckPath(t *testing.T) {
	long := strings.Repeat("a", workspace.MaxPathBytes)
	tests := []struct {
		name string
		path string
		want errcode.Code
	}{
		{"file", "a", ""},
		{"nested", "cmd/harness/main.go", ""},
		{"root", ".", ""},
		{"gitignore", "dir/.gitignore", ""},
		{"github dir", ".github/workflows/ci.yml", ""},
		{"git suffix", "repo.git/x", ""},
		{"gitkeep", "x/.gitkeep", ""},
		{"dots in name", "a..b/..c/c..", ""},
		{"unicode", "ünï/cödé/日本.txt", ""},
		{"spaces and dash", "-rf/ a b", ""},
		{"max length", long, ""},
		{"empty", "", errcode.WorkspacePath},
		{"too long", long + "a", errcode.WorkspacePath},
		{"absolute", "/etc/passwd", errcode.WorkspacePath},
		{"slash", "/", errcode.WorkspacePath},
		{"dotdot", "..", errcode.WorkspacePath},
		{"dotdot prefix", "../victim", errcode.WorkspacePath},
		{"dotdot middle", "a/../../b", errcode.WorkspacePath},
		{"dotdot suffix", "a/..", errcode.WorkspacePath},
		{"dot prefix", "./a", errcode.WorkspacePath},
		{"dot middle", "a/./b", errcode.WorkspacePath},
		{"dot suffix", "a/.", errcode.WorkspacePath},
		{"double slash", "a//b", errcode.WorkspacePath},
		{"trailing slash", "a/", errcode.WorkspacePath},
		{"git", ".git", errcode.WorkspacePath},
		{"git config", ".git/config", errcode.WorkspacePath},
		{"nested git", "sub/.git/HEAD", errcode.WorkspacePath},
		{"git upper", ".GIT/config", errcode.WorkspacePath},
		{"git mixed", "a/.Git", errcode.WorkspacePath},
		{"backslash", `a\b`, errcode.WorkspacePath},
		{"backslash dotdot", `..\victim`, errcode.WorkspacePath},
		{"nul", "a\x00b", errcode.WorkspacePath},
		{"newline", "a\nb", errcode.WorkspacePath},
		{"tab", "a\tb", errcode.WorkspacePath},
		{"del", "a\x7f", errcode.WorkspacePath},
		{"c1 control", "a\u0085b", errcode.WorkspacePath},
		{"invalid utf8", "a\xffb", errcode.WorkspacePath},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := errcode.Of(workspace.CheckPath(tt.path)); got != tt.want {
				t.Errorf("CheckPath(%q) = %q, want %q", tt.path, got, tt.want)
			}
		})
	}
}

// FuzzCheckPath checks that every accepted path other than "." is already
// clean, relative and a valid io/fs name, so os.Root and the Docker
// workspace both see exactly the path the rules approved.
func FuzzCheckPath(f *testing.F) {
	for _, s := range []string{"a", ".", "a/b", "../x", "a//b", ".git/x", "a\\b", "/x", "a/./b", "\x00"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, p string) {
		err := workspace.CheckPath(p)
		if err != nil {
			if errcode.Of(err) != errcode.WorkspacePath {
				t.Fatalf("CheckPath(%q) code %q", p, errcode.Of(err))
			}
			return
		}
		if p == "." {
			return
		}
		if !fs.ValidPath(p) || path.Clean(p) != p || path.IsAbs(p) || strings.ContainsAny(p, "\\\x00") {
			t.Fatalf("CheckPath accepted %q, which is not a clean relative path", p)
		}
		for seg := range strings.SplitSeq(p, "/") {
			if strings.EqualFold(seg, ".git") || seg == ".." {
				t.Fatalf("CheckPath accepted %q with segment %q", p, seg)
			}
		}
	})
}
