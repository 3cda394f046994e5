package event_test

import (
	"testing"

	"github.com/opx-dev/opx/ledger/event"
)

// TestExecOutcome is the one definition of a failed execution, for the
// engine's records today (failed set) and for ledgers written before the
// field (a tool's error recorded as exit 1).
func TestExecOutcome(t *testing.T) {
	tests := []struct {
		tool   string
		exit   int64
		failed bool
		want   string
	}{
		{"read_file", 0, false, event.ExecOK},
		{"read_file", 1, false, event.ExecError}, // before the failed field
		{"edit_file", 1, true, event.ExecError},
		{"http_request", 1, false, event.ExecError},
		{"memory_append", 1, false, event.ExecError},
		{"execute_command", 0, false, event.ExecOK},
		{"execute_command", 3, false, event.ExecExited},
		{"execute_command", -1, false, event.ExecExited}, // killed: it ran
		{"execute_command", 1, true, event.ExecError},    // could not start
		{"git_status", 128, false, event.ExecExited},
		{"git_commit", 1, true, event.ExecError},
	}
	for _, tt := range tests {
		if got := event.ExecOutcome(tt.tool, tt.exit, tt.failed); got != tt.want {
			t.Errorf("ExecOutcome(%s, %d, %v) = %s, want %s", tt.tool, tt.exit, tt.failed, got, tt.want)
		}
		e := &event.ExecCompleted{Tool: tt.tool, ExitCode: int(tt.exit), Failed: tt.failed}
		if got := e.Outcome(); got != tt.want {
			t.Errorf("%+v.Outcome() = %s, want %s", e, got, tt.want)
		}
	}
}

func TestExecCompleted_Validate_FailedNeedsExitCode(t *testing.T) {
	e := &event.ExecCompleted{CallID: "c", Tool: "read_file", Failed: true, Post: []event.PostState{}}
	if err := e.Validate(); err == nil {
		t.Error("a failed execution with exit_code 0 validates")
	}
	e.ExitCode = 1
	if err := e.Validate(); err != nil {
		t.Error(err)
	}
}
