package engine_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/opx-dev/opx/engine"
	"github.com/opx-dev/opx/engine/grpcapi"
	"github.com/opx-dev/opx/engine/llm"
	"github.com/opx-dev/opx/fixtures"
	"github.com/opx-dev/opx/ledger"
	"github.com/opx-dev/opx/ledger/event"
	"github.com/opx-dev/opx/ledger/ledgertest"
)

// TestNew_CrashSaysHowItEnded: the engine.crashed a new engine records
// carries how the dead run's process ended (its pid, signal, sender and
// reason) when the end note names that run's pid, and leaves it out when
// the note is about another process.
func TestNew_CrashSaysHowItEnded(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ledger.db")
	l, err := ledger.Create(path, ledger.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ws := t.TempDir()
	tr, err := llm.ParseTranscript(fixtures.DefaultTranscript)
	if err != nil {
		t.Fatal(err)
	}
	start := func(end *engine.ProcessEnd) {
		t.Helper()
		// New records engine.started and is never run: the next New
		// finds a run without engine.stopped, as after a crash.
		if _, err := engine.New(engine.Options{Services: grpcapi.Register, Workspace: ws, Ledger: l, Provider: llm.NewScripted(tr), ClientToken: clientToken,
			Version: "test", Policy: "read-only", Logf: t.Logf, PreviousEnd: end}); err != nil {
			t.Fatal(err)
		}
	}
	start(nil)
	start(&engine.ProcessEnd{PID: os.Getpid(), ExitCode: -1, Signal: "SIGKILL", Sender: event.CrashSenderManager, Reason: "its start-up protocol failed"})
	start(&engine.ProcessEnd{PID: os.Getpid() + 1, ExitCode: -1, Signal: "SIGKILL", Sender: event.CrashSenderUnknown})
	start(&engine.ProcessEnd{PID: os.Getpid(), ExitCode: -1, Signal: "SIGKILL", Sender: event.CrashSenderUnknown, Reason: "a reason no unknown sender gave"})
	if err := l.Sync(t.Context()); err != nil {
		t.Fatal(err)
	}
	h, _ := l.Head()
	var crashes []*event.EngineCrashed
	l.Range(0, h.Seq, func(e ledger.Entry) error {
		if e.Type == event.TypeEngineCrashed {
			p, err := event.Decode(e)
			if err != nil {
				t.Fatal(err)
			}
			crashes = append(crashes, p.(*event.EngineCrashed))
		}
		return nil
	})
	if len(crashes) != 3 {
		t.Fatalf("%d engine.crashed, want 3", len(crashes))
	}
	if c := crashes[0]; c.PID != os.Getpid() || c.Signal != "SIGKILL" || c.Sender != event.CrashSenderManager ||
		c.Reason != "its start-up protocol failed" || !strings.Contains(c.Detail, "sent by its manager") {
		t.Errorf("a crash the manager caused: %+v", c)
	}
	if c := crashes[1]; c.PID != 0 || c.Signal != "" || c.Sender != "" {
		t.Errorf("a note about another pid was used: %+v", c)
	}
	if c := crashes[2]; c.PID != os.Getpid() || c.Sender != event.CrashSenderUnknown || c.Reason != "" {
		t.Errorf("an unknown sender's crash: %+v", c)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	ledgertest.MustVerify(t, path, event.StrictOptions())
}
