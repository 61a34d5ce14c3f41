package syntax

import (
	"strings"
	"sync"

	"github.com/alecthomas/chroma/v2"
)

// language is one entry of the table: its rules are built, and compiled
// by chroma, on first use.
type language struct {
	name  string
	lexer func() *chroma.RegexLexer
}

func newLanguage(name string, rules func() chroma.Rules) *language {
	return &language{name: name, lexer: sync.OnceValue(func() *chroma.RegexLexer {
		return chroma.MustNewLexer(&chroma.Config{Name: name, EnsureNL: true}, rules)
	})}
}

var (
	golang     = newLanguage("go", goRules)
	python     = newLanguage("python", pythonRules)
	javascript = newLanguage("javascript", func() chroma.Rules { return jsRules(false) })
	typescript = newLanguage("typescript", func() chroma.Rules { return jsRules(true) })
	shell      = newLanguage("shell", shellRules)
	jsonLang   = newLanguage("json", jsonRules)
	yaml       = newLanguage("yaml", yamlRules)
	diff       = newLanguage("diff", diffRules)
	rust       = newLanguage("rust", rustRules)
	clang      = newLanguage("c", func() chroma.Rules { return cRules(false) })
	cpp        = newLanguage("cpp", func() chroma.Rules { return cRules(true) })
)

// byName maps a fence's info word to its language.
var byName = map[string]*language{
	"go": golang, "golang": golang,
	"python": python, "py": python, "python3": python, "py3": python,
	"javascript": javascript, "js": javascript, "jsx": javascript, "mjs": javascript, "cjs": javascript, "node": javascript,
	"typescript": typescript, "ts": typescript, "tsx": typescript, "mts": typescript,
	"sh": shell, "bash": shell, "shell": shell, "zsh": shell, "ksh": shell, "console": shell, "shell-session": shell,
	"json": jsonLang, "jsonc": jsonLang, "json5": jsonLang,
	"yaml": yaml, "yml": yaml,
	"diff": diff, "patch": diff, "udiff": diff,
	"rust": rust, "rs": rust,
	"c": clang, "h": clang,
	"cpp": cpp, "c++": cpp, "cc": cpp, "cxx": cpp, "hpp": cpp,
}

func lookup(lang string) *language {
	lang = strings.ToLower(strings.TrimSpace(lang))
	lang = strings.TrimPrefix(lang, ".") // {.python} and .py style fences
	return byName[lang]
}

// set is a word list.
type set map[string]bool

func words(s string) set {
	m := set{}
	for _, w := range strings.Fields(s) {
		m[w] = true
	}
	return m
}

// names classifies the identifiers one rule matches — a keyword, type,
// constant or built-in by its word list, else a function when "(" follows —
// so a language needs one regexp for all its words, not one per list.
type names struct {
	keywords, types, constants, builtins set
}

// rule is the identifier rule: the name, blanks, and an opening paren.
func (n names) rule(ident string) chroma.Rule {
	return chroma.Rule{Pattern: `(` + ident + `)([ \t]*)(\()?`, Type: chroma.EmitterFunc(n.emit)}
}

func (n names) emit(groups []string, _ *chroma.LexerState) chroma.Iterator {
	name := groups[1]
	t := chroma.Name
	switch {
	case n.keywords[name]:
		t = chroma.Keyword
	case n.types[name]:
		t = chroma.KeywordType
	case n.constants[name]:
		t = chroma.KeywordConstant
	case n.builtins[name]:
		t = chroma.NameBuiltin
	case groups[3] != "":
		t = chroma.NameFunction
	}
	toks := []chroma.Token{{Type: t, Value: name}}
	if groups[2] != "" {
		toks = append(toks, chroma.Token{Type: chroma.TextWhitespace, Value: groups[2]})
	}
	if groups[3] != "" {
		toks = append(toks, chroma.Token{Type: chroma.Punctuation, Value: groups[3]})
	}
	return chroma.Literator(toks...)
}

const (
	ident       = `[\p{L}_][\p{L}\p{N}_]*`
	blank       = `[^\S\n]+`
	dqString    = `"(?:\\.|[^"\\\n])*"?` // an unclosed one ends at the line's end
	sqString    = `'(?:\\.|[^'\\\n])*'?`
	punctuation = `[-+*/%&|^!~<>=?:.,;@#$\\(){}\[\]]+`
)

func r(pattern string, t chroma.TokenType, m ...chroma.Mutator) chroma.Rule {
	rule := chroma.Rule{Pattern: pattern, Type: t}
	if len(m) > 0 {
		rule.Mutator = m[0]
	}
	return rule
}

// blockComment is the state inside /* … */ (nested when asked, as in Rust).
func blockComment(nested bool) []chroma.Rule {
	rules := []chroma.Rule{r(`\*/`, chroma.CommentMultiline, chroma.Pop(1))}
	if nested {
		rules = append(rules, r(`/\*`, chroma.CommentMultiline, chroma.Push()))
		return append(rules, r(`[^*/]+|[*/]`, chroma.CommentMultiline))
	}
	return append(rules, r(`[^*]+|\*`, chroma.CommentMultiline))
}

func goRules() chroma.Rules {
	n := names{
		keywords: words("break case chan const continue default defer else fallthrough for func go goto if import interface map package range return select struct switch type var"),
		types: words("bool byte complex64 complex128 error float32 float64 int int8 int16 int32 int64 rune string " +
			"uint uint8 uint16 uint32 uint64 uintptr any comparable"),
		constants: words("true false nil iota"),
		builtins:  words("append cap clear close complex copy delete imag len make max min new panic print println real recover"),
	}
	return chroma.Rules{
		"root": {
			r(`\n`, chroma.TextWhitespace),
			r(blank, chroma.TextWhitespace),
			r(`//[^\n]*`, chroma.CommentSingle),
			r(`/\*`, chroma.CommentMultiline, chroma.Push("comment")),
			n.rule(ident),
			r("`[^`]*`?", chroma.LiteralString),
			r(dqString, chroma.LiteralString),
			r(sqString, chroma.LiteralStringChar),
			r(`0[xX][0-9a-fA-F_]+|0[bB][01_]+|0[oO][0-7_]+|(?:\d[\d_]*(?:\.[\d_]*)?|\.\d[\d_]*)(?:[eEpP][+-]?\d+)?i?`, chroma.LiteralNumber),
			r(punctuation, chroma.Punctuation),
			r(`.`, chroma.Text),
		},
		"comment": blockComment(false),
	}
}

func pythonRules() chroma.Rules {
	n := names{
		keywords: words("and as assert async await break class continue def del elif else except finally for from global " +
			"if import in is lambda nonlocal not or pass raise return try while with yield match case"),
		types:     words("int float complex str bytes bytearray bool list dict set frozenset tuple object type"),
		constants: words("True False None NotImplemented Ellipsis"),
		builtins: words("self cls print len range open isinstance issubclass super enumerate zip map filter sorted reversed " +
			"min max sum abs any all repr getattr setattr hasattr delattr iter next id hash format input vars dir callable round"),
	}
	triple := func(q string) []chroma.Rule {
		return []chroma.Rule{
			r(q, chroma.LiteralString, chroma.Pop(1)),
			r(`\\.|[^\\`+q[:1]+`]+|[\\`+q[:1]+`]`, chroma.LiteralString),
		}
	}
	return chroma.Rules{
		"root": {
			r(`\n`, chroma.TextWhitespace),
			r(blank, chroma.TextWhitespace),
			r(`#[^\n]*`, chroma.CommentSingle),
			r(`@[\p{L}_][\p{L}\p{N}_.]*`, chroma.NameDecorator),
			r(`(?i:[rbuf]{0,2})"""`, chroma.LiteralString, chroma.Push("tdq")),
			r(`(?i:[rbuf]{0,2})'''`, chroma.LiteralString, chroma.Push("tsq")),
			r(`(?i:[rbuf]{0,2})`+dqString, chroma.LiteralString),
			r(`(?i:[rbuf]{0,2})`+sqString, chroma.LiteralString),
			n.rule(ident),
			r(`0[xX][0-9a-fA-F_]+|0[bB][01_]+|0[oO][0-7_]+|(?:\d[\d_]*(?:\.[\d_]*)?|\.\d[\d_]*)(?:[eE][+-]?\d+)?[jJ]?`, chroma.LiteralNumber),
			r(punctuation, chroma.Punctuation),
			r(`.`, chroma.Text),
		},
		"tdq": triple(`"""`),
		"tsq": triple(`'''`),
	}
}

func jsRules(ts bool) chroma.Rules {
	n := names{
		keywords: words("break case catch class const continue debugger default delete do else export extends finally for " +
			"function if import in instanceof let new return super switch this throw try typeof var void while with yield " +
			"async await of static get set from as"),
		constants: words("true false null undefined NaN Infinity"),
		builtins: words("console Object Array String Number Boolean Promise Math JSON Map Set WeakMap Symbol Error RegExp Date " +
			"BigInt window document globalThis require module exports process"),
	}
	if ts {
		for w := range words("interface type enum implements namespace declare abstract private protected public readonly keyof infer is satisfies override") {
			n.keywords[w] = true
		}
		n.types = words("string number boolean any unknown never void object bigint symbol")
	}
	return chroma.Rules{
		"root": {
			r(`\n`, chroma.TextWhitespace),
			r(blank, chroma.TextWhitespace),
			r(`//[^\n]*`, chroma.CommentSingle),
			r(`/\*`, chroma.CommentMultiline, chroma.Push("comment")),
			r("`", chroma.LiteralString, chroma.Push("template")),
			r(dqString, chroma.LiteralString),
			r(sqString, chroma.LiteralString),
			r(`@[\p{L}_$][\p{L}\p{N}_$.]*`, chroma.NameDecorator),
			n.rule(`[\p{L}_$][\p{L}\p{N}_$]*`),
			r(`0[xX][0-9a-fA-F_]+n?|0[bB][01_]+n?|0[oO][0-7_]+n?|(?:\d[\d_]*(?:\.[\d_]*)?|\.\d[\d_]*)(?:[eE][+-]?\d+)?n?`, chroma.LiteralNumber),
			r(punctuation, chroma.Punctuation),
			r(`.`, chroma.Text),
		},
		"comment": blockComment(false),
		"template": {
			r("`", chroma.LiteralString, chroma.Pop(1)),
			r(`\$\{`, chroma.Punctuation, chroma.Push("interpolation")),
			r("\\\\.|[^`\\\\$]+|\\$", chroma.LiteralString),
		},
		"interpolation": {
			r(`\}`, chroma.Punctuation, chroma.Pop(1)),
			chroma.Include("root"),
		},
	}
}

func shellRules() chroma.Rules {
	n := names{
		keywords: words("if then else elif fi for while until do done case esac in function select time return break continue " +
			"exit local export readonly declare typeset unset shift"),
		builtins: words("echo cd printf read source test set eval exec trap wait kill pwd alias type command true false " +
			"cat ls grep sed awk find mkdir rm cp mv chmod sudo git go make docker curl"),
	}
	variable := `\$\{[^}\n]*\}?|\$[A-Za-z_]\w*|\$[0-9@#?$!*-]`
	return chroma.Rules{
		"root": {
			r(`\n`, chroma.TextWhitespace),
			r(blank, chroma.TextWhitespace),
			r(`#[^\n]*`, chroma.CommentSingle), // only reached at a word's start
			r(`[A-Za-z_]\w*(?==)`, chroma.NameVariable),
			r(variable, chroma.NameVariable),
			r(`\$\(\(?|\)\)?`, chroma.Punctuation),
			r(`'[^']*'?`, chroma.LiteralString),
			r(`"`, chroma.LiteralString, chroma.Push("dq")),
			// A word: keywords and well-known commands when whole.
			chroma.Rule{Pattern: `([\p{L}\p{N}_./~+:@%,=#-]+)()()`, Type: chroma.EmitterFunc(n.emit)},
			r(`[|&;<>(){}\[\]!\\]+`, chroma.Punctuation),
			r(`.`, chroma.Text),
		},
		"dq": {
			r(`"`, chroma.LiteralString, chroma.Pop(1)),
			r(`\\.`, chroma.LiteralStringEscape),
			r(variable, chroma.NameVariable),
			r(`[^"\\$]+|\$`, chroma.LiteralString),
		},
	}
}

func jsonRules() chroma.Rules {
	return chroma.Rules{
		"root": {
			r(`\s+`, chroma.TextWhitespace),
			r(`"(?:\\.|[^"\\\n])*"(?=\s*:)`, chroma.NameTag),
			r(dqString, chroma.LiteralString),
			r(`-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?`, chroma.LiteralNumber),
			r(`(?:true|false|null)\b`, chroma.KeywordConstant),
			r(`//[^\n]*`, chroma.CommentSingle),
			r(`/\*`, chroma.CommentMultiline, chroma.Push("comment")),
			r(`[{}\[\],:]`, chroma.Punctuation),
			r(`.`, chroma.Text),
		},
		"comment": blockComment(false),
	}
}

func yamlRules() chroma.Rules {
	end := `(?=[ \t]*(?:#|\n|$|,|\]|\}))` // a scalar ends here
	return chroma.Rules{
		"root": {
			r(`^(?:---|\.\.\.)(?=\s|$)`, chroma.CommentPreproc),
			r(`\n`, chroma.TextWhitespace),
			r(blank, chroma.TextWhitespace),
			r(`#[^\n]*`, chroma.CommentSingle),
			r(`-(?=[ \t\n]|$)`, chroma.Punctuation),
			r(`(?:"(?:\\.|[^"\\\n])*"|'(?:''|[^'\n])*')(?=[ \t]*:(?:[ \t\n]|$))`, chroma.NameTag),
			r(`:(?=[ \t\n]|$)`, chroma.Punctuation),
			r(`[^\s#'"{}\[\],&*!|>%@:`+"`"+`][^\n#]*?(?=[ \t]*:(?:[ \t\n]|$))`, chroma.NameTag),
			r(`[&*][\p{L}\p{N}_-]+|![\p{L}\p{N}_!/.-]*`, chroma.CommentPreproc),
			r(`[|>][-+0-9]*(?=[ \t]*(?:#|\n|$))`, chroma.Punctuation),
			r(dqString, chroma.LiteralString),
			r(`'(?:''|[^'\n])*'?`, chroma.LiteralString),
			r(`(?i:true|false|yes|no|on|off|null|~)`+end, chroma.KeywordConstant),
			r(`[-+]?(?:\d[\d_]*(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?`+end, chroma.LiteralNumber),
			r(`[{}\[\],]`, chroma.Punctuation),
			r(`[^\s#,{}\[\]]+`, chroma.Text),
			r(`.`, chroma.Text),
		},
	}
}

func diffRules() chroma.Rules {
	return chroma.Rules{
		"root": {
			r(`^(?:diff |index |--- |\+\+\+ |new file|deleted file|similarity|rename )[^\n]*\n?`, chroma.GenericHeading),
			r(`^@@[^\n]*\n?`, chroma.GenericSubheading),
			r(`^\+[^\n]*\n?`, chroma.GenericInserted),
			r(`^-[^\n]*\n?`, chroma.GenericDeleted),
			r(`[^\n]*\n?`, chroma.Text),
		},
	}
}

func rustRules() chroma.Rules {
	n := names{
		keywords: words("as async await break const continue crate dyn else enum extern fn for if impl in let loop match mod " +
			"move mut pub ref return self Self static struct super trait type unsafe use where while"),
		types: words("bool char str u8 u16 u32 u64 u128 usize i8 i16 i32 i64 i128 isize f32 f64 " +
			"String Vec Option Result Box Rc Arc HashMap"),
		constants: words("true false"),
		builtins:  words("Some None Ok Err"),
	}
	return chroma.Rules{
		"root": {
			r(`\n`, chroma.TextWhitespace),
			r(blank, chroma.TextWhitespace),
			r(`//[^\n]*`, chroma.CommentSingle),
			r(`/\*`, chroma.CommentMultiline, chroma.Push("comment")),
			r(`#!?\[[^\]\n]*\]?`, chroma.NameAttribute),
			r(`b?r(#*)"[\s\S]*?"\1`, chroma.LiteralString),
			r(`b?"`, chroma.LiteralString, chroma.Push("string")),
			r(`b?'(?:\\(?:x[0-9a-fA-F]{2}|u\{[0-9a-fA-F_]+\}|.)|[^\\'\n])'`, chroma.LiteralStringChar),
			r(`'`+ident, chroma.NameLabel), // a lifetime
			r(ident+`!(?=[\s(\[{])`, chroma.NameFunctionMagic),
			n.rule(ident),
			r(`(?:0x[0-9a-fA-F_]+|0b[01_]+|0o[0-7_]+|\d[\d_]*(?:\.\d[\d_]*)?(?:[eE][+-]?\d+)?)(?:[iu](?:8|16|32|64|128|size)|f32|f64)?`, chroma.LiteralNumber),
			r(punctuation, chroma.Punctuation),
			r(`.`, chroma.Text),
		},
		"comment": blockComment(true),
		"string": {
			r(`"`, chroma.LiteralString, chroma.Pop(1)),
			r(`\\.|[^"\\]+`, chroma.LiteralString),
		},
	}
}

func cRules(plus bool) chroma.Rules {
	n := names{
		keywords: words("auto break case const continue default do else enum extern for goto if inline register restrict " +
			"return sizeof static struct switch typedef union volatile while"),
		types: words("char double float int long short signed unsigned void bool _Bool size_t ssize_t ptrdiff_t " +
			"int8_t int16_t int32_t int64_t uint8_t uint16_t uint32_t uint64_t uintptr_t FILE"),
		constants: words("NULL true false"),
		builtins:  words("printf fprintf sprintf snprintf malloc calloc realloc free memcpy memset strlen strcmp exit"),
	}
	if plus {
		for w := range words("class namespace template typename public private protected virtual override new delete this " +
			"using try catch throw operator constexpr consteval noexcept decltype static_cast dynamic_cast reinterpret_cast " +
			"const_cast explicit friend mutable final co_await co_return co_yield concept requires") {
			n.keywords[w] = true
		}
		n.constants["nullptr"] = true
		for w := range words("std string vector map unique_ptr shared_ptr") {
			n.types[w] = true
		}
	}
	return chroma.Rules{
		"root": {
			r(`^[ \t]*#[^\n]*`, chroma.CommentPreproc),
			r(`\n`, chroma.TextWhitespace),
			r(blank, chroma.TextWhitespace),
			r(`//[^\n]*`, chroma.CommentSingle),
			r(`/\*`, chroma.CommentMultiline, chroma.Push("comment")),
			r(`(?:L|u8?|U)?`+dqString, chroma.LiteralString),
			r(`(?:L|u8?|U)?`+sqString, chroma.LiteralStringChar),
			n.rule(ident),
			r(`0[xX][0-9a-fA-F']+[uUlL]*|0[bB][01']+[uUlL]*|(?:\d[\d']*(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?[fFuUlL]*`, chroma.LiteralNumber),
			r(punctuation, chroma.Punctuation),
			r(`.`, chroma.Text),
		},
		"comment": blockComment(false),
	}
}
