package app

import (
	"testing"

	"github.com/harness-dev/harness/internal/event"
)

func TestLeftOut(t *testing.T) {
	for _, tc := range []struct {
		name string
		sk   *event.SkippedFiles
		want string
	}{
		{"nothing", nil, ""},
		{"one", &event.SkippedFiles{Count: 1, Reasons: []event.SkipCount{{Reason: "symlink", Count: 1}}, Paths: []string{"link"}},
			"left out of the workspace: 1 file (1 symlinks): link"},
		{"some", &event.SkippedFiles{Count: 3, Reasons: []event.SkipCount{{Reason: "binary", Count: 2}, {Reason: "hardlink", Count: 1}},
			Paths: []string{"a.bin", "b.bin", "c.txt"}},
			"left out of the workspace: 3 files (2 binary, 1 with other hard links): a.bin, b.bin, c.txt"},
		{"more than shown", &event.SkippedFiles{Count: 12, Reasons: []event.SkipCount{{Reason: "limit", Count: 12}},
			Paths: []string{"a", "b"}},
			"left out of the workspace: 12 files (12 over the size limit): a, b, …"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := LeftOut(tc.sk); got != tc.want {
				t.Errorf("LeftOut = %q\nwant      %q", got, tc.want)
			}
		})
	}
}
