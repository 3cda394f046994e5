package shield

import (
	"os"
	"strings"
	"testing"
)

func TestZZProbeInspect(t *testing.T) {
	lines := strings.Split(os.Getenv("PROBE_LINES"), "\n")
	s := New(Config{Workspace: "/home/dev/src/app", Home: "/home/dev"})
	for _, l := range lines {
		if l == "" {
			continue
		}
		f := s.CommandFactsIn(l, "")
		for i := range f.Runs {
			ok, why := inspectingUse(&f.Runs[i])
			t.Logf("%s => %s: %v %s", l, f.Runs[i].Name, ok, why)
		}
	}
}
