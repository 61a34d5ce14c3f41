package errcode_test

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/harness-dev/harness/internal/errcode"
)

var update = flag.Bool("update", false, "rewrite golden files")

func TestCodesGolden(t *testing.T) {
	var b strings.Builder
	for _, c := range errcode.All {
		fmt.Fprintln(&b, c)
	}
	path := filepath.Join("testdata", "codes.golden")
	if *update {
		if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if got := b.String(); got != string(want) {
		t.Errorf("code list changed; review and run with -update\ngot:\n%s\nwant:\n%s", got, want)
	}
}

func TestCodesFormatAndUnique(t *testing.T) {
	re := regexp.MustCompile(`^[A-Z][A-Z0-9]*(_[A-Z0-9]+)*$`)
	seen := map[errcode.Code]bool{}
	for _, c := range errcode.All {
		if !re.MatchString(string(c)) {
			t.Errorf("code %q is not UPPER_SNAKE", c)
		}
		if seen[c] {
			t.Errorf("code %q listed twice", c)
		}
		seen[c] = true
	}
	// Every exported constant must be in All: the source lists each with a
	// doc line, and All must not drift from it.
	src, err := os.ReadFile("codes.go")
	if err != nil {
		t.Fatal(err)
	}
	decl := regexp.MustCompile(`^\t(\w+) Code = "([A-Z0-9_]+)"$`)
	lines := strings.Split(string(src), "\n")
	n := 0
	for i, line := range lines {
		m := decl.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		n++
		// The comment block above the declaration starts with "// Name:".
		j := i - 1
		for j > 0 && strings.HasPrefix(lines[j-1], "\t// ") {
			j--
		}
		if j < 0 || !strings.HasPrefix(lines[j], "\t// "+m[1]+": ") {
			t.Errorf("code %s has no doc line starting with its name", m[1])
		}
		if !seen[errcode.Code(m[2])] {
			t.Errorf("code %s is declared but missing from All", m[2])
		}
	}
	if n != len(errcode.All) {
		t.Errorf("codes.go declares %d codes, All has %d", n, len(errcode.All))
	}
}

func TestOfAndUnwrap(t *testing.T) {
	base := errors.New("disk full")
	err := fmt.Errorf("append event 3: %w", errcode.Wrap(errcode.SessInvalidRecord, "append", base))
	if got := errcode.Of(err); got != errcode.SessInvalidRecord {
		t.Errorf("Of = %s", got)
	}
	if !errors.Is(err, base) {
		t.Error("cause lost")
	}
	if !errors.Is(err, errcode.New(errcode.SessInvalidRecord, "")) {
		t.Error("errors.Is by code failed")
	}
	if errors.Is(err, errcode.New(errcode.SessBusy, "")) {
		t.Error("errors.Is matched another code")
	}
	if got := errcode.Of(errors.New("x")); got != errcode.Internal {
		t.Errorf("uncoded = %s", got)
	}
	if got := errcode.Of(nil); got != "" {
		t.Errorf("nil = %q", got)
	}
	if errcode.Wrap(errcode.SessBusy, "x", nil) != nil {
		t.Error("Wrap(nil) != nil")
	}
	e := errcode.Errorf(errcode.SessBusy, "held by %s: %w", "pid 7", base)
	if !errors.Is(e, base) || errcode.Message(e) != "held by pid 7: disk full" {
		t.Errorf("Errorf = %v", e)
	}
	// A wrapped error's message says what failed and why, never only its
	// code.
	_, perr := os.Open(filepath.Join(t.TempDir(), "missing.json"))
	w := errcode.Wrap(errcode.ModelInvalidConfig, "read the --fake-model script", perr)
	if m := errcode.Message(w); !strings.Contains(m, "read the --fake-model script") || !strings.Contains(m, "missing.json") {
		t.Errorf("Wrap message = %q", m)
	}
	if m := errcode.Message(errcode.Wrap(errcode.SessNotFound, "open the export", w)); !strings.Contains(m, "missing.json") {
		t.Errorf("Wrap of a coded error: message = %q", m)
	}
	if errcode.Message(errors.New("secret=abc")) != "internal error" {
		t.Error("uncoded message leaked")
	}
}
