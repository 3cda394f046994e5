package main_test

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/opx-dev/opx/ledger"
	"github.com/opx-dev/opx/ledger/event"
	"github.com/opx-dev/opx/ledger/tlog"
)

// envOpenProbe makes this test binary, started as a sandboxed command,
// open the file it names and print the errno (openProbe).
const envOpenProbe = "OPX_TEST_OPEN_PROBE"

// openProbe opens path for reading, prints "ok" or the errno's name, and
// exits.
func openProbe(path string) {
	f, err := os.Open(path)
	var errno syscall.Errno
	switch {
	case err == nil:
		f.Close()
		fmt.Println("ok")
	case errors.As(err, &errno) && errno == syscall.EACCES:
		fmt.Println("EACCES")
	default:
		fmt.Println(err)
	}
	os.Exit(0)
}

// TestE2E_CheckpointKey: the engine creates the signing key with the
// ledger (0600, in the state directory), records it, signs checkpoints at
// start and at stop and keeps the latest note in the state directory; a
// sandboxed command cannot read the key (EACCES); a lost key is replaced
// and recorded as such, and what the old key signed still verifies.
func TestE2E_CheckpointKey(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	m := w.start()
	st, _ := w.status()
	state := w.stateDir()
	keyFile, noteFile := filepath.Join(state, tlog.KeyFile), filepath.Join(state, tlog.NoteFile)
	fi, err := os.Stat(keyFile)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("key file: %v %v", fi, err)
	}

	// A command in the engine's command sandbox (as commandTools makes
	// it: the workspace, a private home) cannot open the key or the note.
	if sandboxRequired() {
		self, err := os.Executable()
		if err != nil {
			t.Fatal(err)
		}
		home := t.TempDir()
		for _, target := range []string{keyFile, noteFile, st.LedgerPath} {
			cmd := exec.Command(w.bin, "internal-sandbox-exec", "--workspace", w.ws, "--writable", home,
				"--read-only", filepath.Dir(self), "--", self)
			cmd.Env = []string{envOpenProbe + "=" + target, "PATH=/usr/bin:/bin"}
			out, err := cmd.CombinedOutput()
			if err != nil || strings.TrimSpace(string(out)) != "EACCES" {
				t.Errorf("sandboxed open of %s: %q (%v), want EACCES", target, out, err)
			}
		}
		// The probe itself works: unsandboxed it opens the key.
		cmd := exec.Command(self)
		cmd.Env = []string{envOpenProbe + "=" + keyFile}
		if out, err := cmd.CombinedOutput(); err != nil || strings.TrimSpace(string(out)) != "ok" {
			t.Errorf("unsandboxed open of the key: %q (%v)", out, err)
		}
	}
	w.stop(m)

	vkey, errOut, code := w.run("ledger", "key")
	if code != 0 {
		t.Fatalf("ledger key: %d %s", code, errOut)
	}
	s, err := tlog.LoadKey(state)
	if err != nil {
		t.Fatal(err)
	}
	if strings.TrimSpace(vkey) != s.Verifier().String() {
		t.Fatalf("ledger key %q, the key file's verifier %q", vkey, s.Verifier())
	}
	note, errOut, code := w.run("ledger", "checkpoint")
	if code != 0 {
		t.Fatalf("ledger checkpoint: %d %s", code, errOut)
	}
	if b, err := os.ReadFile(noteFile); err != nil || string(b) != note {
		t.Fatalf("the note file %q (%v), opx ledger checkpoint %q", b, err, note)
	}
	cp, err := tlog.Open([]byte(note), s.Verifier())
	if err != nil {
		t.Fatal(err)
	}
	// Signed at stop: the checkpoint covers everything before engine.stopped.
	types := w.types(st.LedgerPath)
	if cp.Size != uint64(len(types)-2) || types[len(types)-2] != ledger.TypeCheckpoint {
		t.Errorf("the last checkpoint covers %d of %d entries (%v)", cp.Size, len(types), types[len(types)-3:])
	}
	saved := filepath.Join(t.TempDir(), "saved.checkpoint")
	if err := os.WriteFile(saved, []byte(note), 0o644); err != nil {
		t.Fatal(err)
	}

	// The key is lost: the next engine makes and records a new one.
	if err := os.Remove(keyFile); err != nil {
		t.Fatal(err)
	}
	m = w.start()
	w.stop(m)
	if count(w.types(st.LedgerPath), event.TypeKey) != 2 {
		t.Fatalf("ledger.key entries: %d, want 2", count(w.types(st.LedgerPath), event.TypeKey))
	}
	l, err := ledger.OpenReadOnly(st.LedgerPath)
	if err != nil {
		t.Fatal(err)
	}
	keys, err := event.Keys(l)
	l.Close()
	if err != nil || len(keys) != 2 || keys[1].Key.Reason != event.KeyReplaced || !strings.Contains(keys[1].Key.Detail, "was missing") ||
		keys[0].Key.VKey != s.Verifier().String() || keys[1].Key.VKey == keys[0].Key.VKey {
		t.Fatalf("recorded keys: %+v %v", keys, err)
	}
	if out, errOut, code := w.run("ledger", "verify", "--strict", "--since", saved); code != 0 ||
		!strings.Contains(out, "is an append-only extension of") {
		t.Fatalf("verify --strict --since the checkpoint of the old key: %d\n%s%s", code, out, errOut)
	}
	if out, errOut, code := w.run("ledger", "key"); code != 0 || strings.TrimSpace(out) != keys[1].Key.VKey {
		t.Fatalf("ledger key after the change: %d %s %s", code, out, errOut)
	}
}
