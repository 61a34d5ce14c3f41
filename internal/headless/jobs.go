package headless

import (
	"fmt"
	"strings"

	"github.com/harness-dev/harness/internal/argv"
	"github.com/harness-dev/harness/internal/event"
)

// jobLine is what harness exec prints when a background job starts or
// ends: its ID, its command and, at its end, how it ended with its last
// line.
func jobLine(d event.Data) string {
	switch d := d.(type) {
	case event.JobStarted:
		return fmt.Sprintf("  ⟳ job %s started in the background: %s\n", d.JobID, Short(argv.Line(d.Argv), 100))
	case event.JobExited:
		how := event.JobEndWords(d.Reason)
		if d.ExitCode != nil {
			how += fmt.Sprintf(", exit code %d", *d.ExitCode)
		}
		line := fmt.Sprintf("  ⟳ job %s ended (%s): %s\n", d.JobID, how, Short(argv.Line(d.Argv), 100))
		if last := lastLine(d.Tail); last != "" {
			line += "    │ " + Short(last, 160) + "\n"
		}
		return line
	}
	return ""
}

func lastLine(s string) string {
	s = strings.TrimRight(s, "\n")
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		s = s[i+1:]
	}
	return strings.TrimSpace(s)
}
