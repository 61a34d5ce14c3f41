package tools

import "context"

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
