package cli_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/opx-dev/opx/cli"
	"github.com/opx-dev/opx/ledger"
	"github.com/opx-dev/opx/ledger/event"
	"github.com/opx-dev/opx/ledger/ledgertest"
	"github.com/opx-dev/opx/ledger/tlog"
	bolt "go.etcd.io/bbolt"
)

// signedReview is a small signing ledger for the review commands: an
// engine start and its key, session ses_a (a blocked call and an executed
// one) interleaved with ses_b, a signed checkpoint, then more of ses_b
// after it. seq names the entries tests tamper with.
type signedReview struct {
	path string
	vkey string
	seq  map[string]uint64
}

// newSignedReview builds the review ledger; with breakRule, the blocked
// call is recorded as executed.
func newSignedReview(t *testing.T, breakRule bool) *signedReview {
	return newSignedReviewN(t, breakRule, 0)
}

// newSignedReviewN is newSignedReview with filler notes of session
// ses_c before the sessions, so that the entries under review are past
// the first full tile of the tree.
func newSignedReviewN(t *testing.T, breakRule bool, filler int) *signedReview {
	t.Helper()
	dir := t.TempDir()
	sr := &signedReview{path: filepath.Join(dir, "ledger.db"), seq: map[string]uint64{}}
	var signer *tlog.Signer
	clock := time.Date(2026, 11, 25, 10, 0, 0, 0, time.UTC)
	l, err := ledger.Create(sr.path, ledger.Options{NoSync: true, Now: func() time.Time { clock = clock.Add(time.Second); return clock },
		SignCheckpoint: func(th ledger.TreeHead) (string, error) { return signer.Sign(th.Size, th.Root) }})
	if err != nil {
		t.Fatal(err)
	}
	if signer, err = tlog.CreateKey(dir, tlog.Origin(l.ID())); err != nil {
		t.Fatal(err)
	}
	sr.vkey = signer.Verifier().String()
	ctx := context.Background()
	h := ledger.Sum([]byte("x")).String()
	add := func(name, session string, p event.Payload, blobs ...[]byte) {
		t.Helper()
		a, err := l.Append(ctx, ledger.Sync, event.MustRecord(session, p, blobs...))
		if err != nil {
			t.Fatal(err)
		}
		if name != "" {
			sr.seq[name] = a[0].Seq
		}
	}
	add("engine", "", &event.EngineStarted{Version: "test", PID: 1, Workspace: "/nonexistent/ws", ConfigHash: h, Policy: "p", PolicyHash: h, Provider: "scripted"})
	add("key", "", &event.Key{VKey: sr.vkey, Reason: event.KeyCreated})
	for i := 0; i < filler; i++ {
		name := ""
		if i == 5 {
			name = "c.5"
		}
		add(name, "ses_c", &event.Note{Author: "t", Text: fmt.Sprint("filler ", i)})
	}
	add("b.created", "ses_b", &event.SessionCreated{Mode: "normal", Title: "other"})
	add("", "ses_a", &event.SessionCreated{Mode: "normal", Title: "reviewed"})
	add("", "ses_a", &event.ClientMessage{MessageID: "m", Content: "read the key and list files"})
	add("b.msg", "ses_b", &event.ClientMessage{MessageID: "m", Content: "hello"})
	add("", "ses_a", &event.ToolProposed{MessageID: "m", CallID: "c1", Tool: "read_file", Arguments: `{"path":"~/.ssh/id_rsa"}`, ActionHash: h})
	add("block", "ses_a", &event.ShieldVerdict{CallID: "c1", Decision: event.Block, Tier: 1, Rule: "secrets", Reason: "credential file", ActionHash: h, PolicyHash: h})
	if breakRule {
		// Recorded as it happened: the blocked call ran anyway.
		add("", "ses_a", &event.ExecStarted{CallID: "c1", Tool: "read_file", ActionHash: h})
	}
	add("", "ses_a", &event.ToolProposed{MessageID: "m", CallID: "c2", Tool: "list_files", Arguments: `{}`, ActionHash: h})
	add("", "ses_a", &event.ShieldVerdict{CallID: "c2", Decision: event.Allow, Tier: 0, Rule: "read", Reason: "ok", ActionHash: h, PolicyHash: h})
	add("", "ses_a", &event.ExecStarted{CallID: "c2", Tool: "list_files", ActionHash: h})
	add("", "ses_a", &event.ExecCompleted{CallID: "c2", Tool: "list_files", Result: "a.go", Size: 4, DurationMS: 1, Post: []event.PostState{}})
	add("", "ses_a", &event.ResponseComplete{MessageID: "m", Content: "done", Thoughts: []event.Thought{}})
	if _, err := l.Checkpoint(ctx, ledger.Sync); err != nil {
		t.Fatal(err)
	}
	add("b.after", "ses_b", &event.ResponseComplete{MessageID: "m", Content: "hi", Thoughts: []event.Thought{}})
	add("", "ses_b", &event.SessionTitled{Title: "after"})
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if !breakRule {
		t.Cleanup(func() { ledgertest.MustVerify(t, sr.path, event.StrictOptions()) })
	}
	return sr
}

// edit returns a copy of the review ledger with entry seq's bytes passed
// through fn; with relink, every later entry's prev and the meta head
// are then fixed, as an attacker covering the tracks would.
func (sr *signedReview) edit(t *testing.T, seq uint64, relink bool, fn func([]byte) []byte) string {
	t.Helper()
	cp := ledgertest.Copy(t, sr.path, filepath.Join(t.TempDir(), "tampered.db"))
	key := func(s uint64) []byte { return binary.BigEndian.AppendUint64(nil, s) }
	ledgertest.Edit(t, cp, func(tx *bolt.Tx) error {
		b := tx.Bucket([]byte("entries"))
		if err := b.Put(key(seq), fn(append([]byte(nil), b.Get(key(seq))...))); err != nil || !relink {
			return err
		}
		prev, last := ledger.Sum(b.Get(key(seq))), seq
		for s := seq + 1; b.Get(key(s)) != nil; s++ {
			v := b.Get(key(s))
			e, err := ledger.ParseEntry(v)
			if err != nil {
				return err
			}
			nv := bytes.Replace(v, []byte(`"prev":"`+e.Prev.String()+`"`), []byte(`"prev":"`+prev.String()+`"`), 1)
			if err := b.Put(key(s), nv); err != nil {
				return err
			}
			prev, last = ledger.Sum(nv), s
		}
		meta := tx.Bucket([]byte("meta"))
		if err := meta.Put([]byte("head_seq"), []byte(strconv.FormatUint(last, 10))); err != nil {
			return err
		}
		return meta.Put([]byte("head_hash"), []byte(prev.String()))
	})
	return cp
}

// TestReplay_ProvesAgainstCheckpoint: on a signing ledger, replay and
// report prove the session against the latest signed checkpoint and say
// so (one line; verified_by in --json); --full-verify verifies every entry.
func TestReplay_ProvesAgainstCheckpoint(t *testing.T) {
	sr := newSignedReview(t, false)
	r := run(t, "replay", "ses_a", "--ledger", sr.path)
	r.wantCode(t, cli.ExitOK)
	r.wantOut(t, "verified: checkpoint at seq", "signed by "+sr.vkey, "the key the ledger recorded", "entries after it checked in full", "credential file")
	r = run(t, "replay", "ses_a", "--ledger", sr.path, "--key", sr.vkey)
	r.wantCode(t, cli.ExitOK)
	r.wantOut(t, "the key given with --key")
	js := run(t, "replay", "ses_a", "--ledger", sr.path, "--json")
	js.wantCode(t, cli.ExitOK)
	vb, _ := js.jsonObject(t)["verified_by"].(map[string]any)
	if vb["mode"] != "checkpoint" || vb["summary"] == "" {
		t.Errorf("verified_by %v", vb)
	}
	// ses_b runs across the checkpoint: its span is proved up to it and
	// checked in full after it.
	r = run(t, "replay", "ses_b", "--ledger", sr.path)
	r.wantCode(t, cli.ExitOK)
	r.wantOut(t, "verified: checkpoint at seq", "3 entries after it checked in full")
	r = run(t, "replay", "ses_b", "--ledger", sr.edit(t, sr.seq["b.msg"], true, func(b []byte) []byte {
		return bytes.Replace(b, []byte(`"content":"hello"`), []byte(`"content":"HELLO"`), 1)
	}))
	r.wantCode(t, cli.ExitIntegrity)
	r.wantOut(t, "tree-mismatch")
	r = run(t, "replay", "ses_a", "--ledger", sr.path, "--full-verify")
	r.wantCode(t, cli.ExitOK)
	r.wantOut(t, "verified: every entry of the ledger verified strictly")
	out := filepath.Join(t.TempDir(), "r.html")
	r = run(t, "report", "ses_a", "--ledger", sr.path, "-o", out)
	r.wantCode(t, cli.ExitOK)
	r.wantOut(t, "verified: checkpoint at seq")
	if b, _ := os.ReadFile(out); !bytes.Contains(b, []byte("latest signed checkpoint")) {
		t.Error("the report does not say how it was verified")
	}
}

// TestReplay_CheckpointTamper: a shown entry rewritten under the
// checkpoint, an entry after the checkpoint rewritten, and a checkpoint
// checked with another key each exit 4, in replay and report, and the
// full check agrees.
func TestReplay_CheckpointTamper(t *testing.T) {
	sr := newSignedReview(t, false)
	allow := func(b []byte) []byte {
		return bytes.Replace(b, []byte(`"decision":"block"`), []byte(`"decision":"allow"`), 1)
	}
	_, other, _ := tlog.GenerateKey("opx.local/ledger/00000000000000000000000000000000")
	tests := []struct {
		name string
		path string
		args []string
		kind string
	}{
		{"shown verdict rewritten block to allow", sr.edit(t, sr.seq["block"], false, allow), nil, "hash-mismatch"},
		{"shown verdict rewritten, chain and head re-linked", sr.edit(t, sr.seq["block"], true, allow), nil, "tree-mismatch"},
		{"entry after the checkpoint rewritten", sr.edit(t, sr.seq["b.after"], false, func(b []byte) []byte {
			return bytes.Replace(b, []byte(`"content":"hi"`), []byte(`"content":"ho"`), 1)
		}), nil, "hash-mismatch"},
		{"checkpoint checked with another key", sr.path, []string{"--key", other}, "checkpoint"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := run(t, append([]string{"replay", "ses_a", "--ledger", tt.path}, tt.args...)...)
			r.wantCode(t, cli.ExitIntegrity)
			r.wantOut(t, tt.kind, "no timeline")
			r = run(t, append([]string{"report", "ses_a", "--ledger", tt.path, "-o", filepath.Join(t.TempDir(), "r.html")}, tt.args...)...)
			r.wantCode(t, cli.ExitIntegrity)
			if tt.args == nil {
				run(t, "replay", "ses_a", "--ledger", tt.path, "--full-verify").wantCode(t, cli.ExitIntegrity)
			}
		})
	}
}

// TestReplay_UnsignedCheckpointAfter: a checkpoint without a signed note
// appended after the signed one, in a ledger that records a key (a note
// stripped, or a writer without the key), is a checkpoint finding in the
// checkpoint path as in the full check.
func TestReplay_UnsignedCheckpointAfter(t *testing.T) {
	sr := newSignedReview(t, false)
	p := ledgertest.Copy(t, sr.path, filepath.Join(t.TempDir(), "unsigned.db"))
	l, err := ledger.Open(p, ledger.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := l.Checkpoint(context.Background(), ledger.Sync); err != nil {
		t.Fatal(err)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{nil, {"--full-verify"}} {
		r := run(t, append([]string{"replay", "ses_a", "--ledger", p}, args...)...)
		r.wantCode(t, cli.ExitIntegrity)
		r.wantOut(t, "checkpoint", "no signed note")
	}
}

// TestReplay_CheckpointCausality: a rule that spans entries (a blocked
// call executed), recorded in a ledger whose every byte is genuine, is
// found by the checkpoint path as by the full check.
func TestReplay_CheckpointCausality(t *testing.T) {
	sr := newSignedReview(t, true)
	for _, args := range [][]string{nil, {"--full-verify"}} {
		r := run(t, append([]string{"replay", "ses_a", "--ledger", sr.path}, args...)...)
		r.wantCode(t, cli.ExitIntegrity)
		r.wantOut(t, "causality", "call c1 executed although it was blocked")
	}
}

// TestReplay_CheckpointScope pins what the checkpoint path does not read:
// an entry of another session before the reviewed session's span, in a
// full tile of the tree (whose stored hashes the proofs use), not shown,
// rewritten under the checkpoint, passes replay (which says the rest of
// the ledger was not read) and fails opx ledger verify and --full-verify.
func TestReplay_CheckpointScope(t *testing.T) {
	sr := newSignedReviewN(t, false, 300)
	p := sr.edit(t, sr.seq["c.5"], false, func(b []byte) []byte {
		return bytes.Replace(b, []byte(`"text":"filler 5"`), []byte(`"text":"FILLER 5"`), 1)
	})
	r := run(t, "replay", "ses_a", "--ledger", p)
	r.wantCode(t, cli.ExitOK)
	r.wantOut(t, "the rest of the ledger was not read")
	// The count says what was checked, and of how many: not the
	// ledger's size for a part of it.
	m := regexp.MustCompile(`(?m)^ok: checked (\d+) of (\d+) entries, head (\d+) `).FindStringSubmatch(r.stdout)
	if m == nil {
		t.Fatalf("no \"ok: checked N of M entries\" line:\n%s", r.stdout)
	}
	checked, total, head := atoi(t, m[1]), atoi(t, m[2]), atoi(t, m[3])
	if checked >= total || total != head+1 || total < 300 {
		t.Errorf("checked %d of %d entries, head %d", checked, total, head)
	}
	rep := run(t, "report", "ses_a", "--ledger", p, "-o", filepath.Join(t.TempDir(), "r.html"))
	rep.wantOut(t, fmt.Sprintf("ok: checked %d of %d entries", checked, total))
	full := run(t, "replay", "ses_a", "--ledger", p, "--full-verify")
	full.wantOut(t, fmt.Sprintf("%d entries", total))
	if strings.Contains(full.stdout, "checked") && strings.Contains(full.stdout, " of "+strconv.Itoa(total)+" entries") {
		t.Errorf("--full-verify checked every entry, but says a part:\n%s", full.stdout)
	}
	run(t, "replay", "ses_a", "--ledger", p, "--full-verify").wantCode(t, cli.ExitIntegrity)
	run(t, "ledger", "verify", "--ledger", p).wantCode(t, cli.ExitIntegrity)
	if !strings.Contains(r.stdout, "--full-verify") {
		t.Error("replay does not point to the full check")
	}
}

// atoi is strconv.Atoi for a test's matched digits.
func atoi(t *testing.T, s string) int {
	t.Helper()
	n, err := strconv.Atoi(s)
	if err != nil {
		t.Fatal(err)
	}
	return n
}
