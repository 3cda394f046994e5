package main_test

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/opx-dev/opx/ledger"
	"github.com/opx-dev/opx/ledger/event"
)

// crashes verifies the ledger strictly and returns its engine.crashed
// entries.
func (w *world) crashes(path string) []*event.EngineCrashed {
	w.t.Helper()
	types := w.types(path) // verifies strictly
	l, err := ledger.OpenReadOnly(path)
	if err != nil {
		w.t.Fatal(err)
	}
	defer l.Close()
	var out []*event.EngineCrashed
	l.Range(0, uint64(len(types)-1), func(e ledger.Entry) error {
		if e.Type == event.TypeEngineCrashed {
			p, err := event.Decode(e)
			if err != nil {
				w.t.Fatal(err)
			}
			out = append(out, p.(*event.EngineCrashed))
		}
		return nil
	})
	return out
}

// session sends a message and returns its session's id.
func (w *world) session() string {
	w.t.Helper()
	out, errOut, code := w.run("send", "read README.md")
	id := regexp.MustCompile(`ses_[0-9a-f]{16}`).FindString(out + errOut)
	if code != 0 || id == "" {
		w.t.Fatalf("opx send: %d, no session id\n%s%s", code, out, errOut)
	}
	return id
}

// TestProcess_EngineKilledFromOutside: an engine SIGKILLed by another
// process is restarted by its manager, and the next engine's
// engine.crashed says which process died, of SIGKILL, sent by someone
// who is not opx; replay's timeline and the manager's log say so too.
func TestProcess_EngineKilledFromOutside(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	m := w.start()
	session := w.session()
	st, _ := w.status()
	w.kill(st.EnginePID)
	w.waitAgent(m, st.AgentPID)
	w.stop(m)

	c := w.crashes(st.LedgerPath)
	if len(c) != 1 {
		t.Fatalf("%d engine.crashed, want 1", len(c))
	}
	if c[0].PID != st.EnginePID || c[0].Signal != "SIGKILL" || c[0].Sender != event.CrashSenderUnknown || c[0].Reason != "" {
		t.Errorf("engine.crashed %+v", c[0])
	}
	if log := m.out.String(); !strings.Contains(log, "killed by SIGKILL; not sent by this manager") || strings.Contains(log, "sending SIGKILL") {
		t.Errorf("manager log:\n%s", log)
	}
	out, errOut, code := w.run("replay", session)
	if code != 0 || !strings.Contains(out, "was killed by SIGKILL, not sent by opx (sender unknown)") {
		t.Errorf("replay: %d\n%s%s", code, out, errOut)
	}
}

// TestProcess_EngineKilledByManager: an engine that does not stop on
// SIGTERM (here: stopped with SIGSTOP) is SIGKILLed by its manager after
// the grace; the manager logs each signal before it sends it, and the
// next engine's engine.crashed says the manager killed it and why.
func TestProcess_EngineKilledByManager(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	m := w.start()
	session := w.session()
	st, _ := w.status()
	engine := pin(t, st.EnginePID)
	t.Cleanup(func() { engine.signal(syscall.SIGKILL) }) // should the manager not
	if !w.signal(st.EnginePID, syscall.SIGSTOP) {
		t.Fatal("the engine is gone")
	}
	m.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-m.done:
	case <-time.After(60 * time.Second): // a bound on a hang; the grace is 5 s
		t.Fatalf("the manager did not end:\n%s", m.out.String())
	}
	log := m.out.String()
	term, kill := strings.Index(log, "sending SIGTERM to the engine"), strings.Index(log, "sending SIGKILL to the engine")
	if term < 0 || kill < term || !strings.Contains(log, "did not exit within") {
		t.Errorf("manager log:\n%s", log)
	}
	m = w.start()
	w.stop(m)

	c := w.crashes(st.LedgerPath)
	if len(c) != 1 {
		t.Fatalf("%d engine.crashed, want 1", len(c))
	}
	if c[0].PID != st.EnginePID || c[0].Signal != "SIGKILL" || c[0].Sender != event.CrashSenderManager ||
		!strings.Contains(c[0].Reason, "did not exit within 5s of SIGTERM") {
		t.Errorf("engine.crashed %+v", c[0])
	}
	out, errOut, code := w.run("replay", session)
	if code != 0 || !strings.Contains(out, "was killed by SIGKILL, sent by its manager: stopping: it did not exit within 5s of SIGTERM") {
		t.Errorf("replay: %d\n%s%s", code, out, errOut)
	}
}

// TestProcess_EngineKilledWithOTRApprovalPending: the reviewer's case.
// An off-the-record session waits for a human's approval when its engine
// is SIGKILLed; the next engine comes up (its start-up protocol within
// the manager's start timeout, so the manager never kills it), denies the
// orphaned approval, and records the crash as SIGKILL from a sender that
// is not opx.
func TestProcess_EngineKilledWithOTRApprovalPending(t *testing.T) {
	t.Parallel()
	for _, restart := range []bool{false, true} {
		t.Run(fmt.Sprintf("restart=%v", restart), func(t *testing.T) { otrApprovalPendingEnd(t, restart) })
	}
}

// otrApprovalPendingEnd ends the engine while an off-the-record approval
// is pending: with SIGKILL, or (restart) with opx restart.
func otrApprovalPendingEnd(t *testing.T, restart bool) {
	w := newWorld(t)
	os.MkdirAll(filepath.Join(w.ws, ".opx"), 0o755)
	os.WriteFile(filepath.Join(w.ws, ".opx", "config.yaml"), []byte("policy: .opx/policy.yaml\n"), 0o644)
	os.WriteFile(filepath.Join(w.ws, ".opx", "policy.yaml"),
		[]byte("version: 1\ndefault: allow\nverify:\n  - {name: human-reads, tools: [read_file], paths: [\"README.md\"], tier: 3}\n"), 0o644)
	m := w.start()
	st, _ := w.status()
	sent := make(chan string, 1)
	go func() {
		out, errOut, code := w.run("send", "--otr", "read README.md")
		sent <- fmt.Sprintf("exit %d\n%s%s", code, out, errOut)
	}()
	waitFor(t, "an approval pending", func() bool {
		out, _, code := w.run("approve", "--json")
		return code == 0 && strings.Contains(out, "approval_id")
	})
	if restart {
		if out, errOut, code := w.run("restart"); code != 0 {
			t.Fatalf("opx restart: %d %s%s", code, out, errOut)
		}
	} else {
		w.kill(st.EnginePID)
	}
	<-sent
	w.waitAgent(m, st.AgentPID)
	if log := m.out.String(); strings.Contains(log, "sending SIGKILL") {
		t.Errorf("the manager killed an engine:\n%s", log)
	}
	w.stop(m)
	c := w.crashes(st.LedgerPath)
	switch {
	case restart && len(c) != 0:
		t.Errorf("engine.crashed after a restart: %+v", c[0])
	case !restart && (len(c) != 1 || c[0].Signal != "SIGKILL" || c[0].Sender != event.CrashSenderUnknown):
		t.Errorf("engine.crashed %+v", c)
	}
}
