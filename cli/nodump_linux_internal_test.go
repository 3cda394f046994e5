package cli

import (
	"os"
	"os/exec"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// TestKeepMemoryOffDisk runs keepMemoryOffDisk in a child (it cannot be
// undone in this process) and checks the child is no longer dumpable and
// has no core limit left to raise.
func TestKeepMemoryOffDisk(t *testing.T) {
	if os.Getenv("OPX_TEST_NODUMP_CHILD") == "1" {
		if err := keepMemoryOffDisk(); err != nil {
			t.Fatal(err)
		}
		d, err := unix.PrctlRetInt(unix.PR_GET_DUMPABLE, 0, 0, 0, 0)
		if err != nil {
			t.Fatal(err)
		}
		var rl unix.Rlimit
		if err := unix.Getrlimit(unix.RLIMIT_CORE, &rl); err != nil {
			t.Fatal(err)
		}
		if d != 0 || rl.Cur != 0 || rl.Max != 0 {
			t.Fatalf("dumpable %d, core limit %d/%d", d, rl.Cur, rl.Max)
		}
		return
	}
	if d, err := unix.PrctlRetInt(unix.PR_GET_DUMPABLE, 0, 0, 0, 0); err != nil || d != 1 {
		t.Skipf("the test process itself is not dumpable (%d, %v): nothing to compare", d, err)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestKeepMemoryOffDisk$", "-test.v")
	cmd.Env = append(os.Environ(), "OPX_TEST_NODUMP_CHILD=1")
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "--- PASS: TestKeepMemoryOffDisk") {
		t.Fatalf("child: %v\n%s", err, out)
	}
}
