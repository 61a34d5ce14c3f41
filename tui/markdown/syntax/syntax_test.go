package syntax

import (
	"fmt"
	"strings"
	"testing"
)

// samples has a snippet per language; each names words and the class
// they must get.
var samples = []struct {
	lang string
	code string
	want map[string]Class
}{
	{"go", "package main\n\n/* block\n comment */\nfunc main() {\n\tx := []string{`raw`, \"q\"}\n\tfmt.Println(len(x), 0x1F, 'c', nil) // end\n}",
		map[string]Class{"package": Keyword, "func": Keyword, "main": Function, "string": Type, "`raw`": String, `"q"`: String,
			"Println": Function, "len": Builtin, "0x1F": Number, "'c'": String, "nil": Constant, "// end": Comment, " comment */": Comment, "\tfmt.": Plain}},
	{"python", "@dataclass\nclass A(Base):\n    \"\"\"Doc\n    more.\"\"\"\n    def f(self, x: int = 3) -> None:\n        return print(f\"v={x}\", True)  # c",
		map[string]Class{"@dataclass": Meta, "class": Keyword, "def": Keyword, "self": Builtin, "int": Type, "3": Number, "None": Constant,
			"print": Builtin, `f"v={x}"`: String, "True": Constant, "# c": Comment, `    more."""`: String}},
	{"ts", "const x: number = `a ${b + 1} c`;\nexport async function f(a?: string): Promise<void> { return null } // c",
		map[string]Class{"const": Keyword, "number": Type, "`a ": String, "1": Number, " c`": String, "function": Keyword, "f": Function,
			"Promise": Builtin, "null": Constant, "// c": Comment}},
	{"js", "import fs from 'fs';\nconsole.log(\"x\", 42n);", map[string]Class{"import": Keyword, "'fs'": String, "console": Builtin, "log": Function, "42n": Number}},
	{"bash", "#!/bin/sh\nFOO=bar\nif [ -n \"$FOO\" ]; then echo 'hi' # c\nfi\ngit commit -m x#y",
		map[string]Class{"#!/bin/sh": Comment, "FOO": Variable, "if": Keyword, "$FOO": Variable, "then": Keyword, "echo": Builtin,
			"'hi'": String, "# c": Comment, "fi": Keyword, " commit -m x#y": Plain}},
	{"json", `{"a": 1, "b": [true, null, "s"], "c": -2.5e3}`,
		map[string]Class{`"a"`: Key, "1": Number, "true": Constant, `"s"`: String, "-2.5e3": Number}},
	{"yaml", "---\nname: build # c\non:\n  push: {branches: [main]}\njobs:\n  - run: go test ./...\n    n: 3\n    ok: yes\n    a: &anchor 1",
		map[string]Class{"---": Meta, "name": Key, "# c": Comment, "push": Key, "branches": Key, "run": Key, "3": Number, "yes": Constant, "&anchor": Meta}},
	{"diff", "diff --git a/x b/x\n--- a/x\n+++ b/x\n@@ -1,2 +1,2 @@\n ctx\n-old\n+new",
		map[string]Class{"--- a/x": Header, "@@ -1,2 +1,2 @@": Hunk, " ctx": Plain, "-old": Deleted, "+new": Inserted}},
	{"rust", "#[derive(Debug)]\nfn main<'a>(s: &'a str) -> Option<u32> {\n    let c = 'x'; /* n /* nested */ c */\n    println!(\"{}\", r#\"raw\"#);\n    Some(run(42u32))\n}",
		map[string]Class{"#[derive(Debug)]": Meta, "fn": Keyword, "run": Function, "'a": Meta, "str": Type, "'x'": String,
			"/* n /* nested */ c */": Comment, "println!": Meta, `r#"raw"#`: String, "Some": Builtin, "42u32": Number}},
	{"c", "#include <stdio.h>\nint main(void) {\n  printf(\"%d\\n\", 0x10UL); // c\n  return NULL;\n}",
		map[string]Class{"#include <stdio.h>": Meta, "int": Type, "main": Function, "printf": Builtin, "0x10UL": Number, "// c": Comment, "return": Keyword, "NULL": Constant}},
	{"cpp", "template <typename T> class V { std::vector<T> v; auto p = nullptr; };",
		map[string]Class{"template": Keyword, "typename": Keyword, "class": Keyword, "vector": Type, "nullptr": Constant}},
}

func classes(lines [][]Run) map[string]Class {
	got := map[string]Class{}
	for _, l := range lines {
		for _, r := range l {
			got[r.Text] = r.Class
		}
	}
	return got
}

func TestLanguages(t *testing.T) {
	for _, s := range samples {
		t.Run(s.lang, func(t *testing.T) {
			lines, ok := Lines(s.lang, s.code, false)
			if !ok {
				t.Fatalf("Lines(%q) is not known", s.lang)
			}
			if n := strings.Count(s.code, "\n") + 1; len(lines) != n {
				t.Errorf("%d lines, want %d", len(lines), n)
			}
			// The runs put together are the code itself.
			var joined []string
			for _, l := range lines {
				var b strings.Builder
				for _, r := range l {
					b.WriteString(r.Text)
				}
				joined = append(joined, b.String())
			}
			if got := strings.Join(joined, "\n"); got != s.code {
				t.Errorf("runs give %q, want %q", got, s.code)
			}
			got := classes(lines)
			for text, want := range s.want {
				if c, ok := got[text]; !ok || c != want {
					t.Errorf("%q: class %d (found %v), want %d; runs: %v", text, c, ok, want, lines)
				}
			}
		})
	}
}

func TestUnknownLanguageIsPlain(t *testing.T) {
	for _, lang := range []string{"", "text", "cobol", "mermaid"} {
		if lines, ok := Lines(lang, "IDENTIFICATION DIVISION.", false); ok || lines != nil || Known(lang) {
			t.Errorf("Lines(%q) = %v, %v; want nothing", lang, lines, ok)
		}
	}
	for _, lang := range []string{"Go", "PY", "sh", "Bash", "shell", "yml", "JSON", "tsx", "rs", "c", "patch", ".python"} {
		if !Known(lang) {
			t.Errorf("Known(%q) = false", lang)
		}
	}
}

// A block streaming in (open) gives, line for line, what the closed block
// gives, for text without constructs across a chunk boundary; its
// unfinished last line is coloured too.
func TestOpenBlockMatchesClosed(t *testing.T) {
	for _, s := range samples {
		closed, _ := Lines(s.lang, s.code, false)
		for cut := 1; cut <= len(s.code); cut++ {
			prefix := s.code[:cut]
			open, _ := Lines(s.lang, prefix, true)
			if n := strings.Count(prefix, "\n") + 1; len(open) != n {
				t.Fatalf("%s: open block of %d lines gives %d", s.lang, n, len(open))
			}
			// Complete lines match the closed block's, unless the
			// prefix ends inside a construct opened on an earlier line.
			if cut < len(s.code) && s.code[cut] == '\n' && !strings.Contains(s.code[:cut], "/*") && !strings.Contains(s.code[:cut], `"""`) {
				for i := range open {
					if fmt.Sprint(open[i]) != fmt.Sprint(closed[i]) {
						t.Errorf("%s, first %d bytes: line %d is %v open, %v closed", s.lang, cut, i, open[i], closed[i])
					}
				}
			}
		}
	}
}

// A block longer than a chunk is lexed in chunks while open: the lines
// are all there, in order.
func TestOpenBlockInChunks(t *testing.T) {
	var b strings.Builder
	for i := range 3*chunkLines + 5 {
		fmt.Fprintf(&b, "x%d := %d // line %d\n", i, i, i)
	}
	b.WriteString("if x")
	code := b.String()
	open, _ := Lines("go", code, true)
	closed, _ := Lines("go", code, false)
	if len(open) != len(closed) || len(open) != 3*chunkLines+6 {
		t.Fatalf("open %d lines, closed %d, want %d", len(open), len(closed), 3*chunkLines+6)
	}
	for i := range open {
		if fmt.Sprint(open[i]) != fmt.Sprint(closed[i]) {
			t.Errorf("line %d: open %v, closed %v", i, open[i], closed[i])
		}
	}
}

func TestCacheIsBounded(t *testing.T) {
	comment := "// " + strings.Repeat("x", 8<<10)
	for i := range 2 * cacheBytes / len(comment) {
		Lines("go", fmt.Sprintf("%s %d", comment, i), false)
	}
	cache.Lock()
	defer cache.Unlock()
	if cache.bytes > cacheBytes || len(cache.m) != len(cache.order) {
		t.Errorf("cache holds %d bytes (bound %d), %d entries for %d keys", cache.bytes, cacheBytes, len(cache.m), len(cache.order))
	}
}

// goSource is about 60 lines of Go.
var goSource = func() string {
	var b strings.Builder
	for i := range 10 {
		fmt.Fprintf(&b, "// Parse reads one list; a trailing comma is allowed.\nfunc Parse(s string) ([]int, error) {\n\tvar out []int\n\tfor _, f := range strings.Split(s, \",\") {\n\t\tout = append(out, len(f)+%d)\n\t}\n", i)
	}
	return b.String()
}()

// BenchmarkLex is the cost of lexing 60 lines of Go once (a cache miss).
func BenchmarkLex(b *testing.B) {
	for b.Loop() {
		lex(golang, goSource)
	}
}

// BenchmarkOpenBlockDelta is the cost per delta of a 60-line Go block
// streaming in: its complete lines come from the cache, its last line is
// lexed.
func BenchmarkOpenBlockDelta(b *testing.B) {
	code := goSource + "\tif len(out) > "
	Lines("go", code, true)
	for b.Loop() {
		Lines("go", code, true)
	}
}
