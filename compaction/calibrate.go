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
	// AlgorithmRatio divides the bytes Algorithm counts by
	// RatioBytesPerToken: the calibrated default before a usage report for
	// the provider models it was measured on (OpenAI-compatible servers),
	// where Algorithm would count about four times the real tokens.
	AlgorithmRatio = "bytes-per-token/v1"
)

// RatioBytesPerToken is AlgorithmRatio's bytes per token, in hundredths:
// 3.6. Measured on requests that read each of this repository's files
// (system prompt, tools, a user message, an fs.read call and its result,
// as Meter counts them) against o200k_base and cl100k_base tokens of the
// same requests rendered as a chat: median 4.0 bytes per token, 5th
// percentile 3.5, 95th 4.5. 3.6 is the median less a 10 % margin, so the
// estimate of a typical request is about 11 % above its real tokens and
// that of the densest 5 % at most a few percent below (README, "Context
// estimate"; scripts/tokencount reproduces the table).
const RatioBytesPerToken = 360

// RatioTokens is AlgorithmRatio's estimate of a request of bytes, rounded
// up. It costs O(1).
func RatioTokens(bytes int) int {
	return ceilDiv(bytes*100, RatioBytesPerToken)
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
	// (bytes < 0 and promptTokens < 0 are equivalent mutants: a zero
	// either way fails promptTokens > bytes or promptTokens*10 < bytes.)
	if bytes <= 0 || promptTokens <= 0 || promptTokens*10 < bytes || promptTokens > bytes {
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
	scaled := ceilDiv(bytes*c.Tokens, c.Bytes)
	// (extra >= 0 is equivalent: no extra bytes add ceilDiv(0, …) = 0.)
	if extra := bytes - c.Bytes; extra > 0 {
		scaled += ceilDiv(extra*c.Tokens*CalibrationMargin, c.Bytes*100)
	}
	return scaled, AlgorithmReported
}

// ceilDiv is a/b rounded up, for b > 0 (a < 0 for the condition is an
// equivalent mutant: ceilDiv(0, b) is 0 both ways).
func ceilDiv(a, b int) int {
	if a <= 0 {
		return 0
	}
	return (a + b - 1) / b
}
