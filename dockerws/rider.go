package dockerws

import (
	"bytes"
	"context"
	"io"
	"strings"
)

// The first command rides the copy-in.
//
// An exec costs the daemon tens of milliseconds to start a process in the
// container, whatever the process does. A workspace whose first command
// is asked for before its tree is copied in (a headless run whose model
// answers at once) would pay that twice before the command's result: the
// copy-in's exec, then the command's. Instead, such a command waits as
// the rider: the open runs the copy-in and, in the same process once it
// has printed its mark, the command's wrapper (fusedScript). The open
// takes the rider when it reaches the copy-in, and answers it exactly
// once: with the running execution (the mark seen, the workspace lock
// taken for the rider, which then awaits it as Exec does its own), or
// with nil (the copy-in failed, or the owner record of a claimed spare
// did; the rider then runs its command as any Exec, once the open is
// over). Only one command rides: a second one waits for the open.

// rider is an Exec waiting for the open's copy-in. Its fields but hand
// are set before it is offered; answered and gone are guarded by
// Workspace.mu.
type rider struct {
	args           []string // the wrapper's arguments: directory, then argv
	stdout, stderr io.Writer
	hand           chan *execution // one answer, buffered
	answered       bool            // the open sent its answer
	gone           bool            // the Exec stopped waiting before the answer
}

// fusedScript runs the copy-in (copyInScript, in a subshell, its stderr
// kept in a file) and, once it succeeded, the exec wrapper in the same
// process with the arguments after the copy-in's. The copy-in's
// arguments end with the count of link pairs, so the wrapper's start at
// 6 + twice that count. When the copy-in fails, its exit code is the
// process's; its stdout, RS (0x1E) and its stderr are printed, and the
// wrapper never runs. Nothing reaches stderr before the wrapper starts.
const fusedScript = `exec 3>&2 2>/dev/null
e=/tmp/.harness-copyin.$$
( export TZ=UTC0 LC_ALL=C
` + copyInScript + `
) 2>"$e" || { r=$?; printf '\036'; cat "$e"; rm -f "$e"; exit $r; }
rm -f "$e"
shift $((5 + 2 * $5))
exec </dev/null 2>&3 3>&-
` + execWrapper

// offerRide makes r the rider if the open has not reached its copy-in
// yet and no other command rides, and waits for the open's answer: the
// running execution, with the workspace lock held for the caller, or nil
// when the command does not ride (declined, or the caller stopped
// waiting: ctx ended, the workspace closed, the open ended without taking
// it). offered reports whether r waited as the rider at all.
func (w *Workspace) offerRide(ctx context.Context, r *rider) (e *execution, offered bool) {
	w.mu.Lock()
	if d, _ := w.stepLocked(evRide, ""); d.act != actGo || w.rider != nil {
		w.mu.Unlock()
		return nil, false
	}
	r.hand = make(chan *execution, 1)
	w.rider = r
	w.mu.Unlock()
	w.Begin()
	select {
	case e := <-r.hand:
		return e, true
	case <-ctx.Done():
	case <-w.done:
	case <-w.ready:
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	switch {
	case w.rider == r: // not taken
		w.rider = nil
		return nil, true
	case r.answered:
		return <-r.hand, true
	default: // taken: the open finds it gone and ends what it started
		r.gone = true
		return nil, true
	}
}

// takeRider marks the open as copying (no command rides from now on) and
// returns the rider, if one waits.
func (w *Workspace) takeRider() *rider {
	w.mu.Lock()
	defer w.mu.Unlock()
	_, _ = w.stepLocked(evCopy, "")
	r := w.rider
	w.rider = nil
	return r
}

// answer gives the rider the open's answer: e, running, with the
// workspace lock taken for it, or nil. A rider gone meanwhile gets
// nothing: its command is killed (e's stream closed) and the lock given
// back.
func (w *Workspace) answer(ctx context.Context, r *rider, e *execution) {
	if e != nil {
		w.lock <- struct{}{} // free: every other operation waits for the open
	}
	w.mu.Lock()
	gone := r.gone
	r.answered = !gone
	w.mu.Unlock()
	if !gone {
		r.hand <- e
		return
	}
	if e != nil {
		w.sweep(ctx, e, false)
		<-w.lock
	}
}

// copyInRiding runs the copy-in with the rider's command after it in one
// exec. It returns the mark once the copy-in printed it, with the command
// handed to the rider (check, the open's last condition for keeping this
// container, passed); otherwise the rider is declined and it returns what
// the copy-in script reported, as script does (exit code, stdout, and
// stderr), or the error of check.
func (w *Workspace) copyInRiding(ctx context.Context, op string, stdin io.Reader, r *rider, check func() error) (mark string, code int, stdout, stderr string, err error) {
	answered := false
	defer func() {
		if !answered {
			w.answer(ctx, r, nil)
		}
	}()
	split := &markSplit{next: r.stdout, seen: make(chan struct{}), kept: capped{max: 16 << 10}}
	argv := append([]string{"sh", "-c", fusedScript, "sh"}, w.copyInArgs()...)
	e, err := w.start(ctx, proc{argv: append(argv, r.args...), stdin: stdin, stdout: split, stderr: r.stderr})
	if err != nil {
		return "", 0, "", "", w.opError(ctx, op, err)
	}
	select {
	case <-split.seen:
	case <-e.done:
	case <-ctx.Done():
	}
	select {
	case <-split.seen:
		if err := check(); err != nil {
			e.close() // the container is given up
			return "", 0, "", "", err
		}
		answered = true
		w.answer(ctx, r, e)
		return split.mark, 0, "", "", nil
	default:
	}
	code, state, err := w.await(ctx, e, nil)
	if w.isClosed() {
		if state == awaitCanceled {
			e.close()
		}
		return "", 0, "", "", disposed(op)
	}
	switch state {
	case awaitCanceled:
		e.close()
		return "", 0, "", "", canceled(ctx, op)
	case awaitFailed:
		return "", 0, "", "", w.opError(ctx, op, err)
	}
	out, errText, _ := strings.Cut(split.kept.String(), "\x1e")
	return "", code, out, strings.TrimSpace(errText), nil
}

// markSplit is the stdout of a riding exec: it holds back the first line;
// when that line is a mark, it closes seen and passes the rest on to next
// (the command's output), otherwise it keeps everything (the copy-in's
// output, capped). Written by the copying goroutine only; mark is read
// once seen is closed, kept once the stream ended.
type markSplit struct {
	next  io.Writer
	seen  chan struct{}
	mark  string
	line  []byte
	state int // 0 reading the first line, 1 passing on, 2 keeping
	kept  capped
}

func (s *markSplit) Write(p []byte) (int, error) {
	n := len(p)
	if s.state == 0 {
		i := bytes.IndexByte(p, '\n')
		if i < 0 && len(s.line)+len(p) <= 64 {
			s.line = append(s.line, p...)
			return n, nil
		}
		if i < 0 || !markRE().Match(append(s.line, p[:i]...)) {
			s.state = 2
			_, _ = s.kept.Write(s.line)
		} else {
			s.mark = string(append(s.line, p[:i]...))
			s.state = 1
			p = p[i+1:]
			close(s.seen)
		}
		s.line = nil
	}
	if s.state == 2 {
		return s.kept.Write(p)
	}
	if len(p) == 0 {
		return n, nil
	}
	if _, err := s.next.Write(p); err != nil {
		return n, err
	}
	return n, nil
}
