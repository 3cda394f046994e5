package ledger_test

import (
	"fmt"
	"os"
	"os/exec"
	"testing"
)

// childEnv names the child mode when the test binary re-executes itself
// (crash tests); children never run the tests.
const childEnv = "OPX_LEDGER_TEST_CHILD"

// childModes maps a mode name to its body. A mode returns nil to exit 0
// and an error to exit 1 with the error on stderr; it may also exit on
// its own (or be killed, which is the point of some).
var childModes = map[string]func() error{
	crashMode: crashAppender,
}

// childCommand returns a command that re-executes this test binary in the
// given child mode, with env added to the parent's environment.
// -test.run=^$ keeps a child that somehow reaches m.Run from running
// tests.
func childCommand(mode string, env ...string) *exec.Cmd {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(append(os.Environ(), childEnv+"="+mode), env...)
	return cmd
}

func TestMain(m *testing.M) {
	if mode := os.Getenv(childEnv); mode != "" {
		f, ok := childModes[mode]
		if !ok {
			fmt.Fprintf(os.Stderr, "%s=%q: unknown child mode\n", childEnv, mode)
			os.Exit(2)
		}
		if err := f(); err != nil {
			fmt.Fprintf(os.Stderr, "child %s: %v\n", mode, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	code := m.Run()
	if proofcheckDir != "" {
		os.RemoveAll(proofcheckDir)
	}
	os.Exit(code)
}
