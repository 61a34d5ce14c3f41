package app

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"unicode/utf8"

	"github.com/harness-dev/harness/internal/errcode"
)

// InstructionFiles are the names of project instruction files, in order of
// preference: in one directory, AGENTS.md wins and CLAUDE.md is read only
// when there is no AGENTS.md.
var InstructionFiles = []string{"AGENTS.md", "CLAUDE.md"}

// MaxInstructionBytes bounds one instruction file.
const MaxInstructionBytes = 64 << 10

// Instructions is what a project tells the agent: the files read, relative
// to the project root, and the text to append to the system prompt.
type Instructions struct {
	Files []string
	Text  string
}

// ProjectRoot is the project a working directory belongs to: the nearest
// directory at or above it that holds .git, else the directory itself.
func ProjectRoot(workDir string) string {
	for d := workDir; ; d = filepath.Dir(d) {
		if _, err := os.Lstat(filepath.Join(d, ".git")); err == nil {
			return d
		}
		if filepath.Dir(d) == d {
			return workDir
		}
	}
}

// ReadInstructions reads the project's instruction file at root and the
// nearest one above workDir inside the project (workDir itself included;
// root's is not read twice). A missing file is no error; one that cannot be
// read, is over MaxInstructionBytes or is not UTF-8 text is
// RUNTIME_INVALID_INPUT naming the file, so a session never starts with
// half its instructions.
func ReadInstructions(root, workDir string) (Instructions, error) {
	var dirs []string
	dirs = append(dirs, root)
	if rel, err := filepath.Rel(root, workDir); err == nil && rel != "." && !strings.HasPrefix(rel, "..") {
		for d := workDir; d != root && strings.HasPrefix(d, root); d = filepath.Dir(d) {
			if name, _ := instructionIn(d); name != "" {
				dirs = append(dirs, d)
				break
			}
		}
	}
	var in Instructions
	var parts []string
	for _, d := range dirs {
		name, err := instructionIn(d)
		if err != nil {
			return Instructions{}, err
		}
		if name == "" {
			continue
		}
		path := filepath.Join(d, name)
		text, err := readInstructionFile(path)
		if err != nil {
			return Instructions{}, err
		}
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		in.Files = append(in.Files, rel)
		parts = append(parts, "Project instructions from "+rel+" (written by the developer for agents working in this project):\n\n"+strings.TrimSpace(text))
	}
	in.Text = strings.Join(parts, "\n\n")
	return in, nil
}

// instructionIn returns the name of the instruction file in dir, "" when
// there is none.
func instructionIn(dir string) (string, error) {
	for _, name := range InstructionFiles {
		fi, err := os.Stat(filepath.Join(dir, name))
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return "", errcode.Wrap(errcode.RuntimeInvalidInput, "read project instructions "+filepath.Join(dir, name), err)
		}
		if fi.Mode().IsRegular() {
			return name, nil
		}
	}
	return "", nil
}

func readInstructionFile(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", errcode.Wrap(errcode.RuntimeInvalidInput, "read project instructions "+path, err)
	}
	defer func() { _ = f.Close() }() // only read: a failed close loses nothing
	b, err := io.ReadAll(io.LimitReader(f, MaxInstructionBytes+1))
	if err != nil {
		return "", errcode.Wrap(errcode.RuntimeInvalidInput, "read project instructions "+path, err)
	}
	if len(b) > MaxInstructionBytes {
		return "", errcode.Errorf(errcode.RuntimeInvalidInput, "read project instructions %s: larger than %d KiB; shorten it or pass --no-project-instructions", path, MaxInstructionBytes>>10)
	}
	if !utf8.Valid(b) || strings.ContainsRune(string(b), 0) {
		return "", errcode.Errorf(errcode.RuntimeInvalidInput, "read project instructions %s: not UTF-8 text; fix it or pass --no-project-instructions", path)
	}
	return string(b), nil
}
