package event_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/opx-dev/opx/ledger/event"
)

// TestEngineCrashed_HowItEnded: engine.crashed as written before it said
// how the process ended still checks; the new members check only in the
// combinations the engine writes.
func TestEngineCrashed_HowItEnded(t *testing.T) {
	const base = `"detail":"d","last_seq":9,"started_seq":3`
	tests := []struct {
		name, data string
		ok         bool
	}{
		{"as before", `{` + base + `}`, true},
		{"exited", `{` + base + `,"exit_code":2,"pid":77}`, true},
		{"killed by the manager", `{` + base + `,"pid":77,"reason":"its start-up protocol failed","sender":"manager","signal":"SIGKILL"}`, true},
		{"killed by opx stop", `{` + base + `,"pid":77,"reason":"orphan","sender":"opx-stop","signal":"SIGKILL"}`, true},
		{"killed by someone else", `{` + base + `,"pid":77,"sender":"unknown","signal":"SIGKILL"}`, true},
		{"realtime signal", `{` + base + `,"pid":77,"sender":"unknown","signal":"SIGRTMIN+3"}`, true},
		{"unknown sender", `{` + base + `,"pid":77,"sender":"root","signal":"SIGKILL"}`, false},
		{"sender without signal", `{` + base + `,"pid":77,"sender":"manager"}`, false},
		{"reason without sender", `{` + base + `,"pid":77,"reason":"r","signal":"SIGKILL"}`, false},
		{"reason of an unknown sender", `{` + base + `,"pid":77,"reason":"guess","sender":"unknown","signal":"SIGKILL"}`, false},
		{"signal not a name", `{` + base + `,"pid":77,"sender":"unknown","signal":"kill -9"}`, false},
		{"signal number", `{` + base + `,"pid":77,"sender":"unknown","signal":"9"}`, false},
		{"negative pid", `{` + base + `,"pid":-1}`, false},
		{"reason too long", `{` + base + `,"pid":77,"reason":"` + strings.Repeat("r", 1001) + `","sender":"manager","signal":"SIGKILL"}`, false},
		{"unknown member", `{` + base + `,"killer":1}`, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := event.Check(event.TypeEngineCrashed, []byte(tt.data))
			if tt.ok && err != nil || !tt.ok && !errors.Is(err, event.ErrInvalidPayload) {
				t.Errorf("Check = %v, want ok %v", err, tt.ok)
			}
		})
	}
}
