package dockerws

import (
	"archive/tar"
	"bytes"
	"fmt"
	goruntime "runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/harness-dev/harness/internal/errcode"
)

// heapWatch samples the heap while a call runs: the growth of the bytes in
// use at their highest, and of all bytes allocated.
type heapWatch struct {
	before goruntime.MemStats
	peak   uint64
	stop   chan struct{}
	done   sync.WaitGroup
}

func watchHeap() *heapWatch {
	h := &heapWatch{stop: make(chan struct{})}
	goruntime.GC()
	goruntime.ReadMemStats(&h.before)
	h.peak = h.before.HeapInuse
	h.done.Add(1)
	go func() {
		defer h.done.Done()
		var m goruntime.MemStats
		tick := time.NewTicker(time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-h.stop:
				return
			case <-tick.C:
			}
			goruntime.ReadMemStats(&m)
			h.peak = max(h.peak, m.HeapInuse)
		}
	}()
	return h
}

// end returns the peak growth of HeapInuse and the bytes allocated since
// watchHeap.
func (h *heapWatch) end() (peak, alloc uint64) {
	close(h.stop)
	h.done.Wait()
	var m goruntime.MemStats
	goruntime.ReadMemStats(&m)
	h.peak = max(h.peak, m.HeapInuse)
	return h.peak - min(h.peak, h.before.HeapInuse), m.TotalAlloc - h.before.TotalAlloc
}

// TestDiffMemoryBounded fills the workspace with far more text than the
// diff may hold (300 files of 2 MiB against a cap of 16 MiB): the diff
// fails with WORKSPACE_LIMIT without copying the files out, so the host's
// heap grows by a small part of the cap; a tree that passes the cap only
// with the files already held fails the same way; and once the files are
// gone the diff works again.
func TestDiffMemoryBounded(t *testing.T) {
	root := t.TempDir()
	writeTree(t, root, map[string]string{"keep.txt": "keep\n"})
	before := treeDigest(t, root)
	const maxTotal = 8 << 20
	const capBytes = 2 * maxTotal
	w := open(t, root, busyboxImage, func(o *Options) { o.MaxTotalBytes = maxTotal })
	// files n writes n text files of MaxFileBytes (2 MiB) under dir.
	files := func(dir string, n int) {
		t.Helper()
		script := fmt.Sprintf(`mkdir -p %[1]s && yes 'a line of generated text' | head -c %[2]d > %[1]s/0.txt && i=1
while [ $i -lt %[3]d ]; do cp %[1]s/0.txt %[1]s/$i.txt || exit 1; i=$((i+1)); done`, dir, DefaultMaxFileBytes, n)
		if res := mustExec(t, w, "sh", "-c", script); res.ExitCode != 0 {
			t.Fatalf("writing %d files: %+v", n, res)
		}
	}
	works := func(want string) {
		t.Helper()
		patch, err := w.Diff(t.Context())
		if err != nil {
			t.Fatalf("Diff: %v", err)
		}
		if !strings.Contains(patch, want) {
			t.Fatalf("patch lacks %q:\n%.2000s", want, patch)
		}
	}

	files("big", 300)
	h := watchHeap()
	_, err := w.Diff(t.Context())
	peak, alloc := h.end()
	t.Logf("300 files of 2 MiB, cap %d: heap in use grew by %d at its peak, %d bytes allocated", capBytes, peak, alloc)
	wantCode(t, err, errcode.WorkspaceLimit)
	if peak >= 3*capBytes || alloc >= 3*capBytes {
		t.Errorf("the diff's heap grew by %d at its peak and allocated %d bytes, want both under 3× the cap (%d)", peak, alloc, 3*capBytes)
	}

	mustExec(t, w, "sh", "-c", "rm -rf big && echo more >> keep.txt")
	works("+more")

	// Under the cap, then over it with the text already held: the sizes in
	// the listing fail the diff before the new files are read.
	files("mid", 6)
	works("b/mid/5.txt")
	files("mid2", 3)
	h = watchHeap()
	_, err = w.Diff(t.Context())
	peak, alloc = h.end()
	t.Logf("12 MiB held and 6 MiB more, cap %d: heap in use grew by %d at its peak, %d bytes allocated", capBytes, peak, alloc)
	wantCode(t, err, errcode.WorkspaceLimit)
	if peak >= 3*capBytes || alloc >= 3*capBytes {
		t.Errorf("the diff's heap grew by %d at its peak and allocated %d bytes, want both under 3× the cap (%d)", peak, alloc, 3*capBytes)
	}

	mustExec(t, w, "sh", "-c", "rm -rf mid2 && echo again >> keep.txt")
	works("+again")
	if got := treeDigest(t, root); got != before {
		t.Error("the host tree changed")
	}
}

// TestReadTarStopsAtRoom checks that contents copied out are counted as
// they arrive: a tree that grew after its listing fails with
// WORKSPACE_LIMIT once the text passes the room left, not after reading
// it all.
func TestReadTarStopsAtRoom(t *testing.T) {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for i := range 5 {
		body := strings.Repeat("x", 1000) + "\n"
		if err := tw.WriteHeader(&tar.Header{Name: fmt.Sprintf("./f%d.txt", i), Mode: 0o644, Size: int64(len(body)), Typeflag: tar.TypeReg}); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write([]byte(body)); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	all := func(string) bool { return true }
	got, n, err := readTar(bytes.NewReader(buf.Bytes()), 2000, 5005, all)
	if err != nil || len(got) != 5 || n != 5005 {
		t.Fatalf("room for all: %d files, %d bytes, err %v; want 5, 5005, nil", len(got), n, err)
	}
	_, n, err = readTar(bytes.NewReader(buf.Bytes()), 2000, 2500, all)
	wantCode(t, err, errcode.WorkspaceLimit)
	if n != 3003 {
		t.Errorf("read %d bytes before failing, want 3003 (it stops at the file that passes the room)", n)
	}
}
