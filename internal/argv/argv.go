// Package argv shows a command's argument vector the one way every front
// end and the tools show it: as a POSIX shell would need it typed, so what
// a reader sees (in a question, a transcript or a record's subject) is
// exactly what runs. It imports only the standard library, so the headless
// runner can use it without linking a terminal UI.
package argv

import "strings"

// Line is argv as a POSIX shell would need it typed, each argument quoted
// when a shell would split or expand it.
func Line(argv []string) string {
	q := make([]string, len(argv))
	for i, a := range argv {
		q[i] = Quote(a)
	}
	return strings.Join(q, " ")
}

// Quote quotes s for a POSIX shell when it needs quoting; control
// characters are shown escaped ($'…') so a newline cannot hide part of a
// command.
func Quote(s string) string {
	if s != "" && !strings.ContainsAny(s, " \t\n\r'\"$`\\*?[]{}()<>|&;#~!") && printable(s) {
		return s
	}
	if printable(s) {
		return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
	}
	var b strings.Builder
	b.WriteString("$'")
	for _, r := range s {
		switch {
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\'' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r < 0x20 || r == 0x7f:
			b.WriteString(`\x`)
			b.WriteString(hex2(byte(r)))
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('\'')
	return b.String()
}

func printable(s string) bool {
	for _, r := range s {
		if r < 0x20 || r == 0x7f {
			return false
		}
	}
	return true
}

func hex2(b byte) string {
	const digits = "0123456789abcdef"
	return string([]byte{digits[b>>4], digits[b&0xf]})
}
