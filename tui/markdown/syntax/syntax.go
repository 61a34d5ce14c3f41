// Package syntax classifies the code of a fenced Markdown block by its
// language, for the screen to colour: each line becomes runs of text with
// a Class (keyword, string, comment, …). Known languages: Go, Python,
// JavaScript, TypeScript, shell (sh, bash, zsh), JSON, YAML, diff, Rust,
// C and C++; any other fence stays plain.
//
// The lexing engine is chroma's (github.com/alecthomas/chroma/v2): its
// state machine over regexp2 rules, compiled on first use. Its lexer
// registry is not imported: that package parses all its ~280 embedded
// lexer definitions at start-up (17 ms of init measured here, for every
// run of harness, --version included, against about 0.6 ms for the
// engine alone). The rules here are this package's own, one small table
// per language, built on first use.
//
// Lexing costs tens of microseconds a line, so results are cached by
// language and text (not by width: wrapping happens after), bounded in
// bytes. A block still streaming in (an open fence) is lexed in chunks of
// chunkLines complete lines, each cached, plus its unfinished last line
// afresh, so a delta costs one line's lexing; a construct spanning a chunk
// boundary (a long comment) may be coloured from its middle until the
// fence closes and the whole block is lexed at once.
package syntax

import (
	"strings"
	"sync"

	"github.com/alecthomas/chroma/v2"
)

// Class is what a run of code is, as far as colour goes.
type Class uint8

// Classes.
const (
	Plain    Class = iota
	Keyword        // statements, declarations, operators spelled as words
	Type           // built-in and well-known types
	Constant       // true, false, nil, None
	Builtin        // built-in functions and names (len, print, self)
	Function       // a name called or defined
	String
	Number
	Comment
	Meta     // preprocessor lines, decorators, attributes, macros, YAML anchors
	Key      // JSON and YAML keys
	Variable // shell variables
	Inserted // diff: an added line
	Deleted  // diff: a removed line
	Hunk     // diff: an @@ line
	Header   // diff: file headers

	NumClasses = iota // the number of classes
)

// Run is a piece of one line of code with its class.
type Run struct {
	Class Class
	Text  string
}

// Known reports whether lang (a fence's info word, any case) names a
// language this package colours.
func Known(lang string) bool { return lookup(lang) != nil }

// Lines returns code's lines as runs, ok false (and nothing) for a
// language not known. open marks a block still streaming in. The result
// is shared: callers must not change it.
func Lines(lang, code string, open bool) (lines [][]Run, ok bool) {
	l := lookup(lang)
	if l == nil {
		return nil, false
	}
	if !open {
		return cached(l, code), true
	}
	// Complete lines in chunks, each cached; the unfinished last line
	// lexed on its own.
	done, rest := code, ""
	if i := strings.LastIndexByte(code, '\n'); i >= 0 {
		done, rest = code[:i+1], code[i+1:]
	} else {
		done, rest = "", code
	}
	for done != "" {
		cut, n := 0, 0
		for cut < len(done) && n < chunkLines {
			j := strings.IndexByte(done[cut:], '\n')
			cut += j + 1
			n++
		}
		lines = append(lines, cached(l, done[:cut-1])...)
		done = done[cut:]
	}
	return append(lines, lex(l, rest)...), true
}

// chunkLines is the size of the chunks a streaming block is lexed in.
const chunkLines = 24

// cacheBytes bounds the source text whose runs are kept.
const cacheBytes = 2 << 20

var cache = struct {
	sync.Mutex
	m     map[string][][]Run // guarded by Mutex; key: language name, NUL, text
	order []string           // insertion order, for eviction
	bytes int
}{m: map[string][][]Run{}}

func cached(l *language, code string) [][]Run {
	key := l.name + "\x00" + code
	cache.Lock()
	r, ok := cache.m[key]
	cache.Unlock()
	if ok {
		return r
	}
	r = lex(l, code)
	cache.Lock()
	defer cache.Unlock()
	if _, ok := cache.m[key]; !ok {
		cache.m[key] = r
		cache.order = append(cache.order, key)
		cache.bytes += len(key)
		for cache.bytes > cacheBytes && len(cache.order) > 1 {
			old := cache.order[0]
			cache.order = cache.order[1:]
			cache.bytes -= len(old)
			delete(cache.m, old)
		}
	}
	return r
}

// lex splits code into its lines (one more than it has newlines) of runs,
// adjacent runs of a class merged.
func lex(l *language, code string) [][]Run {
	lines := [][]Run{nil}
	add := func(c Class, text string) {
		for {
			i := strings.IndexByte(text, '\n')
			part := text
			if i >= 0 {
				part = text[:i]
			}
			if part != "" {
				cur := &lines[len(lines)-1]
				if n := len(*cur); n > 0 && (*cur)[n-1].Class == c {
					(*cur)[n-1].Text += part
				} else {
					*cur = append(*cur, Run{Class: c, Text: part})
				}
			}
			if i < 0 {
				return
			}
			lines = append(lines, nil)
			text = text[i+1:]
		}
	}
	it, err := l.lexer().Tokenise(nil, code)
	if err != nil {
		add(Plain, code)
		return lines
	}
	for t := it(); t != chroma.EOF; t = it() {
		add(classOf(t.Type), t.Value)
	}
	// A rule may have taken the newline the lexer added at the end.
	return lines[:min(len(lines), strings.Count(code, "\n")+1)]
}

func classOf(t chroma.TokenType) Class {
	switch t {
	case chroma.KeywordType:
		return Type
	case chroma.KeywordConstant:
		return Constant
	case chroma.NameBuiltin:
		return Builtin
	case chroma.NameFunction:
		return Function
	case chroma.CommentPreproc, chroma.NameDecorator, chroma.NameAttribute, chroma.NameFunctionMagic, chroma.NameLabel:
		return Meta
	case chroma.NameTag:
		return Key
	case chroma.NameVariable:
		return Variable
	case chroma.GenericInserted:
		return Inserted
	case chroma.GenericDeleted:
		return Deleted
	case chroma.GenericSubheading:
		return Hunk
	case chroma.GenericHeading:
		return Header
	}
	switch t.Category() {
	case chroma.Keyword:
		return Keyword
	case chroma.Comment:
		return Comment
	}
	switch t.SubCategory() {
	case chroma.LiteralString:
		return String
	case chroma.LiteralNumber:
		return Number
	}
	return Plain
}
