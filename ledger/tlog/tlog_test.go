package tlog_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"strings"
	"testing"

	"github.com/opx-dev/opx/ledger/tlog"
	"github.com/transparency-dev/formats/log"
	"golang.org/x/mod/sumdb/note"
)

const testID = "0123456789abcdef0123456789abcdef"

func newSigner(t testing.TB, origin string) *tlog.Signer {
	t.Helper()
	skey, _, err := tlog.GenerateKey(origin)
	if err != nil {
		t.Fatal(err)
	}
	s, err := tlog.NewSigner(skey)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestSign_Open: a signed checkpoint is a C2SP checkpoint that
// transparency-dev's own parser and x/mod's note verifier accept, and Open
// returns what was signed.
func TestSign_Open(t *testing.T) {
	s := newSigner(t, tlog.Origin(testID))
	root := sha256.Sum256([]byte("root"))
	text, err := s.Sign(42, root)
	if err != nil {
		t.Fatal(err)
	}
	body, _, _ := strings.Cut(text, "\n\n")
	want := "opx.local/ledger/" + testID + "\n42\n" + (tlog.Checkpoint{Root: root}).RootString()
	if body != want {
		t.Fatalf("body %q, want %q", body, want)
	}
	nv, err := note.NewVerifier(s.Verifier().String())
	if err != nil {
		t.Fatal(err)
	}
	cp, _, _, err := log.ParseCheckpoint([]byte(text), tlog.Origin(testID), nv)
	if err != nil || cp.Size != 42 || !bytes.Equal(cp.Hash, root[:]) {
		t.Fatalf("ParseCheckpoint: %+v, %v", cp, err)
	}
	got, err := tlog.Open([]byte(text), s.Verifier())
	if err != nil {
		t.Fatal(err)
	}
	if got.Size != 42 || got.Root != root || got.Origin != tlog.Origin(testID) {
		t.Fatalf("Open: %+v", got)
	}
	if !strings.HasPrefix(s.Verifier().String(), tlog.Origin(testID)+"+") {
		t.Errorf("verifier key %q is not named by the origin", s.Verifier())
	}
}

// TestOpen_Refusals: a checkpoint not signed by the key, or not a
// checkpoint at all, is refused with the right sentinel.
func TestOpen_Refusals(t *testing.T) {
	origin := tlog.Origin(testID)
	s := newSigner(t, origin)
	other := newSigner(t, origin) // same name, another key
	root := sha256.Sum256([]byte("root"))
	good, err := s.Sign(7, root)
	if err != nil {
		t.Fatal(err)
	}
	byOther, _ := other.Sign(7, root)
	body, sig, _ := strings.Cut(good, "\n\n")
	// One byte of the signature changed (after the 4-byte key hash).
	dash, b64, _ := strings.Cut(strings.TrimSuffix(sig, "\n"), " "+origin+" ")
	raw, err := base64.StdEncoding.DecodeString(b64)
	if err != nil {
		t.Fatal(err)
	}
	raw[10] ^= 1
	flippedSig := body + "\n\n" + dash + " " + origin + " " + base64.StdEncoding.EncodeToString(raw) + "\n"
	changedBody := strings.Replace(good, "\n7\n", "\n8\n", 1)
	signerOtherOrigin := newSigner(t, tlog.Origin("ffffffffffffffffffffffffffffffff"))
	otherOrigin, _ := signerOtherOrigin.Sign(7, root)
	empty, _ := s.Sign(0, root)
	tests := []struct {
		name string
		text string
		want error
	}{
		{"signed by another key of the same name", byOther, tlog.ErrUnsigned},
		{"signature byte changed", flippedSig, tlog.ErrUnsigned},
		{"size changed after signing", changedBody, tlog.ErrUnsigned},
		{"another ledger's checkpoint", otherOrigin, tlog.ErrUnsigned},
		{"tree size 0", empty, tlog.ErrMalformed},
		{"signature lines removed", body + "\n\n", tlog.ErrMalformed},
		{"empty", "", tlog.ErrMalformed},
		{"garbage", "\x00\xff not a note", tlog.ErrMalformed},
		{"too large", good + strings.Repeat("x", tlog.MaxNoteBytes), tlog.ErrMalformed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cp, err := tlog.Open([]byte(tt.text), s.Verifier())
			if !errors.Is(err, tt.want) {
				t.Fatalf("Open = %+v, %v; want %v", cp, err, tt.want)
			}
		})
	}
	if _, err := tlog.Open([]byte(empty), s.Verifier()); err == nil || !strings.Contains(err.Error(), "tree size 0") {
		t.Errorf("Open of a checkpoint of size 0: %v, want it to say tree size 0", err)
	}
	// Signed by the key, but not a checkpoint body.
	skey, _, err := tlog.GenerateKey(origin)
	if err != nil {
		t.Fatal(err)
	}
	ns, err := note.NewSigner(skey)
	if err != nil {
		t.Fatal(err)
	}
	ts, _ := tlog.NewSigner(skey)
	for _, text := range []string{"hello\n", "hello\n1\nAAAA\n", origin + "\n1\nAAAA\n"} {
		signed, err := note.Sign(&note.Note{Text: text}, ns)
		if err != nil {
			t.Fatal(err)
		}
		if cp, err := tlog.Open(signed, ts.Verifier()); !errors.Is(err, tlog.ErrMalformed) {
			t.Errorf("signed body %q: Open = %+v, %v; want ErrMalformed", text, cp, err)
		}
	}
}

// TestParseVerifierKey_Refusals: key strings that are not verifier keys
// are ErrMalformed, never a panic.
func TestParseVerifierKey_Refusals(t *testing.T) {
	s := newSigner(t, tlog.Origin(testID))
	if v, err := tlog.ParseVerifierKey(" " + s.Verifier().String() + "\n"); err != nil || v.Name() != tlog.Origin(testID) {
		t.Fatalf("ParseVerifierKey with white space: %v, %v", v, err)
	}
	for _, k := range []string{"", "+", "a+b+c", tlog.Origin(testID) + "+00000000+AQ==", strings.Repeat("k", 2000),
		"PRIVATE+KEY+x+12345678+AQ=="} {
		if _, err := tlog.ParseVerifierKey(k); !errors.Is(err, tlog.ErrMalformed) {
			t.Errorf("ParseVerifierKey(%.40q) = %v, want ErrMalformed", k, err)
		}
	}
}
