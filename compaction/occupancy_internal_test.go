package compaction

import (
	"testing"

	"github.com/harness-dev/harness/internal/model"
)

// Scale keeps the meter's ratio exactly, the commas between messages
// included: a request of 100 times the meter's bytes is estimated at the
// character mix of the whole encoding in hundredths of a token, unrounded.
func TestScaleKeepsTheExactRatio(t *testing.T) {
	msgs := []model.Message{
		{ID: "m1", Role: model.RoleUser, Content: "fix the build"},
		{ID: "m2", Role: model.RoleAssistant, Content: "done, see a.go"},
		{ID: "m3", Role: model.RoleUser, Content: "thanks!"},
	}
	whole, err := model.MarshalCanonical(Occupied{Messages: msgs, Tools: []model.ToolSpec{}, System: "sys"})
	if err != nil {
		t.Fatal(err)
	}
	var x mix
	x.write(whole)
	m := NewMeter("sys", nil)
	for _, msg := range msgs {
		m.Add(msg)
	}
	if m.Tokens() != len(whole) {
		t.Fatalf("Tokens = %d, want %d", m.Tokens(), len(whole))
	}
	if got := m.Scale(100 * m.Tokens()); got != x.hundredths {
		t.Errorf("Scale(100 × its bytes) = %d, want %d hundredths", got, x.hundredths)
	}
}
