package workspace

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

// EndsMarkRoom is more than the line JoinEnds puts between the two ends
// takes: a cap of n bytes keeps n − EndsMarkRoom of the output.
const EndsMarkRoom = 64

// JoinEnds is what is kept of an output too long for its cap: its start
// (head) and its end (tail), left bytes between them left out, with a line
// there saying how many. Both ends are cut at a line end when one is near
// (the bytes that go count as left out) and never inside a UTF-8
// sequence. A command's end (a test run's verdict, a build's error) matters
// at least as much as its start; Exec's cap and process.exec's fit both
// keep the two this way.
func JoinEnds(head, tail string, left int64) string {
	n := int64(len(head) + len(tail))
	if i := strings.LastIndexByte(head, '\n'); i >= 0 && len(head)-i <= 512 {
		head = head[:i+1]
	}
	// A sequence the cut split: the head's last, the tail's first bytes.
	for i := len(head) - 1; i >= 0 && i >= len(head)-utf8.UTFMax; i-- {
		if utf8.RuneStart(head[i]) {
			if !utf8.FullRuneInString(head[i:]) {
				head = head[:i]
			}
			break
		}
	}
	if i := strings.IndexByte(tail, '\n'); i >= 0 && i < 512 {
		tail = tail[i+1:]
	}
	for k := 0; k < utf8.UTFMax-1 && tail != "" && !utf8.RuneStart(tail[0]); k++ {
		tail = tail[1:]
	}
	left += n - int64(len(head)+len(tail))
	mark := "[… " + strconv.FormatInt(left, 10) + " bytes of output left out here …]\n"
	if head != "" && !strings.HasSuffix(head, "\n") {
		mark = "\n" + mark
	}
	return head + mark + tail
}
