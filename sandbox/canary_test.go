package sandbox_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/opx-dev/opx/sandbox"
)

func probes(statuses ...string) []sandbox.ProbeResult {
	names := []string{"file_read", "file_write", "network", "process_spawn"}
	var out []sandbox.ProbeResult
	for i, s := range statuses {
		out = append(out, sandbox.ProbeResult{Name: names[i], Status: s})
	}
	return out
}

// TestCanaryResult_Status pins the seed document's status computation and
// summary wording.
func TestCanaryResult_Status(t *testing.T) {
	tests := []struct {
		probes   []sandbox.ProbeResult
		status   string
		verified bool
		summary  string
	}{
		{probes("blocked", "blocked", "blocked"), "sandboxed", true, "Sandbox verified: 3/3 probes blocked (file_read, file_write, network)."},
		{probes("blocked", "blocked", "skipped"), "sandboxed", true, "Sandbox verified: 2/2 probes blocked (file_read, file_write). Skipped: network."},
		{probes("failed", "failed", "failed"), "unsandboxed", false, "Sandbox verified: 0/3 probes blocked. Failed: file_read, file_write, network."},
		{probes("blocked", "blocked", "failed", "blocked"), "partial", false, "Sandbox verified: 3/4 probes blocked (file_read, file_write, process_spawn). Failed: network."},
		{probes("skipped", "skipped", "skipped", "skipped"), "unavailable", false, "Sandbox verified: 0/0 probes blocked. Skipped: file_read, file_write, network, process_spawn."},
		{nil, "unavailable", false, "Sandbox verified: 0/0 probes blocked."},
	}
	for _, tt := range tests {
		r := sandbox.NewCanaryResult("landlock", "linux", tt.probes, time.Unix(0, 0))
		if r.Status != tt.status || r.Verified != tt.verified || r.Summary != tt.summary {
			t.Errorf("%v: got %q verified=%v %q; want %q %v %q", tt.probes, r.Status, r.Verified, r.Summary, tt.status, tt.verified, tt.summary)
		}
		if r.Blocked()+r.Failed()+r.Skipped() != len(tt.probes) {
			t.Errorf("counts do not add up: %d %d %d", r.Blocked(), r.Failed(), r.Skipped())
		}
	}
}

func TestCanaryResult_JSONFields(t *testing.T) {
	r := sandbox.NewCanaryResult("landlock", "linux", []sandbox.ProbeResult{{Name: "file_read", Status: "blocked", Target: "/x"}, {Name: "network", Status: "skipped", Error: "why"}}, time.Date(2026, 4, 3, 10, 30, 0, 0, time.UTC))
	b, _ := json.Marshal(r)
	want := `{"verified":true,"status":"sandboxed","platform":"linux","mechanism":"landlock","probes":[{"name":"file_read","status":"blocked","target":"/x"},{"name":"network","status":"skipped","error":"why"}],"summary":"Sandbox verified: 1/1 probes blocked (file_read). Skipped: network.","timestamp":"2026-04-03T10:30:00Z"}`
	if string(b) != want {
		t.Errorf("JSON\n%s\nwant\n%s", b, want)
	}
}

func TestCanaryResult_WriteRead(t *testing.T) {
	dir := t.TempDir()
	if r := sandbox.ReadCanaryResult(dir); r.Status != "unknown" {
		t.Errorf("missing file: %q, want unknown", r.Status)
	}
	r := sandbox.NewCanaryResult("landlock", "linux", probes("blocked"), time.Now())
	if err := sandbox.WriteCanaryResult(dir, r); err != nil {
		t.Fatal(err)
	}
	if got := sandbox.ReadCanaryResult(dir); got.Status != "sandboxed" || got.Summary != r.Summary {
		t.Errorf("read back %+v", got)
	}
	if fi, _ := os.Stat(filepath.Join(dir, sandbox.CanaryFile)); fi.Mode().Perm() != 0o600 {
		t.Errorf("mode %v", fi.Mode().Perm())
	}
	os.WriteFile(filepath.Join(dir, sandbox.CanaryFile), []byte("{"), 0o600)
	if r := sandbox.ReadCanaryResult(dir); r.Status != "unknown" {
		t.Errorf("corrupt file: %q, want unknown", r.Status)
	}
}
