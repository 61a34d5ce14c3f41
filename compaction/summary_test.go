package compaction_test

import (
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
	"github.com/harness-dev/harness/compaction"
	"github.com/harness-dev/harness/internal/model"
)

var update = flag.Bool("update", false, "rewrite golden files")

// samplePrefix is a history compacted once before: an earlier summary, the pinned
// first request, a turn with parallel tool calls, steering and an answer.
func samplePrefix() []model.Message {
	return []model.Message{
		sys("You are Harness, a coding agent."),
		summaryMsg("The user wants a CSV parser in parser/; the API must stay `Parse(r io.Reader)`."),
		user("msg-1", "Write a CSV parser in parser/. Keep Parse(r io.Reader) as the API. No new dependencies."),
		say("msg-6", "Reading the files & running the tests <now>."),
		{ID: "msg-7", Role: model.RoleAssistant, Content: "Two calls:", ToolCalls: []model.ToolCall{
			{ID: "call-1", Name: "fs.read", Arguments: json.RawMessage(`{"path":"parser/parse.go"}`)},
			{ID: "call-2", Name: "proc.run", Arguments: json.RawMessage(`{"argv":["go","test","./parser/"]}`)},
		}},
		{ID: "msg-8", Role: model.RoleTool, ToolCallID: "call-1", Name: "fs.read", Content: `{"content":"package parser\n"}`},
		{ID: "msg-9", Role: model.RoleTool, ToolCallID: "call-2", Name: "proc.run", Content: `{"exitCode":1,"stdout":"--- FAIL: TestQuoted <\"a,b\">"}`},
		user("msg-10", "Quoted fields may contain newlines — handle them."),
		say("msg-11", "Fixed quoted fields; the tests pass."),
	}
}

func TestTranscriptGolden(t *testing.T) {
	got := compaction.Transcript(samplePrefix())
	path := filepath.Join("testdata", "transcript.golden")
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(string(want), got); diff != "" {
		t.Errorf("transcript changed; review and run with -update (-want +got):\n%s", diff)
	}
}

func TestSummaryRequest(t *testing.T) {
	prefix := samplePrefix()
	got := compaction.SummaryRequest(prefix)
	want := []model.Message{
		{Role: model.RoleSystem, Content: compaction.SummaryInstruction},
		{Role: model.RoleUser, Content: compaction.Transcript(prefix)},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("SummaryRequest (-want +got):\n%s", diff)
	}
	transcript := got[1].Content
	// The earlier summary, the calls and their results are all in the
	// transcript, as text.
	for _, part := range []string{
		"[earlier summary]\n" + strings.TrimPrefix(prefix[1].Content, compaction.SummaryPrefix),
		`[tool call call-1 fs.read] {"path":"parser/parse.go"}`,
		"[tool result call-2 proc.run]\n" + prefix[6].Content,
	} {
		if !strings.Contains(transcript, part) {
			t.Errorf("transcript lacks %q", part)
		}
	}
	for _, word := range []string{"goal", "constraint", "decision", "files", "commands", "open work", "next steps", "concise", "Do not call tools"} {
		if !strings.Contains(compaction.SummaryInstruction, word) {
			t.Errorf("summary instruction does not ask about %q", word)
		}
	}
}

func TestTranscriptBounds(t *testing.T) {
	bigResult := strings.Repeat("é", compaction.TranscriptToolBound) // twice the bound in bytes
	bigArgs := `{"text":"` + strings.Repeat("x", compaction.TranscriptToolBound) + `"}`
	bigText := strings.Repeat("ab日", compaction.TranscriptTextBound)
	bigSummary := strings.Repeat("s", 2*compaction.TranscriptTextBound)
	tests := []struct {
		name  string
		msg   model.Message
		piece string // the message's own text as rendered
		limit int    // 0: kept whole
	}{
		{"tool result cut at 4 KiB", model.Message{Role: model.RoleTool, ToolCallID: "c", Name: "fs.read", Content: bigResult},
			bigResult, compaction.TranscriptToolBound},
		{"tool call arguments cut at 4 KiB", model.Message{Role: model.RoleAssistant, ToolCalls: []model.ToolCall{
			{ID: "c", Name: "fs.write", Arguments: json.RawMessage(bigArgs)}}}, bigArgs, compaction.TranscriptToolBound},
		{"user text cut at 16 KiB", user("u", bigText), bigText, compaction.TranscriptTextBound},
		{"short tool result whole", result("t", "c"), `{"ok":true}`, 0},
		{"earlier summary kept whole", sys(compaction.SummaryPrefix + bigSummary), bigSummary, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := compaction.Transcript([]model.Message{tt.msg})
			if !utf8.ValidString(got) {
				t.Error("transcript is not valid UTF-8")
			}
			if tt.limit == 0 {
				if !strings.Contains(got, tt.piece) || strings.Contains(got, "[… cut") {
					t.Error("a piece within its bound was cut")
				}
				return
			}
			head, ok := longestKeptPrefix(got, tt.piece)
			if !ok {
				t.Fatal("the cut piece is not followed by a cut marker")
			}
			if len(head) > tt.limit || len(head) < tt.limit-utf8.UTFMax+1 {
				t.Errorf("kept %d bytes, want %d or up to %d fewer to end on a rune", len(head), tt.limit, utf8.UTFMax-1)
			}
			if len(got) > len(head)+200 {
				t.Errorf("transcript is %d bytes for %d kept", len(got), len(head))
			}
		})
	}
}

// longestKeptPrefix finds the longest prefix of piece that appears in s
// followed by a cut marker.
func longestKeptPrefix(s, piece string) (string, bool) {
	i := strings.Index(s, "\n[… cut: ")
	if i < 0 {
		return "", false
	}
	for n := min(len(piece), i); n > 0; n-- {
		if strings.HasSuffix(s[:i], piece[:n]) {
			return piece[:n], true
		}
	}
	return "", false
}

// A message of exactly its transcript bound is shown whole: the bound is
// inclusive, and no cut marker follows it.
func TestTranscriptBoundIsInclusive(t *testing.T) {
	text := strings.Repeat("t", compaction.TranscriptTextBound)
	out := compaction.Transcript([]model.Message{user("u1", text)})
	if !strings.Contains(out, text) || strings.Contains(out, "cut:") {
		t.Fatalf("a message of exactly %d bytes was cut", compaction.TranscriptTextBound)
	}
}
