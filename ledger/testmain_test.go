package ledger_test

import (
	"fmt"
	"os"
	"testing"
)

// childEnv names the child mode when the test binary re-executes itself
// (crash tests); children never run the tests.
const childEnv = "OPX_LEDGER_TEST_CHILD"

var childModes = map[string]func() error{
	"crash-appender": crashAppender,
}

func TestMain(m *testing.M) {
	if mode := os.Getenv(childEnv); mode != "" {
		f, ok := childModes[mode]
		if !ok {
			fmt.Fprintf(os.Stderr, "unknown child mode %q\n", mode)
			os.Exit(2)
		}
		if err := f(); err != nil {
			fmt.Fprintln(os.Stderr, "child:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}
