package cli_test

import (
	"encoding/json"
	"testing"
)

func TestStatus_NotRunning(t *testing.T) {
	ws := t.TempDir()
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	r := run(t, "status", "--workspace", ws)
	r.wantCode(t, 1)
	r.wantErr(t, "not running", "opx start")
	r = run(t, "status", "--workspace", ws, "--json")
	r.wantCode(t, 1)
	var st struct {
		Running bool `json:"running"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &st); err != nil || st.Running {
		t.Errorf("--json: %q, %v", r.stdout, err)
	}
	for _, cmd := range []string{"stop", "restart", "send"} {
		args := []string{cmd, "--workspace", ws}
		if cmd == "send" {
			args = append(args, "hello")
		}
		r := run(t, args...)
		r.wantCode(t, 1)
		r.wantErr(t, "not running")
	}
}
