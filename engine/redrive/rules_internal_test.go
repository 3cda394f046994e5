package redrive

import (
	"strings"
	"testing"

	"github.com/opx-dev/opx/ledger/event"
	"github.com/opx-dev/opx/replay/rerun"
	"github.com/opx-dev/opx/shield"
)

// A rerun that diverges on a verdict names the Shield rules the record was
// judged by when they are not this opx's: records made before the version
// was recorded are version 1.
func TestRulesNote(t *testing.T) {
	for _, tt := range []struct {
		name string
		env  *event.ShieldEnv
		want string
	}{
		{"unrecorded", nil, "judged by Shield rules version 1, this opx has version " + shield.RulesVersion},
		{"empty", &event.ShieldEnv{}, "judged by Shield rules version 1,"},
		{"other", &event.ShieldEnv{Rules: "0.9"}, "judged by Shield rules version 0.9,"},
		{"same", &event.ShieldEnv{Rules: shield.RulesVersion}, ""},
	} {
		en := &rerun.Engine{}
		en.Started.Shield = tt.env
		got := rulesNote(en)
		if (tt.want == "") != (got == "") || !strings.Contains(got, tt.want) {
			t.Errorf("%s: %q, want %q", tt.name, got, tt.want)
		}
	}
	if rulesNote(nil) == "" {
		t.Error("no engine run: want the version 1 note")
	}
}
