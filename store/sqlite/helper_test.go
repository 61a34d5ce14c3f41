package sqlite

import (
	"context"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/harness-dev/harness/internal/errcode"
	"github.com/harness-dev/harness/store"
	"github.com/harness-dev/harness/store/storetest"
)

// The crash and two-writer tests re-execute this test binary as a child
// process; these variables tell it what to do instead of running tests.
const (
	helperEnv   = "HARNESS_STORE_HELPER" // "crash" or "writer"
	helperDB    = "HARNESS_STORE_HELPER_DB"
	helperSess  = "HARNESS_STORE_HELPER_SESSION"
	helperName  = "HARNESS_STORE_HELPER_NAME"
	helperCount = "HARNESS_STORE_HELPER_COUNT"
	helperTake  = "HARNESS_STORE_HELPER_TAKEOVER"
)

func TestMain(m *testing.M) {
	switch os.Getenv(helperEnv) {
	case "":
		os.Exit(m.Run())
	case "crash":
		os.Exit(crashChild())
	case "writer":
		os.Exit(writerChild())
	default:
		fmt.Fprintln(os.Stderr, "unknown helper mode")
		os.Exit(2)
	}
}

// crashBody is the body of the crash child's event id; the parent
// recomputes it to check bytes. Sizes vary so that some events overflow a
// page. Every tenth event is a turn.completed worth one token.
func crashEvent(id string, n int) store.EventIn {
	if n%10 == 9 {
		return storetest.Event(id, "turn.completed", `{"status":"completed","usage":{"totalTokens":1}}`)
	}
	return storetest.Event(id, "test.note", fmt.Sprintf(`{"n":%d,"pad":%q}`, n, strings.Repeat("p", (n*389)%6000)))
}

func crashPayload(rev, after int64) []byte {
	return []byte(fmt.Sprintf("cp-%d-%d-%s", rev, after, strings.Repeat("c", int(rev*977%20000))))
}

// crashChild appends to a session until it is killed, printing each
// acknowledged event ("ack SEQ ID") and checkpoint ("cp REV AFTER").
func crashChild() int {
	ctx := context.Background()
	name := os.Getenv(helperName)
	s, err := Open(os.Getenv(helperDB), Options{})
	if err != nil {
		fmt.Printf("error %s\n", errcode.Of(err))
		return 1
	}
	sess := os.Getenv(helperSess)
	who, err := s.Acquire(ctx, sess, store.Owner{ID: name, PID: os.Getpid()}, store.AcquireOptions{})
	if err != nil {
		fmt.Printf("error %s\n", errcode.Of(err))
		return 1
	}
	info, err := s.Session(ctx, sess)
	if err != nil {
		fmt.Printf("error %s\n", errcode.Of(err))
		return 1
	}
	rev := int64(0)
	if cp, err := s.LoadCheckpoint(ctx, sess); err == nil {
		rev = cp.Revision
	}
	fmt.Printf("ready %d\n", who.Epoch)
	last := info.LastSeq
	for i := 0; ; i++ {
		switch {
		case i%7 == 6:
			cp, err := s.SaveCheckpoint(ctx, sess, who, rev, last, crashPayload(rev+1, last))
			if err != nil {
				fmt.Printf("error %s\n", errcode.Of(err))
				return 1
			}
			rev = cp.Revision
			fmt.Printf("cp %d %d\n", cp.Revision, cp.AfterSeq)
		case i%5 == 4:
			evs := make([]store.EventIn, 3)
			for j := range evs {
				evs[j] = crashEvent(fmt.Sprintf("evt-%s-%d-%d", name, i, j), i+j)
			}
			recs, err := s.AppendBatch(ctx, sess, who, evs)
			if err != nil {
				fmt.Printf("error %s\n", errcode.Of(err))
				return 1
			}
			for _, r := range recs {
				fmt.Printf("ack %d %s\n", r.Seq, r.ID)
				last = r.Seq
			}
		default:
			r, err := s.Append(ctx, sess, who, crashEvent(fmt.Sprintf("evt-%s-%d", name, i), i))
			if err != nil {
				fmt.Printf("error %s\n", errcode.Of(err))
				return 1
			}
			fmt.Printf("ack %d %s\n", r.Seq, r.ID)
			last = r.Seq
		}
	}
}

// writerChild acquires a session (taking it over when asked) and appends
// up to COUNT events, printing "acquired EPOCH", each "ack SEQ ID", then
// "done" (and waits for its stdin to close before releasing), "busy" when
// Acquire is refused, or "lost" when it is fenced out.
func writerChild() int {
	ctx := context.Background()
	name := os.Getenv(helperName)
	count, _ := strconv.Atoi(os.Getenv(helperCount))
	s, err := Open(os.Getenv(helperDB), Options{})
	if err != nil {
		fmt.Printf("error %s\n", errcode.Of(err))
		return 1
	}
	defer s.Close()
	sess := os.Getenv(helperSess)
	who, err := s.Acquire(ctx, sess, store.Owner{ID: name, PID: os.Getpid()}, store.AcquireOptions{TakeOver: os.Getenv(helperTake) == "1"})
	switch errcode.Of(err) {
	case "":
	case errcode.SessBusy:
		fmt.Println("busy")
		return 0
	default:
		fmt.Printf("error %s\n", errcode.Of(err))
		return 1
	}
	fmt.Printf("acquired %d\n", who.Epoch)
	for i := range count {
		id := fmt.Sprintf("evt-%s-%d", name, i)
		r, err := s.Append(ctx, sess, who, storetest.Note(id, i))
		switch errcode.Of(err) {
		case "":
			fmt.Printf("ack %d %s\n", r.Seq, r.ID)
		case errcode.SessOwnershipLost:
			fmt.Println("lost")
			return 0
		default:
			fmt.Printf("error %s\n", errcode.Of(err))
			return 1
		}
	}
	fmt.Println("done")
	_, _ = io.Copy(io.Discard, os.Stdin)
	if err := s.Release(ctx, sess, who); err != nil {
		fmt.Printf("error %s\n", errcode.Of(err))
		return 1
	}
	return 0
}
