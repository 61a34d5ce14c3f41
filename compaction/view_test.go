package compaction_test

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
	"github.com/harness-dev/harness/compaction"
	"github.com/harness-dev/harness/internal/errcode"
	"github.com/harness-dev/harness/internal/model"
)

func summaryMsg(text string) model.Message {
	return sys(compaction.SummaryPrefix + text)
}

func TestView(t *testing.T) {
	first := user("u1", "build the parser; keep the public API")
	chat := []model.Message{
		sys("you are harness"), first, call("a1", "c1"), result("t1", "c1"),
		sys("workspace ready"), user("u2", "now the tests"), say("a2", "done"),
	}
	afterCompaction := []model.Message{
		sys("you are harness"), summaryMsg("old summary"), first, user("u2", "now the tests"), say("a2", "done"),
		user("u3", "and docs"), say("a3", "ok"),
	}
	noUserFirst := []model.Message{
		sys("you are harness"), say("a0", "hello"), user("u1", "x"), say("a1", "y"),
	}
	tests := []struct {
		name     string
		msgs     []model.Message
		boundary int
		summary  string
		first    *model.Message
		want     []model.Message
	}{
		{
			name: "system messages of the prefix kept in order, first request pinned",
			msgs: chat, boundary: 5, summary: "  did A\n",
			want: []model.Message{
				sys("you are harness"), sys("workspace ready"), summaryMsg("did A"), first,
				user("u2", "now the tests"), say("a2", "done"),
			},
		},
		{
			name: "first request in the tail is not pinned",
			msgs: chat, boundary: 1, summary: "nothing yet",
			want: append([]model.Message{sys("you are harness"), summaryMsg("nothing yet")}, chat[1:]...),
		},
		{
			name: "earlier summary replaced, pin kept once",
			msgs: afterCompaction, boundary: 5, summary: "new summary",
			want: []model.Message{
				sys("you are harness"), summaryMsg("new summary"), first, user("u3", "and docs"), say("a3", "ok"),
			},
		},
		{
			name: "given first request pinned once when its pinned copy is in the prefix",
			msgs: afterCompaction, boundary: 5, summary: "new summary", first: &first,
			want: []model.Message{
				sys("you are harness"), summaryMsg("new summary"), first, user("u3", "and docs"), say("a3", "ok"),
			},
		},
		{
			name: "given first request pinned when absent from msgs",
			msgs: afterCompaction[3:], boundary: 2, summary: "s", first: &first,
			want: []model.Message{summaryMsg("s"), first, user("u3", "and docs"), say("a3", "ok")},
		},
		{
			name: "given first request not pinned when its ID is in the tail",
			msgs: chat, boundary: 1, summary: "s", first: &model.Message{ID: "u1", Role: model.RoleUser, Content: "other text"},
			want: append([]model.Message{sys("you are harness"), summaryMsg("s")}, chat[1:]...),
		},
		{
			name: "given first request without ID matched by content",
			msgs: []model.Message{user("", "x"), say("a1", "y"), user("", "go")}, boundary: 2, summary: "s",
			first: &model.Message{Role: model.RoleUser, Content: "go"},
			want:  []model.Message{summaryMsg("s"), user("", "go")},
		},
		{
			name: "first user message after an assistant message",
			msgs: noUserFirst, boundary: 3, summary: "s",
			want: []model.Message{sys("you are harness"), summaryMsg("s"), user("u1", "x"), say("a1", "y")},
		},
		{
			name: "no user message at all",
			msgs: []model.Message{say("a0", "x"), say("a1", "y")}, boundary: 1, summary: "s",
			want: []model.Message{summaryMsg("s"), say("a1", "y")},
		},
		{
			name: "empty tail",
			msgs: []model.Message{user("u1", "x"), say("a1", "y")}, boundary: 2, summary: "s",
			want: []model.Message{summaryMsg("s"), user("u1", "x")},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := cloneMessages(tt.msgs)
			got, err := compaction.View(tt.msgs, tt.boundary, tt.summary, tt.first)
			mustCode(t, err, "")
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("View (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(before, tt.msgs); diff != "" {
				t.Errorf("View changed its input (-before +after):\n%s", diff)
			}
		})
	}
}

func TestViewErrors(t *testing.T) {
	msgs := []model.Message{user("u1", "x"), call("a1", "c1"), result("t1", "c1"), say("a2", "y")}
	tests := []struct {
		name     string
		boundary int
		summary  string
		first    *model.Message
		code     errcode.Code
	}{
		{"empty summary", 3, "", nil, errcode.RuntimeSummaryFailed},
		{"white-space summary", 3, " \n\t ", nil, errcode.RuntimeSummaryFailed},
		{"negative boundary", -1, "s", nil, errcode.RuntimeInvalidInput},
		{"boundary past the end", 5, "s", nil, errcode.RuntimeInvalidInput},
		{"boundary at a tool result", 2, "s", nil, errcode.RuntimeInvalidInput},
		{"first request not from the user", 3, "s", &model.Message{ID: "a1", Role: model.RoleAssistant}, errcode.RuntimeInvalidInput},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := compaction.View(msgs, tt.boundary, tt.summary, tt.first)
			mustCode(t, err, tt.code)
			if got != nil {
				t.Errorf("View returned %d messages with an error", len(got))
			}
		})
	}
}

func TestPin(t *testing.T) {
	// "日" is three bytes: 2730 of them fill 8190 bytes, so the next one
	// straddles the 8 KiB bound.
	cjk := strings.Repeat("日", 2731) + " tail"
	tests := []struct {
		name     string
		content  string
		wantHead string // the original text kept
		cut      bool
	}{
		{"short kept whole", "fix it", "fix it", false},
		{"empty kept", "", "", false},
		{"exactly the bound kept whole", strings.Repeat("a", compaction.PinBound), strings.Repeat("a", compaction.PinBound), false},
		{"one byte over is cut", strings.Repeat("a", compaction.PinBound+1), strings.Repeat("a", compaction.PinBound), true},
		{"cut before a rune straddling the bound", cjk, strings.Repeat("日", 2730), true},
		{"four-byte rune straddling the bound", strings.Repeat("a", compaction.PinBound-2) + "🙂🙂", strings.Repeat("a", compaction.PinBound-2), true},
		// U+FFFD written out is a rune like any other, not an invalid byte.
		{"replacement character straddling the bound", strings.Repeat("a", compaction.PinBound-1) + "\uFFFDb", strings.Repeat("a", compaction.PinBound-1), true},
		// An invalid byte is a sequence of its own: the rune before it,
		// ending exactly at the bound, is kept.
		{"rune ending at the bound before an invalid byte", strings.Repeat("a", compaction.PinBound-3) + "日\x80zz", strings.Repeat("a", compaction.PinBound-3) + "日", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := model.Message{ID: "msg-1", Role: model.RoleUser, Content: tt.content}
			got := compaction.Pin(in)
			want := model.Message{ID: "msg-1", Role: model.RoleUser, Content: tt.wantHead}
			if tt.cut {
				want.Content += compaction.PinMarker
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("Pin (-want +got):\n%s", diff)
			}
			if !utf8.ValidString(got.Content) {
				t.Error("pinned content is not valid UTF-8")
			}
			if head := strings.TrimSuffix(got.Content, compaction.PinMarker); len(head) > compaction.PinBound {
				t.Errorf("kept %d bytes, more than %d", len(head), compaction.PinBound)
			}
			if diff := cmp.Diff(got, compaction.Pin(got)); diff != "" {
				t.Errorf("Pin of a pinned message changed it (-once +twice):\n%s", diff)
			}
		})
	}
}

func TestViewPinsCutFirstRequest(t *testing.T) {
	long := user("u1", strings.Repeat("é", compaction.PinBound)) // 16 KiB
	msgs := []model.Message{long, say("a1", "y"), user("u2", "z")}
	got, err := compaction.View(msgs, 2, "s", nil)
	mustCode(t, err, "")
	want := []model.Message{
		summaryMsg("s"),
		user("u1", strings.Repeat("é", compaction.PinBound/2)+compaction.PinMarker),
		user("u2", "z"),
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("View (-want +got):\n%s", diff)
	}
}

func TestIsSummary(t *testing.T) {
	tests := []struct {
		name string
		msg  model.Message
		want bool
	}{
		{"summary", summaryMsg("x"), true},
		{"plain system", sys("Conversation summary"), false},
		{"user quoting the prefix", user("u1", compaction.SummaryPrefix+"x"), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := compaction.IsSummary(tt.msg); got != tt.want {
				t.Errorf("IsSummary = %v, want %v", got, tt.want)
			}
		})
	}
}

func cloneMessages(msgs []model.Message) []model.Message {
	out := make([]model.Message, len(msgs))
	for i, m := range msgs {
		m.ToolCalls = append([]model.ToolCall(nil), m.ToolCalls...)
		out[i] = m
	}
	return out
}

// ViewTurn keeps the current turn's request word for word after the
// pinned first request, once, unless it is in the tail or is the first
// request; a long one is cut and marked as this turn's.
func TestViewTurn(t *testing.T) {
	first := user("u1", "build the parser")
	turn := user("u5", "now make it stream")
	msgs := []model.Message{first, say("a1", "done"), turn, call("a2", "c1"), result("t1", "c1"), call("a3", "c2"), result("t2", "c2")}
	long := user("u5", strings.Repeat("é", compaction.PinBound))
	tests := []struct {
		name     string
		boundary int
		turn     *model.Message
		msgs     []model.Message
		want     []model.Message
	}{
		{"in the prefix: pinned after the first request", 5, &turn, msgs,
			[]model.Message{summaryMsg("s"), first, turn, call("a3", "c2"), result("t2", "c2")}},
		{"in the tail: not pinned", 2, &turn, msgs,
			append([]model.Message{summaryMsg("s"), first}, msgs[2:]...)},
		{"the first request itself: pinned once", 3, &first, msgs,
			append([]model.Message{summaryMsg("s"), first}, msgs[3:]...)},
		{"none", 5, nil, msgs,
			[]model.Message{summaryMsg("s"), first, call("a3", "c2"), result("t2", "c2")}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := compaction.ViewTurn(tt.msgs, tt.boundary, "s", &first, tt.turn)
			mustCode(t, err, "")
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("ViewTurn (-want +got):\n%s", diff)
			}
		})
	}
	cut := []model.Message{first, say("a1", "done"), long, say("a2", "ok"), user("u6", "more")}
	got, err := compaction.ViewTurn(cut, 4, "s", &first, &cut[2])
	mustCode(t, err, "")
	if len(got) != 4 || got[2].ID != "u5" || !strings.HasSuffix(got[2].Content, compaction.TurnPinMarker) ||
		len(got[2].Content) > compaction.PinBound+len(compaction.TurnPinMarker) || !utf8.ValidString(got[2].Content) {
		t.Errorf("long turn request pinned as %d messages, [2] = %.80q…", len(got), got[2].Content)
	}
	if again := compaction.PinTurn(got[2]); again.Content != got[2].Content {
		t.Error("PinTurn of a pinned request changed it")
	}
	_, err = compaction.ViewTurn(msgs, 5, "s", &first, &model.Message{ID: "a1", Role: model.RoleAssistant})
	mustCode(t, err, errcode.RuntimeInvalidInput)
}

// View's group rule at its edges: a boundary whose tail answers a call
// made by the very first message separates that group (refused); a
// boundary of 0 keeps everything in the tail, so it separates nothing,
// even when the history opens with a result whose call is unknown.
func TestViewGroupRuleAtTheEdges(t *testing.T) {
	firstCalls := []model.Message{call("a0", "c1"), user("u1", "x"), result("t2", "c1"), say("a3", "y")}
	_, err := compaction.View(firstCalls, 1, "s", nil)
	mustCode(t, err, errcode.RuntimeInvalidInput)

	opensWithResult := []model.Message{result("t0", "lost"), user("u1", "x"), say("a2", "y")}
	got, err := compaction.View(opensWithResult, 0, "s", nil)
	mustCode(t, err, "")
	if len(got) == 0 {
		t.Fatal("View with boundary 0 returned no messages")
	}
}

// The turn's request is pinned once: not again when it is the first
// request itself, and pinned when there is no first request to pin.
func TestViewTurnPinsTheTurnOnce(t *testing.T) {
	msgs := []model.Message{user("u1", "task"), say("a1", "y"), user("u2", "z"), say("a2", "w")}
	count := func(view []model.Message, id string) int {
		n := 0
		for _, m := range view {
			if m.ID == id {
				n++
			}
		}
		return n
	}
	for name, first := range map[string]*model.Message{"first is the turn": &msgs[0], "no first": nil} {
		view, err := compaction.ViewTurn(msgs, 2, "s", first, &msgs[0])
		mustCode(t, err, "")
		if n := count(view, "u1"); n != 1 {
			t.Errorf("%s: the turn's request appears %d times, want once", name, n)
		}
	}
}
