package compaction

// Occupancy rules, written into each context.accounted event (its
// algorithm field) so a reader knows which rule produced the figure.
const (
	// Algorithm counts every byte of the canonical JSON of the occupied
	// part of the request as a token: a conservative upper bound, used
	// before the provider has reported usage, for a provider that reports
	// none, and after an implausible report.
	Algorithm = "utf8-upper-bound/v1"
	// AlgorithmReported starts from the prompt tokens the provider
	// reported for the last request and converts the bytes added since at
	// the bytes-per-token ratio of that report, with CalibrationMargin.
	AlgorithmReported = "reported-usage/v1"
	// AlgorithmRatio estimates the tokens of the bytes Algorithm counts
	// from their character mix (MixTokens): the calibrated default before
	// a usage report for the provider models it was measured on
	// (OpenAI-compatible servers), where Algorithm would count about four
	// times the real tokens. Its first version divided every byte by one
	// ratio, 3.6 bytes per token, set for code and JSON; English prose
	// tokenizes better (about 4.9 bytes per token) and came out +35 % over.
	AlgorithmRatio = "char-mix/v1"
)

// The weights of AlgorithmRatio, in hundredths of a token. A tokenizer
// makes one token of most words with the space before them, and spends
// about a token on every two or three other characters. So the estimate
// counts
//
//   - a word (a run of ASCII letters; a longer run counts once per
//     MixRun letters) as MixWord,
//   - a space as nothing,
//   - a JSON escape (a backslash and the byte after it: \n, \t, \")
//     as MixOther, as one other byte: the text the model reads has one
//     character there (a message's text is counted in its JSON encoding,
//     a tool's result holds JSON text itself),
//   - a byte of a non-ASCII character as MixNonASCII (1.5 tokens for a
//     three-byte CJK character, which tokenizers spend one or two on),
//   - any other byte (digits, punctuation) as MixOther.
//
// The weights are a least-squares fit of the relative error on requests
// that read each of this repository's files (system prompt, tools, a
// user message, an fs.read call and its result, as Meter counts them)
// against o200k_base and cl100k_base tokens of the same requests rendered
// as a chat, and on the recorded servers' streamed text against the
// completion tokens they reported (1.20 a word, 0.36 another byte), plus
// a margin of about 10 %, so that the estimate is an upper bound: every
// class of file and every stream lands between −2 % and +16 % of the
// real tokens, single requests at +6 % (5th percentile) to +23 % (95th)
// (BENCHMARKS.md, "Context estimate"; scripts/tokencount reproduces the
// table).
// Dense random text (go.sum's base64 hashes) is the known exception,
// about 30 % under.
const (
	MixWord     = 135
	MixRun      = 12
	MixOther    = 39
	MixNonASCII = 50
)

// mix accumulates AlgorithmRatio's estimate over bytes written in order.
type mix struct {
	hundredths int  // the estimate, in hundredths of a token
	left       int  // letters the word being read takes before it counts once more
	esc        bool // the previous byte began an escape
}

func (x *mix) write(p []byte) {
	for _, c := range p {
		if x.esc {
			x.esc, x.left = false, 0
			continue
		}
		switch {
		case c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z':
			if x.left == 0 { // a word starts, or its last MixRun letters are full
				x.hundredths += MixWord
				x.left = MixRun
			}
			x.left--
		case c == ' ':
			x.left = 0
		case c >= 0x80:
			x.left = 0
			x.hundredths += MixNonASCII
		default:
			x.left = 0
			x.esc = c == '\\'
			x.hundredths += MixOther
		}
	}
}

// MixTokens is AlgorithmRatio's estimate of the tokens of b (UTF-8 text
// or its JSON encoding), rounded up. It costs O(len(b)).
func MixTokens(b []byte) int {
	var x mix
	x.write(b)
	return ceilDiv(x.hundredths, 100)
}

// CalibrationMargin is the safety margin, in percent, added to the tokens
// of bytes the provider has not counted yet.
const CalibrationMargin = 10

// Calibration is what one plausible usage report taught: the request's
// occupancy in bytes and the prompt tokens the provider counted for it,
// for one model of one provider. Provider identifies the server (its base
// URL, or "" when the model names none): the same model name behind
// another server may tokenize differently, so a calibration holds only
// for the provider and model it was measured on. The zero value means
// none.
type Calibration struct {
	Provider string `json:"provider,omitempty"`
	Model    string `json:"model"`
	Bytes    int    `json:"bytes"`
	Tokens   int    `json:"tokens"`
}

// Calibrate returns the calibration a usage report gives: promptTokens
// counted for a request of occupancy bytes sent to model at provider. ok
// is false for an implausible report (no tokens, or fewer than a tenth of
// the bytes: a broken or scripted server, or an estimate) — the caller
// then falls back to Algorithm.
func Calibrate(provider, model string, bytes, promptTokens int) (Calibration, bool) {
	// At least one token, no more than one a byte (so at least one byte),
	// at least one per ten bytes.
	if promptTokens < 1 || promptTokens > bytes || promptTokens*10 < bytes {
		return Calibration{}, false
	}
	return Calibration{Provider: provider, Model: model, Bytes: bytes, Tokens: promptTokens}, true
}

// Valid reports whether c can be used for requests to model at provider.
func (c Calibration) Valid(provider, model string) bool {
	_, ok := Calibrate(c.Provider, c.Model, c.Bytes, c.Tokens)
	return ok && c.Provider == provider && c.Model == model
}

// Estimate returns the occupancy in tokens of a request of bytes to model
// at provider and the rule that produced it. With a valid calibration for
// them it is the reported tokens scaled by bytes / c.Bytes, plus
// CalibrationMargin percent of the tokens of the bytes beyond c.Bytes (the
// part the provider has not counted), rounded up; for a request no larger
// than the calibrated one that is bytes at the reported ratio. Otherwise
// it is bytes (Algorithm). Estimate costs O(1).
func (c Calibration) Estimate(provider, model string, bytes int) (int, string) {
	if !c.Valid(provider, model) {
		return bytes, Algorithm
	}
	// Bytes beyond the calibrated ones add their margin; none (extra ≤ 0)
	// add ceilDiv's 0.
	extra := bytes - c.Bytes
	return ceilDiv(bytes*c.Tokens, c.Bytes) + ceilDiv(extra*c.Tokens*CalibrationMargin, c.Bytes*100), AlgorithmReported
}

// ceilDiv is a/b rounded up, for b > 0, and 0 for a ≤ 0.
func ceilDiv(a, b int) int {
	return (max(a, 0) + b - 1) / b
}
