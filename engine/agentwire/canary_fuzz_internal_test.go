package agentwire

import (
	"testing"

	"github.com/opx-dev/opx/ledger/event"
)

// FuzzParseCanary: whatever the agent sends as its canary result, the
// engine never panics, and anything it cannot vouch for counts as
// unsandboxed; an accepted result validates as a sandbox.canary payload.
func FuzzParseCanary(f *testing.F) {
	f.Add(`{"verified":true,"status":"sandboxed","platform":"linux","mechanism":"landlock","probes":[{"name":"file_read","status":"blocked","target":"/x","error":"EACCES"}],"summary":"ok","timestamp":"2026-11-22T10:00:00Z"}`)
	f.Add(`{"status":"sandboxed"}`)
	f.Add(`{"status":"partial","probes":null}`)
	f.Add(`[]`)
	f.Fuzz(func(t *testing.T, js string) {
		c, err := ParseCanary(js)
		if err != nil {
			if c.Status != event.CanaryUnsandboxed {
				t.Fatalf("refused canary %q counts as %q, want unsandboxed", js, c.Status)
			}
			return
		}
		if err := (&event.SandboxCanary{AgentID: "x", Action: "warned", Result: c}).Validate(); err != nil {
			t.Fatalf("accepted canary does not validate: %v", err)
		}
	})
}
