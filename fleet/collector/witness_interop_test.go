package collector_test

import (
	"crypto/sha256"
	"encoding/base64"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/opx-dev/opx/fleet/witnesshttp"
)

// witnessClient finds .ci/tools' witnessclient (transparency-dev's
// witness HTTP client; .ci/run builds it into .ci/bin): a failure under
// CI=true when missing, a skip otherwise.
func witnessClient(t *testing.T) string {
	t.Helper()
	if p, err := exec.LookPath("witnessclient"); err == nil {
		return p
	}
	p, err := filepath.Abs(filepath.Join("..", "..", ".ci", "bin", "witnessclient"))
	if err == nil {
		if _, err = os.Stat(p); err == nil {
			return p
		}
	}
	if os.Getenv("CI") == "true" {
		t.Fatalf("witnessclient is not installed (.ci/run builds it into .ci/bin): %v", err)
	}
	t.Skip("witnessclient is not installed; .ci/run builds it (cd .ci/tools && go build -o ../bin/witnessclient ./cmd/witnessclient)")
	return ""
}

// TestWitness_Interop_TransparencyDevClient: the collector as a witness,
// driven by transparency-dev's own witness client
// (github.com/transparency-dev/witness/client/http): what it cosigns
// verifies with transparency-dev/formats' cosignature/v1 verifier, and
// what it refuses, the client reads as the protocol's refusals.
func TestWitness_Interop_TransparencyDevClient(t *testing.T) {
	bin := witnessClient(t)
	lg := newTestLog(t, "example.com/interop")
	other := newTestLog(t, "example.com/unknown")
	impostor := newTestLog(t, "example.com/interop")
	w := startWitness(t, t.TempDir(), witnesshttp.Options{Rate: 1000, Burst: 1000}, lg)
	run := func(old uint64, proof [][32]byte, cp []byte) string {
		t.Helper()
		return runWitnessClient(t, bin, w.url, w.key, old, proof, cp)
	}
	lg.grow(t, 6)
	if got := run(0, nil, lg.checkpoint(t, 6)); !strings.HasPrefix(got, "cosigned ") {
		t.Fatalf("first checkpoint: %s", got)
	}
	lg.grow(t, 9) // 15
	other.grow(t, 2)
	impostor.grow(t, 15)
	badProof := lg.proof(t, 6, 15)
	badProof[0][0] ^= 1
	fork, err := lg.signer.Sign(15, sha256.Sum256([]byte("another root")))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		old   uint64
		proof [][32]byte
		cp    []byte
		want  string
	}{
		{"wrong old size: 409 with the latest", 0, nil, lg.checkpoint(t, 15), "refused stale size 6"},
		{"bad proof: 422", 6, badProof, lg.checkpoint(t, 15), "refused invalid-proof"},
		{"unknown origin: 404", 0, nil, other.checkpoint(t, 2), "refused unknown-log"},
		{"bad signature: 403", 6, impostor.proof(t, 6, 15), impostor.checkpoint(t, 15), "refused no-valid-signature"},
		{"old size over the checkpoint's: 400", 16, nil, lg.checkpoint(t, 15), "refused old-size-invalid"},
		{"consistent: cosigned", 6, lg.proof(t, 6, 15), lg.checkpoint(t, 15), "cosigned "},
		{"the size cosigned, another root: 409 without a size", 15, nil, []byte(fork), "refused root-mismatch"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := run(tc.old, tc.proof, tc.cp); !strings.HasPrefix(got, tc.want) {
				t.Fatalf("%s, want %s", got, tc.want)
			}
		})
	}
}

// runWitnessClient submits cp from old with proof to the witness at url
// with transparency-dev's client (bin), with env added to its
// environment, and returns what it printed.
func runWitnessClient(t *testing.T, bin, url, key string, old uint64, proof [][32]byte, cp []byte, env ...string) string {
	t.Helper()
	dir := t.TempDir()
	cpf := filepath.Join(dir, "checkpoint")
	pf := filepath.Join(dir, "proof")
	var lines []string
	for _, h := range proof {
		lines = append(lines, base64.StdEncoding.EncodeToString(h[:]))
	}
	if err := os.WriteFile(cpf, cp, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(pf, []byte(strings.Join(lines, "\n")), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "-url", url, "-witness-key", key, "-old", strconv.FormatUint(old, 10), "-proof", pf, "-checkpoint", cpf)
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	if ee, ok := err.(*exec.ExitError); err != nil && (!ok || ee.ExitCode() != 3) {
		t.Fatalf("witnessclient: %v: %s", err, out)
	}
	return strings.TrimSpace(string(out))
}
