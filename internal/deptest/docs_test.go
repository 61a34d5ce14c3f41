package deptest

import (
	"bufio"
	"bytes"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// root is the repository's top level, from this package's folder.
const root = "../.."

func readDoc(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// The README's folder map is kept true (STYLE §20): one line for each
// top-level folder and each folder under internal/, and no line for a
// folder that is not there.
func TestReadmeFolderMap(t *testing.T) {
	readme := readDoc(t, "README.md")
	_, after, ok := strings.Cut(readme, "## Layout\n\n```\n")
	block, _, closed := strings.Cut(after, "```")
	if !ok || !closed {
		t.Fatal("README.md has no Layout section with a fenced folder map")
	}
	mapped := map[string]bool{}
	for _, line := range strings.Split(strings.TrimSpace(block), "\n") {
		folder, _, _ := strings.Cut(line, " ")
		if !strings.HasSuffix(folder, "/") {
			t.Errorf("folder map line %q does not start with a folder/", line)
			continue
		}
		mapped[strings.TrimSuffix(folder, "/")] = true
		if st, err := os.Stat(filepath.Join(root, folder)); err != nil || !st.IsDir() {
			t.Errorf("the folder map names %s, which is not a folder", folder)
		}
	}
	var want []string
	for _, dir := range []string{".", "internal"} {
		entries, err := os.ReadDir(filepath.Join(root, dir))
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			name := e.Name()
			if !e.IsDir() || strings.HasPrefix(name, ".") || (dir == "." && (name == "internal" || name == "bin")) {
				continue
			}
			want = append(want, filepath.ToSlash(filepath.Join(dir, name)))
		}
	}
	for _, f := range want {
		// cmd/ holds one command: the map names it, cmd/harness/.
		if !mapped[f] && !(f == "cmd" && mapped["cmd/harness"]) {
			t.Errorf("%s/ is missing from the README's folder map", f)
		}
	}
}

// Every flag `harness --help` lists is documented in
// docs/configuration.md, spelled --flag.
func TestFlagsAreDocumented(t *testing.T) {
	out, err := exec.Command("go", "run", mod+"cmd/harness", "--help").CombinedOutput()
	if err != nil {
		t.Fatalf("harness --help: %v\n%s", err, out)
	}
	doc := readDoc(t, "docs/configuration.md")
	n := 0
	flagLine := regexp.MustCompile(`^  --([a-z][a-z0-9-]*)`)
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		m := flagLine.FindStringSubmatch(sc.Text())
		if m == nil {
			continue
		}
		n++
		if !regexp.MustCompile("`--" + m[1] + "[ `]").MatchString(doc) {
			t.Errorf("--%s is not documented in docs/configuration.md", m[1])
		}
	}
	if n == 0 {
		t.Fatalf("harness --help lists no flags:\n%s", out)
	}
}

// Every benchmark of the tree is named in BENCHMARKS.md, as a row's
// command or among those without a figure.
func TestBenchmarksAreListed(t *testing.T) {
	doc := readDoc(t, "BENCHMARKS.md")
	bench := regexp.MustCompile(`(?m)^func (Benchmark\w+)\(`)
	var names []string
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && path != root && strings.HasPrefix(d.Name(), ".") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, "_test.go") {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, m := range bench.FindAllSubmatch(src, -1) {
			names = append(names, string(m[1]))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(names) == 0 {
		t.Fatal("no benchmarks found")
	}
	slices.Sort(names)
	for _, name := range slices.Compact(names) {
		if !regexp.MustCompile(`\b` + name + `\b`).MatchString(doc) {
			t.Errorf("%s is not in BENCHMARKS.md", name)
		}
	}
}
