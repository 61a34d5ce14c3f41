package event_test

import (
	"strings"
	"testing"
	"unicode"

	"github.com/harness-dev/harness/internal/errcode"
	"github.com/harness-dev/harness/internal/event"
)

// The error-code syntax: an upper-case ASCII letter, then upper-case
// letters, digits and underscores; each end of each range is checked, and
// the bytes just outside it.
func TestErrorCodeSyntax(t *testing.T) {
	for code, want := range map[string]bool{
		"A": true, "Z": true, "AZ09_": true, "TOOL_BAD_INPUT": true, "E9": true, "X_": true,
		"": false, "@A": false, "[A": false, "a": false, "0A": false, "9": false, "_A": false,
		"A@": false, "A[": false, "A/": false, "A:": false, "Aa": false, "A-B": false, "A ": false,
	} {
		if got := event.IsCode(code); got != want {
			t.Errorf("IsCode(%q) = %v, want %v", code, got, want)
		}
	}
}

// A digest is exactly 64 lower-case hex digits.
func TestSHA256Syntax(t *testing.T) {
	ok := strings.Repeat("0123456789abcdef", 4)
	for s, want := range map[string]bool{
		ok: true, strings.Repeat("9", 64): true, strings.Repeat("f", 64): true, strings.Repeat("a", 64): true,
		ok[:63]: false, ok + "0": false, "": false,
		ok[:63] + "/": false, ok[:63] + ":": false, ok[:63] + "`": false, ok[:63] + "g": false, ok[:63] + "A": false,
	} {
		if got := event.IsSHA256(s); got != want {
			t.Errorf("IsSHA256(%q) = %v, want %v", s, got, want)
		}
	}
}

// Content holds 1..MaxContentRunes characters, counted as runes: exactly
// the bound passes in one-byte and in two-byte characters (more bytes than
// the bound), one character more fails with EVENT_INVALID_FIELD.
func TestContentBoundInRunes(t *testing.T) {
	for _, c := range []struct {
		content string
		code    errcode.Code
	}{
		{strings.Repeat("x", event.MaxContentRunes), ""},
		{strings.Repeat("ж", event.MaxContentRunes), ""},
		{strings.Repeat("x", event.MaxContentRunes+1), errcode.EventInvalidField},
		{strings.Repeat("ж", event.MaxContentRunes+1), errcode.EventInvalidField},
		{"x", ""},
	} {
		e := edit(t, "steering.queued", func(d *event.SteeringQueued) { d.Content = c.content })
		_, err := event.Encode(e)
		if got := errcode.Of(err); got != c.code {
			t.Errorf("content of %d bytes: code %q, want %q", len(c.content), got, c.code)
		}
	}
}

// An error that names a foreign key stays one line of printable text: a
// key holding a newline, a tab, DEL, a C1 control or a line separator is
// quoted (escaped) in the message, wherever it sits.
func TestForeignKeysNamedSafely(t *testing.T) {
	line := goldenLine(t, "turn.started")
	for _, key := range []string{`a\nb`, `\t`, `\u007f`, `\u0085`, `\u2028`, `x\u0000`} {
		for name, frame := range map[string]string{
			"envelope": strings.Replace(line, `{"v":1,`, `{"v":1,"`+key+`":1,`, 1),
			"data":     strings.Replace(line, `"data":{`, `"data":{"`+key+`":1,`, 1),
		} {
			_, err := event.Decode([]byte(frame))
			if errcode.Of(err) != errcode.EventUnknownKey {
				t.Fatalf("%s key %s: code %q, want EVENT_UNKNOWN_KEY", name, key, errcode.Of(err))
			}
			for _, r := range err.Error() {
				if unicode.IsControl(r) || r == '\u2028' || r == '\u2029' {
					t.Errorf("%s key %s: the error holds %U: %q", name, key, r, err.Error())
				}
			}
		}
	}
}

// Rules at their edges: a settings change naming no context policy (all
// four figures zero) is a session without compaction, but any one of them
// set calls for a whole policy; tool output of exactly MaxToolOutputBytes
// is kept; a rewind from no turn has fromTurn 0, one from a turn at least 1.
func TestRulesAtTheirEdges(t *testing.T) {
	for name, c := range map[string]struct {
		e    event.Event
		code errcode.Code
	}{
		"no policy": {edit(t, "settings.changed", func(d *event.SettingsChanged) {
			d.WindowTokens, d.ThresholdTokens, d.TailMessages, d.ReserveTokens = 0, 0, 0, 0
		}), ""},
		"only a reserve": {edit(t, "settings.changed", func(d *event.SettingsChanged) {
			d.WindowTokens, d.ThresholdTokens, d.TailMessages, d.ReserveTokens = 0, 0, 0, 5
		}), errcode.EventInvalidField},
		"output at the bound": {edit(t, "tool.output", func(d *event.ToolOutput) {
			d.Text = strings.Repeat("o", event.MaxToolOutputBytes)
		}), ""},
		"output over the bound": {edit(t, "tool.output", func(d *event.ToolOutput) {
			d.Text = strings.Repeat("o", event.MaxToolOutputBytes+1)
		}), errcode.EventInvalidField},
		"rewind from no turn": {edit(t, "session.rewound", func(d *event.SessionRewound) { d.FromTurnID, d.FromTurn = "", 0 }), ""},
		"rewind from a turn 0": {edit(t, "session.rewound", func(d *event.SessionRewound) { d.FromTurnID, d.FromTurn = "turn-9", 0 }),
			errcode.EventInvalidField},
	} {
		if _, err := event.Encode(c.e); errcode.Of(err) != c.code {
			t.Errorf("%s: code %q, want %q (%v)", name, errcode.Of(err), c.code, err)
		}
	}
}

// What an error message is made of: a key path joins keys with dots, a key
// of plain printable ASCII ('!' to '~', but a quote or a dot) is shown as
// it is, any other is quoted, and one over 64 bytes is cut; a foreign type
// name is cut after 64 bytes too; a non-canonical frame names the first
// byte that differs from its canonical form, or where the shorter ends.
func TestErrorMessageParts(t *testing.T) {
	at64, over64 := strings.Repeat("k", 64), strings.Repeat("k", 65)
	for _, c := range []struct{ path, key, want string }{
		{"", "at", "at"},
		{"data", "turnId", "data.turnId"},
		{"data", "!~", "data.!~"},
		{"data", "a b", `data."a b"`},
		{"data", "a\x7fb", `data."a\x7fb"`},
		{"data", "é", `data."é"`},
		{"data", `a"b`, `data."a\"b"`},
		{"data", "a.b", `data."a.b"`},
		{"data", at64, "data." + at64},
		{"data", over64, `data."` + at64 + `…"`},
	} {
		if got := event.Join(c.path, c.key); got != c.want {
			t.Errorf("Join(%q, %q) = %q, want %q", c.path, c.key, got, c.want)
		}
	}
	if got := event.Truncate(at64); got != at64 {
		t.Errorf("Truncate of 64 bytes = %q", got)
	}
	if got := event.Truncate(over64); got != at64+"…" {
		t.Errorf("Truncate of 65 bytes = %q", got)
	}
	for _, c := range []struct {
		a, b string
		want int
	}{{"abc", "abd", 2}, {"xbc", "abc", 0}, {"abc", "abc", 3}, {"ab", "abc", 2}, {"abc", "a", 1}} {
		if got := event.FirstDiff([]byte(c.a), []byte(c.b)); got != c.want {
			t.Errorf("FirstDiff(%q, %q) = %d, want %d", c.a, c.b, got, c.want)
		}
	}
}
