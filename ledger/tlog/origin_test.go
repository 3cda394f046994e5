package tlog_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/opx-dev/opx/ledger/tlog"
)

// TestCheckOrigin: tlog-checkpoint's rules for an origin a team chooses.
func TestCheckOrigin(t *testing.T) {
	for _, tc := range []struct {
		origin string
		ok     bool
	}{
		{"example.com/opx/ledger", true},
		{"git.acme.internal/team-a/opx", true},
		{"sum.golang.org", true},
		{"", false},
		{"https://example.com/log", false},
		{"example.com/a log", false},
		{"example.com/a+log", false},
		{"example.com/log\n", false},
		{"Example.com/log", false},
		{"/log", false},
		{"exämple.com/log", false},
		{tlog.OriginPrefix + "00112233445566778899aabbccddeeff", false},
		{"example.com/" + strings.Repeat("a", tlog.MaxOriginBytes), false},
	} {
		err := tlog.CheckOrigin(tc.origin)
		if tc.ok != (err == nil) || err != nil && !errors.Is(err, tlog.ErrOrigin) {
			t.Errorf("CheckOrigin(%q) = %v, want ok %v", tc.origin, err, tc.ok)
		}
	}
}
