package ledger_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/opx-dev/opx/ledger"
	"github.com/opx-dev/opx/ledger/tlog"
)

// signedLedger is a ledger that signs its checkpoints, as the engine
// makes one: a ledger.key entry with the verifier key, then entries, with
// signed ledger.checkpoint entries among them.
type signedLedger struct {
	l      *ledger.Ledger
	path   string
	signer *tlog.Signer
	vkey   string
}

// newSignedLedger creates a ledger in a temporary directory with a
// signing key, n notes of session "s" between notes of session "o", a
// signed checkpoint after every 7 entries, and one at the end.
func newSignedLedger(t testing.TB, n int) *signedLedger {
	t.Helper()
	dir := t.TempDir()
	sl := &signedLedger{path: filepath.Join(dir, "ledger.db")}
	var err error
	opts := ledger.Options{NoSync: true, SignCheckpoint: func(th ledger.TreeHead) (string, error) {
		return sl.signer.Sign(th.Size, th.Root)
	}}
	if sl.l, err = ledger.Create(sl.path, opts); err != nil {
		t.Fatal(err)
	}
	if sl.signer, err = tlog.CreateKey(dir, tlog.Origin(sl.l.ID())); err != nil {
		t.Fatal(err)
	}
	sl.vkey = sl.signer.Verifier().String()
	ctx := context.Background()
	if _, err := sl.l.Append(ctx, ledger.Sync, ledger.Record{Type: "ledger.key", Data: map[string]any{"vkey": sl.vkey, "reason": "created"}}); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < n; i++ {
		r := note(i)
		if i%3 == 2 {
			r.Session = "o"
		}
		if _, err := sl.l.Append(ctx, ledger.Sync, r); err != nil {
			t.Fatal(err)
		}
		if i%7 == 6 {
			if _, err := sl.l.Checkpoint(ctx, ledger.Sync); err != nil {
				t.Fatal(err)
			}
		}
	}
	if _, err := sl.l.Checkpoint(ctx, ledger.Sync); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sl.l.Close() })
	return sl
}

func (sl *signedLedger) export(t testing.TB, opts ledger.ExportOptions) (string, *ledger.Manifest) {
	t.Helper()
	p := filepath.Join(t.TempDir(), "x.jsonl.zst")
	m, err := sl.l.ExportFile(p, opts)
	if err != nil {
		t.Fatal(err)
	}
	return p, m
}

// rewriteManifest changes an export's manifest in place.
func rewriteManifest(t *testing.T, export string, mut func(m map[string]any)) {
	t.Helper()
	p := filepath.Join(ledger.BundlePath(export), ledger.ManifestName)
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	mut(m)
	b, _ = json.Marshal(m)
	if err := os.WriteFile(p, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

func copyExport(t *testing.T, export string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), filepath.Base(export))
	b, err := os.ReadFile(export)
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(p, b, 0o600)
	copyDir(t, ledger.BundlePath(export), ledger.BundlePath(p))
	return p
}

// TestExport_CarriesCheckpointProofs checks that full and session exports
// of a signing ledger carry its latest signed checkpoint, the recorded
// key, the range hashes and the inclusion proofs, that they verify with
// the bundled key and with the key pinned, and not with another key.
func TestExport_CarriesCheckpointProofs(t *testing.T) {
	sl := newSignedLedger(t, 20)
	_, otherKey, _ := tlog.GenerateKey(tlog.Origin(sl.l.ID()))
	for _, session := range []string{"", "s", "o"} {
		p, m := sl.export(t, ledger.ExportOptions{Session: session})
		if m.Checkpoint == "" || m.VerifierKey != sl.vkey || len(m.Proofs) == 0 {
			t.Fatalf("session %q: manifest without proof material: %+v", session, m)
		}
		if session != "" && (m.FromSeq == 0 || m.TreeRange == "") {
			t.Fatalf("session %q: segment from %d with tree range %q", session, m.FromSeq, m.TreeRange)
		}
		for _, key := range []string{"", sl.vkey} {
			rep, _, err := ledger.VerifyExport(p, ledger.VerifyOptions{CheckpointKey: key})
			if err != nil || !rep.OK || rep.Proved == nil || rep.Proved.KeyPinned != (key != "") || len(rep.Proved.Entries) == 0 {
				t.Fatalf("session %q key %q: %v %+v %+v", session, key, err, rep, rep.Proved)
			}
			if rep.Proved.Entries[0] != m.FromSeq {
				t.Errorf("session %q: proved %v, want the first entry %d first", session, rep.Proved.Entries, m.FromSeq)
			}
		}
		rep, _, err := ledger.VerifyExport(p, ledger.VerifyOptions{CheckpointKey: otherKey})
		if err != nil || rep.OK || rep.Kinds()[0] != ledger.KindCheckpoint {
			t.Errorf("session %q: verified with another key: %v %+v", session, err, rep)
		}
	}
}

// TestExport_HostileProofMaterial tampers with every new field of a
// segment's manifest, and swaps in another ledger's checkpoint and
// proofs: each is a failure of its kind (exit 4 in the CLI), never a
// crash, and the stream itself still verifies.
func TestExport_HostileProofMaterial(t *testing.T) {
	sl := newSignedLedger(t, 20)
	other := newSignedLedger(t, 20)
	seg, m := sl.export(t, ledger.ExportOptions{Session: "s"})
	_, om := other.export(t, ledger.ExportOptions{Session: "s"})
	junk := strings.Repeat("A", 100<<10)
	hashes := func(n int) []any {
		var out []any
		for i := 0; i < n; i++ {
			out = append(out, "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=")
		}
		return out
	}
	proofs := func(mm map[string]any) []any { return mm["proofs"].([]any) }
	first := func(mm map[string]any) map[string]any { return proofs(mm)[0].(map[string]any) }
	tests := []struct {
		name string
		mut  func(mm map[string]any)
		key  string
		want ledger.Kind
	}{
		{"checkpoint and key of another ledger", func(mm map[string]any) { mm["checkpoint"], mm["verifier_key"] = om.Checkpoint, om.VerifierKey }, "", ledger.KindCheckpoint},
		{"checkpoint of another ledger, key pinned", func(mm map[string]any) { mm["checkpoint"] = om.Checkpoint }, sl.vkey, ledger.KindCheckpoint},
		{"proofs of another ledger", func(mm map[string]any) {
			for i, p := range proofs(mm) {
				p.(map[string]any)["hashes"] = om.Proofs[min(i, len(om.Proofs)-1)].Hashes
			}
		}, "", ledger.KindTreeMismatch},
		{"a proof claiming a bigger tree", func(mm map[string]any) { first(mm)["tree_size"] = float64(m.Proofs[0].TreeSize + 1) }, "", ledger.KindCheckpoint},
		{"the note claiming a bigger tree", func(mm map[string]any) {
			mm["checkpoint"] = strings.Replace(m.Checkpoint, "\n"+itoa(m.Proofs[0].TreeSize)+"\n", "\n"+itoa(m.Proofs[0].TreeSize+1000)+"\n", 1)
		}, "", ledger.KindCheckpoint},
		{"one proof hash changed", func(mm map[string]any) {
			hs := first(mm)["hashes"].([]any)
			hs[0] = "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA="
		}, "", ledger.KindTreeMismatch},
		{"first entry's proof dropped", func(mm map[string]any) { mm["proofs"] = proofs(mm)[1:] }, "", ledger.KindCheckpoint},
		{"proof of an entry outside the export", func(mm map[string]any) { first(mm)["index"] = float64(m.ToSeq + 1) }, "", ledger.KindCheckpoint},
		{"checkpoint junk", func(mm map[string]any) { mm["checkpoint"] = "junk\n" }, "", ledger.KindCheckpoint},
		{"checkpoint of 100 KiB", func(mm map[string]any) { mm["checkpoint"] = junk }, "", ledger.KindCheckpoint},
		{"verifier key junk", func(mm map[string]any) { mm["verifier_key"] = "junk" }, "", ledger.KindCheckpoint},
		{"verifier key of 100 KiB", func(mm map[string]any) { mm["verifier_key"] = junk }, "", ledger.KindCheckpoint},
		{"proof hashes too many", func(mm map[string]any) { first(mm)["hashes"] = hashes(65) }, "", ledger.KindCheckpoint},
		{"proof hashes not base64", func(mm map[string]any) { first(mm)["hashes"] = []any{"!!"} }, "", ledger.KindCheckpoint},
		{"three proofs", func(mm map[string]any) { mm["proofs"] = append(proofs(mm), proofs(mm)[0]) }, "", ledger.KindCheckpoint},
		{"proof material stripped, key pinned", func(mm map[string]any) {
			delete(mm, "checkpoint")
			delete(mm, "verifier_key")
			delete(mm, "proofs")
		}, sl.vkey, ledger.KindCheckpoint},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := copyExport(t, seg)
			rewriteManifest(t, p, tt.mut)
			rep, _, err := ledger.VerifyExport(p, ledger.VerifyOptions{CheckpointKey: tt.key})
			if err != nil {
				t.Fatalf("verify: %v", err)
			}
			if rep.OK || !hasKind(rep, tt.want) {
				t.Errorf("report %+v, want a %s failure", rep.Failures, tt.want)
			}
			for _, f := range rep.Failures {
				if f.Kind != ledger.KindCheckpoint && f.Kind != ledger.KindTreeMismatch {
					t.Errorf("the stream itself was reported: %v", f)
				}
			}
		})
	}
	// A tree range of the wrong tree: the roots recorded in the segment
	// do not match it.
	p := copyExport(t, seg)
	rewriteManifest(t, p, func(mm map[string]any) { mm["tree_range"] = om.TreeRange })
	if rep, _, err := ledger.VerifyExport(p, ledger.VerifyOptions{}); err != nil || rep.OK || !hasKind(rep, ledger.KindTreeMismatch) {
		t.Errorf("tree range of another ledger: %v %+v", err, rep)
	}
	// Stripped without a pinned key: an export like an older one.
	p = copyExport(t, seg)
	rewriteManifest(t, p, tests[len(tests)-1].mut)
	if rep, _, err := ledger.VerifyExport(p, ledger.VerifyOptions{}); err != nil || !rep.OK || rep.Proved != nil {
		t.Errorf("stripped export without --key: %v %+v", err, rep)
	}
}

func hasKind(r *ledger.Report, k ledger.Kind) bool {
	for _, f := range r.Failures {
		if f.Kind == k {
			return true
		}
	}
	return false
}

func itoa(n uint64) string { b, _ := json.Marshal(n); return string(b) }

// plainSource hides a ledger's own source's tiles: ExportSource then
// computes the proof material from the entries, as through an engine.
type plainSource struct{ ledger.Source }

// TestExportSource_ProofsFromEntries checks that an export through a
// Source that is not the file (an engine's) carries the same tree range,
// checkpoint, key and proofs, byte for byte, computed from the entries,
// and that a source whose entries do not hash to the signed root is
// refused.
func TestExportSource_ProofsFromEntries(t *testing.T) {
	sl := newSignedLedger(t, 40)
	h, err := sl.l.Head()
	if err != nil {
		t.Fatal(err)
	}
	for _, session := range []string{"", "s", "o"} {
		a, b := filepath.Join(t.TempDir(), "x.jsonl"), filepath.Join(t.TempDir(), "x.jsonl")
		m1, err := sl.l.ExportFile(a, ledger.ExportOptions{Session: session})
		if err != nil {
			t.Fatal(err)
		}
		m2, err := ledger.ExportSourceFile(plainSource{sl.l.LocalSource(h)}, b, ledger.ExportOptions{Session: session})
		if err != nil {
			t.Fatal(err)
		}
		j1, _ := json.Marshal(m1)
		j2, _ := json.Marshal(m2)
		if string(j1) != string(j2) || len(m2.Proofs) == 0 {
			t.Errorf("session %q: manifests differ:\n%s\n%s", session, j1, j2)
		}
	}
	// An engine that hands over an entry other than the one signed,
	// before the segment (so the segment's chain does not see it): the
	// entries do not hash to the signed root.
	liar := lyingSource{plainSource{sl.l.LocalSource(h)}, 2}
	_, err = ledger.ExportSourceFile(liar, filepath.Join(t.TempDir(), "y.jsonl"), ledger.ExportOptions{Session: "o"})
	if !errors.Is(err, ledger.ErrIntegrity) || !strings.Contains(err.Error(), "the entries hash to") {
		t.Errorf("export from a lying source: %v", err)
	}
}

// lyingSource changes entry seq's bytes in Entries.
type lyingSource struct {
	ledger.Source
	seq uint64
}

func (s lyingSource) Entries(from, to uint64, fn func(uint64, []byte) error) error {
	return s.Source.Entries(from, to, func(seq uint64, raw []byte) error {
		if seq == s.seq {
			raw = []byte(strings.Replace(string(raw), `"text":"n`, `"text":"N`, 1))
		}
		return fn(seq, raw)
	})
}

// FuzzManifestProofs: whatever a manifest's proof material holds, the
// stream verifier never panics, and it passes a segment only when the
// checkpoint in the manifest opens with the bundled key and the proofs
// cover the segment's first entry.
func FuzzManifestProofs(f *testing.F) {
	sl := newSignedLedger(f, 12)
	p, m := sl.export(f, ledger.ExportOptions{Session: "s"})
	stream := func() []byte {
		var b []byte
		for _, l := range readLines(f, p) {
			b = append(append(b, l...), '\n')
		}
		return b
	}()
	good, _ := json.Marshal(m)
	f.Add(good)
	for _, r := range [][2]string{{`"tree_size":`, `"tree_size":1`}, {`"index":`, `"index":1`}, {`"hashes":["`, `"hashes":["A`}, {`\n\n`, `\n`}, {`"verifier_key":"opx`, `"verifier_key":"x`}} {
		f.Add(bytes.Replace(good, []byte(r[0]), []byte(r[1]), 1))
	}
	f.Fuzz(func(t *testing.T, mj []byte) {
		var fm ledger.Manifest
		if json.Unmarshal(mj, &fm) != nil {
			return
		}
		fm.Format, fm.FromSeq, fm.ToSeq, fm.Entries, fm.Prev, fm.LastHash = m.Format, m.FromSeq, m.ToSeq, m.Entries, m.Prev, m.LastHash
		rep, err := ledger.VerifyStream(bytes.NewReader(stream), &fm, nil, ledger.VerifyOptions{Workers: 2})
		if err != nil {
			return // a manifest field that does not parse (tree_range): a clear error
		}
		if !rep.OK || fm.Checkpoint == "" {
			return
		}
		v, err := tlog.ParseVerifierKey(fm.VerifierKey)
		if err != nil {
			t.Fatalf("passed with verifier key %q: %v", fm.VerifierKey, err)
		}
		if _, err := tlog.Open([]byte(fm.Checkpoint), v); err != nil {
			t.Fatalf("passed with a checkpoint that does not open: %v", err)
		}
		if rep.Proved == nil || len(rep.Proved.Entries) == 0 || rep.Proved.Entries[0] != fm.FromSeq {
			t.Fatalf("passed without proving the first entry: %+v", rep.Proved)
		}
	})
}
