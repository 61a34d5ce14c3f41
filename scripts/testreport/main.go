// Command testreport reads the output of `go test -json` on its standard
// input and writes a readable live log of it: one line per package as it
// finishes (as plain `go test` prints them), the whole output of every test
// that failed, and one line per skipped test. At the end it lists every
// test that skipped, with its reason (loudly the HARNESS-SKIP ones, whose
// service was missing), and closes with the totals:
//
//	1234 passed, 0 failed (3 skipped, 41 packages)
//
// It exits 1 when a test or a package failed (a build error included), 0
// otherwise. Lines that are not test2json events (the go command's own
// messages) are copied through.
//
// Usage: go test -json ./... 2>&1 | go run ./scripts/testreport [-log FILE] [-json FILE]
//
// -log also writes the readable log to FILE; -json keeps the raw event
// stream in FILE for anyone who needs every line of every test.
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"time"
)

// event is one line of `go test -json` (cmd/test2json).
type event struct {
	Time    time.Time
	Action  string
	Package string
	Test    string
	Elapsed float64
	Output  string
	// ImportPath names the package of a build-output or build-fail event.
	ImportPath string
	// FailedBuild is set on the fail event of a package that did not build.
	FailedBuild string
}

// skip is one skipped test and what it said about why.
type skip struct {
	pkg, test, reason string
	harness           bool // skipped through internal/testenv: a service was missing
}

// report folds the event stream. Output is kept per test until the test
// ends: shown when it failed, dropped when it passed.
type report struct {
	out      io.Writer
	output   map[key][]string // output of a test (or package, Test "") still running
	build    map[string][]string
	passed   int
	failed   int
	skips    []skip
	packages int
	pkgFail  []string
	pkgSkips map[string]int
}

type key struct{ pkg, test string }

func newReport(out io.Writer) *report {
	return &report{out: out, output: map[key][]string{}, build: map[string][]string{}, pkgSkips: map[string]int{}}
}

// line handles one input line.
func (r *report) line(s string) {
	var e event
	if !strings.HasPrefix(s, "{") || json.Unmarshal([]byte(s), &e) != nil || e.Action == "" {
		fmt.Fprintln(r.out, s)
		return
	}
	r.event(e)
}

func (r *report) event(e event) {
	k := key{e.Package, e.Test}
	switch e.Action {
	case "build-output":
		r.build[e.ImportPath] = append(r.build[e.ImportPath], e.Output)
	case "build-fail":
		fmt.Fprint(r.out, strings.Join(r.build[e.ImportPath], ""))
		delete(r.build, e.ImportPath)
	case "output":
		r.output[k] = append(r.output[k], e.Output)
	case "pass", "fail", "skip":
		if e.Test == "" {
			r.endPackage(e)
			return
		}
		r.endTest(e)
	}
}

func (r *report) endTest(e event) {
	k := key{e.Package, e.Test}
	lines := r.output[k]
	delete(r.output, k)
	switch e.Action {
	case "pass":
		r.passed++
	case "fail":
		r.failed++
		// A parent fails with its subtests; their output was shown already.
		fmt.Fprint(r.out, strings.Join(testLines(lines), ""))
	case "skip":
		reason := skipReason(lines)
		r.skips = append(r.skips, skip{pkg: e.Package, test: e.Test, reason: reason,
			harness: strings.Contains(reason, "HARNESS-SKIP")})
		r.pkgSkips[e.Package]++
		fmt.Fprintf(r.out, "--- SKIP: %s %s: %s\n", e.Package, e.Test, reason)
	}
}

func (r *report) endPackage(e event) {
	k := key{e.Package, ""}
	lines := r.output[k]
	delete(r.output, k)
	r.packages++
	switch e.Action {
	case "fail":
		r.pkgFail = append(r.pkgFail, e.Package)
		// A package that failed outside any finished test (a panic, a
		// timeout, TestMain): show what its unfinished tests printed.
		var unfinished []key
		for tk := range r.output {
			if tk.pkg == e.Package {
				unfinished = append(unfinished, tk)
			}
		}
		sort.Slice(unfinished, func(i, j int) bool { return unfinished[i].test < unfinished[j].test })
		for _, tk := range unfinished {
			fmt.Fprint(r.out, strings.Join(r.output[tk], ""))
			delete(r.output, tk)
		}
		if e.FailedBuild != "" {
			fmt.Fprintf(r.out, "FAIL\t%s [build failed]\n", e.Package)
			return
		}
		fmt.Fprint(r.out, strings.Join(packageLines(lines), ""))
		fmt.Fprintf(r.out, "FAIL\t%s\t%.3fs\n", e.Package, e.Elapsed)
	case "skip":
		fmt.Fprintf(r.out, "?   \t%s\t[no test files]\n", e.Package)
	default:
		note := ""
		if n := r.pkgSkips[e.Package]; n > 0 {
			note = fmt.Sprintf(" (%d skipped)", n)
		}
		fmt.Fprintf(r.out, "ok  \t%s\t%.3fs%s\n", e.Package, e.Elapsed, note)
	}
}

// testLines drops the framing lines test2json adds in verbose mode
// (=== RUN, === PAUSE, === CONT, === NAME) that plain go test never shows.
func testLines(lines []string) []string {
	var out []string
	for _, l := range lines {
		if strings.HasPrefix(l, "=== ") {
			continue
		}
		out = append(out, l)
	}
	return out
}

// packageLines drops the package's closing lines (PASS, FAIL, ok …),
// which the report prints in its own form.
func packageLines(lines []string) []string {
	var out []string
	for _, l := range lines {
		t := strings.TrimSpace(l)
		if t == "PASS" || t == "FAIL" || strings.HasPrefix(l, "ok  \t") || strings.HasPrefix(l, "FAIL\t") {
			continue
		}
		out = append(out, l)
	}
	return out
}

// skipReason is what a skipped test printed, on one line, without the
// file:line prefix of t.Skip and the --- SKIP line itself.
func skipReason(lines []string) string {
	var parts []string
	for _, l := range testLines(lines) {
		t := strings.TrimSpace(l)
		if t == "" || strings.HasPrefix(t, "--- SKIP") {
			continue
		}
		if i := strings.Index(t, ": "); i > 0 && strings.Contains(t[:i], ".go:") {
			t = t[i+2:]
		}
		parts = append(parts, t)
	}
	if len(parts) == 0 {
		return "(no reason given)"
	}
	return strings.Join(parts, " ")
}

// finish writes the skip list and the totals; it reports whether the run
// passed.
func (r *report) finish() bool {
	// Output of tests that never ended belongs to a run that was cut short.
	for k, lines := range r.output {
		if k.test != "" || len(lines) > 0 {
			fmt.Fprint(r.out, strings.Join(lines, ""))
		}
	}
	var missing, other []skip
	for _, s := range r.skips {
		if s.harness {
			missing = append(missing, s)
		} else {
			other = append(other, s)
		}
	}
	if len(missing) > 0 {
		fmt.Fprintf(r.out, "\n\033[1;33m==== SKIPPED: %d tests did not run (service missing) ====\033[0m\n", len(missing))
		for _, s := range missing {
			fmt.Fprintf(r.out, "%s %s: %s\n", s.pkg, s.test, s.reason)
		}
		fmt.Fprintf(r.out, "\033[1;33m==== set HARNESS_REQUIRE_DOCKER=1 / HARNESS_REQUIRE_POSTGRES=1 to fail instead ====\033[0m\n")
	}
	if len(other) > 0 {
		fmt.Fprintf(r.out, "\n\033[1;33m==== SKIPPED: %d tests skipped for another reason ====\033[0m\n", len(other))
		for _, s := range other {
			fmt.Fprintf(r.out, "%s %s: %s\n", s.pkg, s.test, s.reason)
		}
	}
	if len(r.pkgFail) > 0 {
		fmt.Fprintf(r.out, "\nFAILED packages: %s\n", strings.Join(r.pkgFail, " "))
	}
	fmt.Fprintf(r.out, "\n%d passed, %d failed (%d skipped, %d packages)\n", r.passed, r.failed, len(r.skips), r.packages)
	return r.failed == 0 && len(r.pkgFail) == 0
}

func main() { os.Exit(realMain()) }

func realMain() int {
	logPath := flag.String("log", "", "also write the readable log to `FILE`")
	jsonPath := flag.String("json", "", "keep the raw go test -json stream in `FILE`")
	flag.Parse()
	var (
		out   io.Writer = os.Stdout
		raw   io.Writer = io.Discard
		files []*os.File
	)
	for _, o := range []struct {
		path string
		w    *io.Writer
	}{{*logPath, &out}, {*jsonPath, &raw}} {
		if o.path == "" {
			continue
		}
		f, err := os.Create(o.path)
		if err != nil {
			fmt.Fprintln(os.Stderr, "testreport:", err)
			return 2
		}
		files = append(files, f)
		if o.w == &out {
			out = io.MultiWriter(os.Stdout, f)
		} else {
			raw = bufio.NewWriter(f)
		}
	}
	code := 0
	if !run(os.Stdin, out, raw) {
		code = 1
	}
	if bw, ok := raw.(*bufio.Writer); ok {
		if err := bw.Flush(); err != nil {
			fmt.Fprintln(os.Stderr, "testreport: write", *jsonPath+":", err)
		}
	}
	for _, f := range files {
		if err := f.Close(); err != nil {
			fmt.Fprintln(os.Stderr, "testreport:", err)
		}
	}
	return code
}

// run reads the event stream from in, writes the log to out and each raw
// line to raw, and reports whether the run passed.
func run(in io.Reader, out, raw io.Writer) bool {
	r := newReport(out)
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 64<<10), 64<<20)
	for sc.Scan() {
		fmt.Fprintln(raw, sc.Text())
		r.line(sc.Text())
	}
	if err := sc.Err(); err != nil {
		fmt.Fprintln(out, "testreport: reading the test output:", err)
		r.finish()
		return false
	}
	return r.finish()
}
