package compaction

import (
	"testing"

	"github.com/harness-dev/harness/internal/model"
)

// Scale keeps the meter's ratio exactly, the commas between messages
// included: a request of 100 times the meter's bytes is estimated at the
// character mix of the whole encoding in hundredths of a token, unrounded;
// any other multiple of them is that times the multiple, rounded up.
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
	// Any other multiple is rounded up.
	if x.hundredths%100 == 0 {
		t.Fatal("the messages' mix is a whole number of tokens: pick others, so rounding shows")
	}
	for k := 1; k <= 3; k++ {
		if got, want := m.Scale(k*m.Tokens()), (k*x.hundredths+99)/100; got != want {
			t.Errorf("Scale(%d × its bytes) = %d, want %d", k, got, want)
		}
	}
}

// A meter that measures nothing (the zero Meter) scales bytes at the
// highest weight, MixNonASCII hundredths each, rounded up.
func TestScaleOfAnEmptyMeter(t *testing.T) {
	var m Meter
	if got, want := m.Scale(1001), (1001*MixNonASCII+99)/100; got != want {
		t.Errorf("Scale(1001) = %d, want %d", got, want)
	}
}
