package broadcast_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/opx-dev/opx/engine/broadcast"
	"github.com/opx-dev/opx/ledger"
	opxv1 "github.com/opx-dev/opx/proto/opx/v1"
)

const brokenChildEnv = "OPX_ENGINE_TEST_BROKEN_LEDGER_DIR"

// TestBroadcaster_LedgerFailsUnderHeldEvent: an event waits for its entry
// to be durable; the commit fails (the file may not grow: RLIMIT_FSIZE,
// set in a child process so no other test is touched). The subscriber is
// closed and told the ledger broke, the watermark says so, and a later
// subscription is closed at once: a client never waits for ever on an
// entry that will never be durable.
func TestBroadcaster_LedgerFailsUnderHeldEvent(t *testing.T) {
	cmd := exec.Command(os.Args[0], "-test.run=^TestBroadcasterBrokenChild$", "-test.v")
	cmd.Env = append(os.Environ(), brokenChildEnv+"="+t.TempDir())
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "closed: broken") {
		t.Fatalf("child: %v\n%s", err, out)
	}
}

// TestBroadcasterBrokenChild is the child of the test above.
func TestBroadcasterBrokenChild(t *testing.T) {
	dir := os.Getenv(brokenChildEnv)
	if dir == "" {
		t.Skip("run by TestBroadcaster_LedgerFailsUnderHeldEvent")
	}
	path := filepath.Join(dir, "ledger.db")
	l, err := ledger.Create(path, ledger.Options{FlushInterval: time.Hour}) // only Sync commits
	if err != nil {
		t.Fatal(err)
	}
	b := broadcast.New(l)
	sub := b.Subscribe("s")
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	signal.Ignore(syscall.SIGXFSZ)
	if err := syscall.Setrlimit(syscall.RLIMIT_FSIZE, &syscall.Rlimit{Cur: uint64(fi.Size()) + 4096, Max: ^uint64(0)}); err != nil {
		t.Fatal(err)
	}
	app, err := l.Append(context.Background(), ledger.Async, ledger.Record{Session: "s", Type: "ledger.note",
		Data: map[string]any{"author": "t", "text": strings.Repeat("x", 200<<10)}})
	if err != nil {
		t.Fatal(err)
	}
	b.Publish(&opxv1.PipelineEvent{SessionId: "s", Type: "message", Seq: app[0].Seq})
	if err := l.Sync(context.Background()); !errors.Is(err, ledger.ErrBroken) {
		t.Fatalf("sync: %v, want the commit to fail", err)
	}
	if _, err := l.Watermark(); !errors.Is(err, ledger.ErrBroken) {
		t.Errorf("watermark after a failed commit: %v, want ErrBroken", err)
	}
	select {
	case ev, ok := <-sub.C:
		if ok {
			t.Fatalf("the subscriber was told of %v, which is not durable", ev)
		}
	case <-time.After(2 * time.Minute): // a bound on a hang, not a timing assumption
		t.Fatal("the subscriber was neither closed nor sent anything after the ledger broke")
	}
	if !b.Broken() {
		t.Error("the broadcaster does not know the ledger broke")
	}
	if _, ok := <-b.Subscribe("s").C; ok {
		t.Error("a subscription after the failure is open")
	}
	fmt.Println("closed: broken")
}
