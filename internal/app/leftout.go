package app

import (
	"fmt"
	"strings"

	"github.com/harness-dev/harness/internal/event"
)

// leftOutWords names each skip reason in LeftOut's line.
var leftOutWords = map[string]string{
	"binary":   "binary",
	"non-utf8": "not UTF-8",
	"hardlink": "with other hard links",
	"limit":    "over the size limit",
	"symlink":  "symlinks",
	"special":  "special files",
	"name":     "with names no tool can use",
}

// LeftOut is the line a front end shows for what a workspace's copy left
// out (workspace.lifecycle skipped), such as
// "left out of the workspace: 3 files (2 binary, 1 with other hard links): a.bin, b.bin, c.txt";
// "" when nothing was.
func LeftOut(sk *event.SkippedFiles) string {
	if sk == nil || sk.Count == 0 {
		return ""
	}
	var why []string
	for _, r := range sk.Reasons {
		why = append(why, fmt.Sprintf("%d %s", r.Count, leftOutWords[r.Reason]))
	}
	files := "files"
	if sk.Count == 1 {
		files = "file"
	}
	shown := strings.Join(sk.Paths, ", ")
	if len(sk.Paths) < sk.Count {
		shown += ", …"
	}
	return fmt.Sprintf("left out of the workspace: %d %s (%s): %s", sk.Count, files, strings.Join(why, ", "), shown)
}
