package openai

import (
	"bufio"
	"bytes"
	"errors"
	"io"
)

// maxEventBytes bounds one server-sent event (and one line of it).
const maxEventBytes = 32 << 20

var errEventTooLong = errors.New("an event is longer than 32 MiB")

// sseEvent is one dispatched server-sent event. errField says the server
// put the payload in an "error:" field (llama.cpp reports failures that
// way mid-stream), or named the event "error".
type sseEvent struct {
	data     []byte
	errField bool
}

// sseDecoder reads text/event-stream, with what real servers need: an "error:" field is an event of its own, an
// event cut off by the end of the body is still dispatched, a bare JSON
// line is an event of its own (Ollama writes its mid-stream errors so), and
// a body that starts like HTML is recognised.
type sseDecoder struct {
	r      *bufio.Reader
	held   []byte // a bare JSON line read while an event was pending
	events int    // events dispatched
	lines  int    // non-empty lines read
	html   bool
}

func newSSEDecoder(r io.Reader) *sseDecoder {
	return &sseDecoder{r: bufio.NewReaderSize(r, 64<<10)}
}

// next returns the next event, or io.EOF at the end of the body. A body
// whose first line starts with '<' sets html and ends at once.
func (d *sseDecoder) next() (sseEvent, error) {
	var (
		data    []byte
		hasData bool
		isErr   bool
	)
	dispatch := func() sseEvent {
		d.events++
		return sseEvent{data: bytes.TrimSuffix(data, []byte("\n")), errField: isErr}
	}
	if d.held != nil {
		data, d.held = d.held, nil
		d.events++
		return sseEvent{data: data}, nil
	}
	for {
		line, err := d.line()
		if err != nil {
			if errors.Is(err, io.EOF) && hasData {
				return dispatch(), nil
			}
			return sseEvent{}, err
		}
		if len(line) == 0 {
			if hasData {
				return dispatch(), nil
			}
			isErr = false
			continue
		}
		d.lines++
		if d.lines == 1 && line[0] == '<' {
			d.html = true
			return sseEvent{}, io.EOF
		}
		if line[0] == '{' || line[0] == '[' {
			if hasData {
				d.held = bytes.Clone(line)
				return dispatch(), nil
			}
			d.events++
			return sseEvent{data: line}, nil
		}
		name, value, _ := bytes.Cut(line, []byte(":"))
		value = bytes.TrimPrefix(value, []byte(" "))
		switch string(name) {
		case "": // a comment
		case "event":
			isErr = string(value) == "error"
		case "error":
			isErr = true
			fallthrough
		case "data":
			if len(data)+len(value) > maxEventBytes {
				return sseEvent{}, errEventTooLong
			}
			data = append(data, value...)
			data = append(data, '\n')
			hasData = true
		}
	}
}

// line reads one line without its terminator (\n, \r\n or \r before \n).
func (d *sseDecoder) line() ([]byte, error) {
	var out []byte
	for {
		chunk, err := d.r.ReadSlice('\n')
		out = append(out, chunk...)
		if len(out) > maxEventBytes {
			return nil, errEventTooLong
		}
		if err == nil {
			break
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if errors.Is(err, io.EOF) && len(out) > 0 {
			break
		}
		return nil, err
	}
	out = bytes.TrimSuffix(out, []byte("\n"))
	out = bytes.TrimSuffix(out, []byte("\r"))
	return out, nil
}
