package tools

import (
	"context"
	"fmt"
)

type outputKey struct{}

// WithOutput returns a context under which process.exec shows f its
// output as it comes (stream "stdout" or "stderr"; p is only valid during
// the call, which must not block). The result still carries the output.
func WithOutput(ctx context.Context, f func(stream string, p []byte)) context.Context {
	return context.WithValue(ctx, outputKey{}, f)
}

func outputOf(ctx context.Context) func(stream string, p []byte) {
	f, _ := ctx.Value(outputKey{}).(func(stream string, p []byte))
	return f
}

type maxOutputKey struct{}

// WithMaxOutput returns a context under which a call's output is bounded
// by n bytes rather than MaxOutputBytes, when n is smaller: what the
// session's context window can hold of one result (the runtime's bound).
// n ≤ 0 leaves MaxOutputBytes.
func WithMaxOutput(ctx context.Context, n int) context.Context {
	return context.WithValue(ctx, maxOutputKey{}, n)
}

// maxOutput is the output bound of a call run with ctx.
func maxOutput(ctx context.Context) int {
	if n, ok := ctx.Value(maxOutputKey{}).(int); ok && n > 0 && n < MaxOutputBytes {
		return n
	}
	return MaxOutputBytes
}

// overWhat names the bound limit for a message: the tools' own, or the
// context window's share.
func overWhat(limit int) string {
	if limit < MaxOutputBytes {
		return fmt.Sprintf("over the %d bytes one result may take in this session's context window", limit)
	}
	return fmt.Sprintf("over the limit of %d", limit)
}
