package event_test

import (
	"testing"

	"github.com/harness-dev/harness/internal/event"
)

var benchCases = []string{"message.delta", "message.completed/assistant", "tool.result", "context.checkpoint", "turn.completed"}

func BenchmarkEncode(b *testing.B) {
	for _, name := range benchCases {
		b.Run(name, func(b *testing.B) {
			var ev event.Event
			for _, g := range goldenEvents() {
				if g.name == name {
					ev = g.ev
				}
			}
			b.SetBytes(int64(len(mustEncode(b, ev))))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := event.Encode(ev); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkDecode(b *testing.B) {
	for _, name := range benchCases {
		b.Run(name, func(b *testing.B) {
			line := []byte(goldenLine(b, name))
			b.SetBytes(int64(len(line)))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := event.Decode(line); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
	// A rejected frame takes the strict path: the cost of a bad line.
	b.Run("reject/non-canonical", func(b *testing.B) {
		line := []byte(" " + goldenLine(b, "message.completed/assistant"))
		b.SetBytes(int64(len(line)))
		b.ReportAllocs()
		for b.Loop() {
			if _, err := event.Decode(line); err == nil {
				b.Fatal("Decode accepted a non-canonical frame")
			}
		}
	})
}
