package sandbox

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// Canary statuses.
const (
	StatusSandboxed   = "sandboxed"
	StatusPartial     = "partial"
	StatusUnsandboxed = "unsandboxed"
	StatusUnavailable = "unavailable"
	StatusUnknown     = "unknown" // ReadCanaryResult of a missing or unreadable file
)

// Probe statuses.
const (
	ProbeBlocked = "blocked"
	ProbeFailed  = "failed"
	ProbeSkipped = "skipped"
)

// CanaryResult is the outcome of the canary probes.
type CanaryResult struct {
	Verified  bool          `json:"verified"`
	Status    string        `json:"status"`
	Platform  string        `json:"platform"`
	Mechanism string        `json:"mechanism"`
	Probes    []ProbeResult `json:"probes"`
	Summary   string        `json:"summary"`
	Timestamp time.Time     `json:"timestamp"`
}

// ProbeResult is one probe's outcome.
type ProbeResult struct {
	Name   string `json:"name"`
	Status string `json:"status"`
	Target string `json:"target,omitempty"`
	Error  string `json:"error,omitempty"`
}

// Blocked counts the probes the sandbox blocked.
func (r CanaryResult) Blocked() int { return r.count(ProbeBlocked) }

// Failed counts the probes the sandbox did not block.
func (r CanaryResult) Failed() int { return r.count(ProbeFailed) }

// Skipped counts the probes that did not apply.
func (r CanaryResult) Skipped() int { return r.count(ProbeSkipped) }

func (r CanaryResult) count(status string) int {
	n := 0
	for _, p := range r.Probes {
		if p.Status == status {
			n++
		}
	}
	return n
}

func (r CanaryResult) names(status string) []string {
	var out []string
	for _, p := range r.Probes {
		if p.Status == status {
			out = append(out, p.Name)
		}
	}
	return out
}

// NewCanaryResult computes Status, Verified and Summary from the probes, as the
// seed document specifies: applicable = blocked + failed; none applicable
// is unavailable; no failure is sandboxed; some blocked is partial; else
// unsandboxed. Only sandboxed is verified.
func NewCanaryResult(mechanism, platform string, probes []ProbeResult, at time.Time) CanaryResult {
	r := CanaryResult{Platform: platform, Mechanism: mechanism, Probes: probes, Timestamp: at.UTC()}
	if r.Probes == nil {
		r.Probes = []ProbeResult{}
	}
	blocked, failed := r.Blocked(), r.Failed()
	switch applicable := blocked + failed; {
	case applicable == 0:
		r.Status = StatusUnavailable
	case failed == 0:
		r.Status, r.Verified = StatusSandboxed, true
	case blocked > 0:
		r.Status = StatusPartial
	default:
		r.Status = StatusUnsandboxed
	}
	r.Summary = summary(r)
	return r
}

// summary words the result as the seed document does, e.g.
// "Sandbox verified: 2/2 probes blocked (file_read, file_write). Skipped: network."
func summary(r CanaryResult) string {
	blocked, failed, skipped := r.names(ProbeBlocked), r.names(ProbeFailed), r.names(ProbeSkipped)
	s := fmt.Sprintf("Sandbox verified: %d/%d probes blocked", len(blocked), len(blocked)+len(failed))
	if len(blocked) > 0 {
		s += " (" + strings.Join(blocked, ", ") + ")"
	}
	s += "."
	if len(failed) > 0 {
		s += " Failed: " + strings.Join(failed, ", ") + "."
	}
	if len(skipped) > 0 {
		s += " Skipped: " + strings.Join(skipped, ", ") + "."
	}
	return s
}

// CanaryFile is the file WriteCanaryResult writes in a directory.
const CanaryFile = "sandbox.status"

// WriteCanaryResult writes r as JSON to dir/sandbox.status (0600). The agent
// itself sends its result over gRPC (it has no filesystem); this is for
// tools such as `opx sandbox probe` and for platforms where the parent
// wraps the child.
func WriteCanaryResult(dir string, r CanaryResult) error {
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, CanaryFile), append(b, '\n'), 0o600)
}

// ReadCanaryResult reads dir/sandbox.status. A missing or unparseable file
// gives a result with Status "unknown".
func ReadCanaryResult(dir string) CanaryResult {
	b, err := os.ReadFile(filepath.Join(dir, CanaryFile))
	if err != nil {
		return CanaryResult{Status: StatusUnknown, Probes: []ProbeResult{}, Summary: "no canary result: " + err.Error()}
	}
	var r CanaryResult
	if err := json.Unmarshal(b, &r); err != nil || r.Status == "" {
		return CanaryResult{Status: StatusUnknown, Probes: []ProbeResult{}, Summary: "unreadable canary result"}
	}
	return r
}
