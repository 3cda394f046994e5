package collector_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	tdnote "github.com/transparency-dev/formats/note"

	"github.com/opx-dev/opx/fleet/collector"
)

// The cosigner key is made once, 0600, and read again as the same key; a
// key file others may read is refused, not used.
func TestWitness_KeyFile(t *testing.T) {
	dir := t.TempDir()
	w, err := collector.LoadWitness(dir, "witness.example/fleet")
	if err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(filepath.Join(dir, collector.WitnessKeyFile))
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("key file: %v %v", fi, err)
	}
	if _, err := tdnote.NewVerifierForCosignatureV1(w.VKey); err != nil || !strings.HasPrefix(w.VKey, "witness.example/fleet+") {
		t.Fatalf("verifier key %q: %v", w.VKey, err)
	}
	again, err := collector.LoadWitness(dir, "other")
	if err != nil || again.VKey != w.VKey {
		t.Fatalf("reloaded %q (%v), want %q", again.VKey, err, w.VKey)
	}
	if err := os.Chmod(filepath.Join(dir, collector.WitnessKeyFile), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := collector.LoadWitness(dir, ""); err == nil || !strings.Contains(err.Error(), "others may read it") {
		t.Fatalf("a readable key: %v", err)
	}
	junk := t.TempDir()
	if err := os.WriteFile(filepath.Join(junk, collector.WitnessKeyFile), []byte("PRIVATE+KEY+junk"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := collector.LoadWitness(junk, ""); err == nil {
		t.Fatal("a junk key was taken")
	}
	if _, err := collector.LoadWitness(t.TempDir(), "bad name with spaces"); err == nil {
		t.Fatal("a bad witness name was taken")
	}
}
