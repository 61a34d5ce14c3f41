package openai

import (
	"encoding/hex"
	"regexp"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/harness-dev/harness/internal/errcode"
)

// AliasPrefix starts the wire name of a tool whose canonical name has
// characters that function names may not carry.
const AliasPrefix = "harness_"

// maxWireName is the longest function name Chat Completions accepts.
const maxWireName = 64

var wireSafe = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9_-]+$`) })

// WireName returns the name a tool carries on the wire: the canonical name
// when it is made of [A-Za-z0-9_-] only, else AliasPrefix followed by the
// lowercase hex of its UTF-8 bytes (fs.read → harness_66732e72656164).
func WireName(canonical string) string {
	if wireSafe().MatchString(canonical) {
		return canonical
	}
	return AliasPrefix + hex.EncodeToString([]byte(canonical))
}

// aliases maps the tool names of one request between their canonical and
// wire forms. It is built per request and read-only afterwards.
type aliases struct {
	toWire  map[string]string // canonical → wire
	toCanon map[string]string // wire → canonical
}

func newAliases() *aliases {
	return &aliases{toWire: map[string]string{}, toCanon: map[string]string{}}
}

// add registers a canonical name and returns its wire name. A wire name
// over 64 characters or one already taken by another canonical name is
// MODEL_INVALID_REQUEST.
func (a *aliases) add(canonical string) (string, error) {
	if w, ok := a.toWire[canonical]; ok {
		return w, nil
	}
	if canonical == "" {
		return "", errcode.New(errcode.ModelInvalidRequest, "alias tool name: empty name")
	}
	w := WireName(canonical)
	if len(w) > maxWireName {
		return "", errcode.Errorf(errcode.ModelInvalidRequest,
			"alias tool %q: wire name has %d characters, the limit is %d", canonical, len(w), maxWireName)
	}
	if other, ok := a.toCanon[w]; ok {
		return "", errcode.Errorf(errcode.ModelInvalidRequest,
			"alias tool %q: wire name %s is already used by %q", canonical, w, other)
	}
	a.toWire[canonical] = w
	a.toCanon[w] = canonical
	return w, nil
}

// canonical translates a name from a response back. A known wire name gives
// its canonical name, and so does the canonical name itself spelled with
// other separators or case when it names one tool of the request only
// (fs_read, fs-read, FS.Read for fs.read: models guess those from the
// descriptions, which name the tools canonically); an unknown name with
// AliasPrefix is MODEL_INVALID_RESPONSE; any other name passes unchanged
// (a tool the model made up, which the runtime answers with TOOL_NOT_FOUND).
func (a *aliases) canonical(wire string) (string, error) {
	if c, ok := a.toCanon[wire]; ok {
		return c, nil
	}
	if strings.HasPrefix(wire, AliasPrefix) {
		return "", invalidResponse("translate tool name %q: unknown alias", truncate(wire, 80))
	}
	if _, ok := a.toWire[wire]; ok {
		return wire, nil
	}
	match := ""
	for c := range a.toWire {
		if looseName(c) == looseName(wire) {
			if match != "" {
				return wire, nil // two tools fit: the runtime says which exist
			}
			match = c
		}
	}
	if match != "" {
		return match, nil
	}
	return wire, nil
}

// looseName is a tool name with its separators ('.', '_', '-') made one
// and its letters lower case.
func looseName(name string) string {
	return strings.Map(func(r rune) rune {
		switch r {
		case '_', '-':
			return '.'
		}
		return unicode.ToLower(r)
	}, name)
}

// known reports whether canonical was registered.
func (a *aliases) known(canonical string) bool {
	_, ok := a.toWire[canonical]
	return ok
}

// truncate cuts s to at most n bytes for a message.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}
