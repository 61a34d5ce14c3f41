package main

import (
	"bytes"
	"os"
	"strings"
	"testing"
)

// testdata/run.json is `go test -json` of a small module: package a has a
// passing test, a failing subtest and a test skipped through testenv's
// HARNESS-SKIP line; b a passing test and another skip; c no tests; d does
// not build.
func TestRunReportsSkipsFailuresAndTotals(t *testing.T) {
	in, err := os.ReadFile("testdata/run.json")
	if err != nil {
		t.Fatal(err)
	}
	var out, raw bytes.Buffer
	if run(bytes.NewReader(in), &out, &raw) {
		t.Fatal("run passed, want failed: a test failed and a package did not build")
	}
	if !bytes.Equal(raw.Bytes(), in) {
		t.Error("the raw stream was not kept line for line")
	}
	log := out.String()
	lines := strings.Split(strings.TrimRight(log, "\n"), "\n")
	if got, want := lines[len(lines)-1], "2 passed, 2 failed (2 skipped, 4 packages)"; got != want {
		t.Errorf("closing line %q, want %q", got, want)
	}
	for _, want := range []string{
		"boom in sub",          // a failed test's output
		"undefined: undefined", // the build error
		"FAIL\texample.com/tr/d [build failed]",
		"FAIL\texample.com/tr/a\t",
		"ok  \texample.com/tr/b\t",
		"?   \texample.com/tr/c\t[no test files]",
		"1 tests did not run (service missing)",
		"example.com/tr/a TestSkipService: HARNESS-SKIP docker unavailable",
		"example.com/tr/b TestOtherSkip: short mode",
	} {
		if !strings.Contains(log, want) {
			t.Errorf("log lacks %q:\n%s", want, log)
		}
	}
	if strings.Contains(log, "quiet") {
		t.Error("a passing test's output reached the log")
	}
	if strings.Contains(log, "=== RUN") {
		t.Error("verbose framing lines reached the log")
	}
}

func TestRunPassesWithSkipsOnly(t *testing.T) {
	in := `{"Action":"start","Package":"p"}
{"Action":"run","Package":"p","Test":"TestA"}
{"Action":"output","Package":"p","Test":"TestA","Output":"=== RUN   TestA\n"}
{"Action":"output","Package":"p","Test":"TestA","Output":"    x_test.go:9: HARNESS-SKIP postgres unavailable: refused\n"}
{"Action":"output","Package":"p","Test":"TestA","Output":"--- SKIP: TestA (0.00s)\n"}
{"Action":"skip","Package":"p","Test":"TestA"}
{"Action":"run","Package":"p","Test":"TestB"}
{"Action":"pass","Package":"p","Test":"TestB"}
{"Action":"output","Package":"p","Output":"PASS\n"}
{"Action":"pass","Package":"p","Elapsed":0.5}
`
	var out bytes.Buffer
	if !run(strings.NewReader(in), &out, &bytes.Buffer{}) {
		t.Fatalf("run failed, want passed:\n%s", out.String())
	}
	log := out.String()
	for _, want := range []string{"p TestA: HARNESS-SKIP postgres unavailable: refused", "ok  \tp\t0.500s (1 skipped)", "1 passed, 0 failed (1 skipped, 1 packages)"} {
		if !strings.Contains(log, want) {
			t.Errorf("log lacks %q:\n%s", want, log)
		}
	}
}
