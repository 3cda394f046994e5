package shield

import (
	"os"
	"strings"
	"testing"
)

func TestZZ(t *testing.T) {
	s := New(Config{Workspace: "/ws", Home: "/home/dev"})
	for _, l := range strings.Split(os.Getenv("ZZ_LINES"), "\n") {
		f := s.CommandFacts(l)
		t.Logf("## %s\nreads %+v\nwrites %+v\nreq %+v\nsupply %+v\nexecs %+v", l, f.Reads, f.Writes, f.Requests, f.Supply, f.Execs)
	}
}
