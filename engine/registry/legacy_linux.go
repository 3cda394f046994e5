package registry

import (
	"bytes"
	"fmt"
	"path/filepath"

	"github.com/opx-dev/opx/internal/regularfile"
)

// legacyEngineStart recognises the engine of an entry written before
// entries carried start times (opx 0.1.0-dev before the liveness
// safeguard): pid must run `opx internal-engine` for this workspace, as
// its command line says. It returns the process's start time, which from
// then on pins the pid like any other entry's, or 0 when pid is not that
// engine (gone, or reused by another program).
func legacyEngineStart(pid int, workspace string) uint64 {
	if pid <= 0 || workspace == "" {
		return 0
	}
	b, err := regularfile.Read(fmt.Sprintf("/proc/%d/cmdline", pid), 1<<20)
	if err != nil {
		return 0
	}
	args := bytes.Split(bytes.TrimRight(b, "\x00"), []byte{0})
	engine, ws := false, false
	for i, a := range args {
		switch {
		case string(a) == "internal-engine":
			engine = true
		case string(a) == "--workspace" && i+1 < len(args):
			ws = ws || filepath.Clean(string(args[i+1])) == filepath.Clean(workspace)
		case bytes.HasPrefix(a, []byte("--workspace=")):
			ws = ws || filepath.Clean(string(a[len("--workspace="):])) == filepath.Clean(workspace)
		}
	}
	if !engine || !ws {
		return 0
	}
	st, err := StartTime(pid)
	if err != nil {
		return 0
	}
	return st
}
