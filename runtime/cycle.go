package runtime

import (
	"fmt"
	"slices"
	"strings"

	"github.com/harness-dev/harness/internal/errcode"
)

// The cycle guard: beside the run of identical calls (repeats), a turn ends
// with RUNTIME_LOOP_DETECTED when its calls go round in a cycle, each call
// the same tool, arguments and result as one before it:
//   - the same block of 2 to cycleMaxPeriod calls cycleRounds times in a
//     row (an fs.list over 8 paths, again and again, ran 200 rounds), or
//   - staleCalls calls in a row none of which is new to the turn (a cycle
//     that is not strictly periodic).
//
// A call whose result differs (a file the model changed in between, a
// test that now fails otherwise) is new: a turn that reads many files,
// or the same file around its edits, never trips it.
const (
	cycleMaxPeriod = 8
	cycleRounds    = 3
	staleCalls     = 32
)

// cycles is one turn's record of its calls for the cycle guard.
type cycles struct {
	recent []callKey          // the latest calls, oldest first; at most cycleMaxPeriod*cycleRounds
	seen   map[callKey]bool   // every call of the turn
	names  map[callKey]string // the tool of each call in recent
	stale  int                // calls in a row that were seen before
}

// callKey is a call's tool, arguments and result, hashed.
type callKey = [32]byte

// see counts one call (its tool name and key) and returns
// RUNTIME_LOOP_DETECTED once the turn's calls go round in a cycle.
func (c *cycles) see(name string, key callKey) error {
	if c.seen == nil {
		c.seen, c.names = map[callKey]bool{}, map[callKey]string{}
	}
	if c.seen[key] {
		c.stale++
	} else {
		c.seen[key], c.stale = true, 0
	}
	if len(c.recent) == cycleMaxPeriod*cycleRounds {
		c.recent = slices.Delete(c.recent, 0, 1)
	}
	c.recent = append(c.recent, key)
	c.names[key] = name
	if p := c.period(); p > 0 {
		return errcode.Errorf(errcode.RuntimeLoopDetected,
			"the model made the same %d tool calls (%s) %d times over, with the same results each time; to go on, send a follow-up that tells it what to do differently",
			p, c.tools(c.recent[len(c.recent)-p:]), cycleRounds)
	}
	if c.stale >= staleCalls {
		return errcode.Errorf(errcode.RuntimeLoopDetected,
			"the model's last %d tool calls (%s) each repeated an earlier call of this turn with the same result; to go on, send a follow-up that tells it what to do differently",
			c.stale, c.tools(c.recent))
	}
	return nil
}

// period is the length of the block the latest calls repeat cycleRounds
// times in a row (2..cycleMaxPeriod), or 0.
func (c *cycles) period() int {
	n := len(c.recent)
	for p := 2; p <= cycleMaxPeriod && p*cycleRounds <= n; p++ {
		if block := c.recent[n-p:]; !slices.ContainsFunc(block, func(k callKey) bool { return k != block[0] }) {
			continue // one call again and again: the repeats guard's, at its own limit
		}
		periodic := true
		for i := n - p*(cycleRounds-1); i < n && periodic; i++ {
			periodic = c.recent[i] == c.recent[i-p]
		}
		if periodic {
			return p
		}
	}
	return 0
}

// tools names the tools of keys, each once with its count: "fs.list ×8".
func (c *cycles) tools(keys []callKey) string {
	count := map[string]int{}
	var order []string
	for _, k := range keys {
		name := c.names[k]
		if count[name] == 0 {
			order = append(order, name)
		}
		count[name]++
	}
	parts := make([]string, len(order))
	for i, name := range order {
		parts[i] = fmt.Sprintf("%s ×%d", name, count[name])
	}
	return strings.Join(parts, ", ")
}
