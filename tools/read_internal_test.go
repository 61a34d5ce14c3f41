package tools

import (
	"bytes"
	"os"
	"testing"

	"github.com/harness-dev/harness/internal/model"
)

// fs.read's own encoding is exactly model.MarshalCanonical of readOutput.
func checkReadResult(t *testing.T, p string, data []byte) {
	t.Helper()
	want, err := model.MarshalCanonical(readOutput{Path: p, Content: string(data), Size: len(data)})
	if err != nil {
		t.Fatal(err)
	}
	if got := (readResult{path: p, data: data}).appendCanonical(nil); !bytes.Equal(got, want) {
		t.Fatalf("appendCanonical = %s\nMarshalCanonical = %s", got, want)
	}
}

func TestReadResultIsCanonical(t *testing.T) {
	src, err := os.ReadFile("read.go")
	if err != nil {
		t.Fatal(err)
	}
	checkReadResult(t, "tools/read.go", src)
	checkReadResult(t, `dir/"quoted" é.txt`, []byte("<b>&</b>\u2028\t\x01"))
	checkReadResult(t, "empty", nil)
}

func FuzzReadResult(f *testing.F) {
	f.Add("a.go", []byte("package a\n\n\"x\"\t\\"))
	f.Fuzz(checkReadResult)
}
