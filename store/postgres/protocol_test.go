package postgres

import (
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// pgx owns the store's connections and their protocol (DESIGN §15): the
// package's code imports none of what writing or reading the wire
// protocol takes (pgx's message codec, byte-order encoding, the network).
func TestNoWireProtocolCode(t *testing.T) {
	forbidden := map[string]bool{
		"github.com/jackc/pgx/v5/pgproto3": true,
		"encoding/binary":                  true,
	}
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(token.NewFileSet(), name, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		checked++
		for _, imp := range f.Imports {
			path, err := strconv.Unquote(imp.Path.Value)
			if err != nil {
				t.Fatal(err)
			}
			if forbidden[path] {
				t.Errorf("%s imports %s: the wire protocol is pgx's to speak", name, path)
			}
		}
	}
	if checked == 0 {
		t.Fatal("no source file of the package found")
	}
}
