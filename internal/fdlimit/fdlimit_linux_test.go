package fdlimit_test

import (
	"os"
	"strings"
	"syscall"
	"testing"

	"github.com/opx-dev/opx/internal/fdlimit"
)

// TestRaise_LoweredSoftLimit_RaisedToHard lowers the test process's own
// soft limit (real setrlimit), then checks that Raise puts it back to the
// hard limit and reports both, and that files beyond the lowered limit
// can then be opened.
func TestRaise_LoweredSoftLimit_RaisedToHard(t *testing.T) {
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		t.Fatal(err)
	}
	const low = 64
	if lim.Max <= low+64 {
		t.Skipf("hard limit %d: too low to test a raise", lim.Max)
	}
	t.Cleanup(func() { syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim) })
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &syscall.Rlimit{Cur: low, Max: lim.Max}); err != nil {
		t.Fatal(err)
	}
	r, err := fdlimit.Raise()
	if err != nil {
		t.Fatal(err)
	}
	if !r.Supported || r.Old != low || r.New != lim.Max || r.Max != lim.Max || !r.Raised() {
		t.Fatalf("Raise = %+v, want %d → %d", r, low, lim.Max)
	}
	var now syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &now); err != nil {
		t.Fatal(err)
	}
	if now.Cur != lim.Max {
		t.Fatalf("soft limit after Raise = %d, want %d", now.Cur, lim.Max)
	}
	if s := r.String(); !strings.Contains(s, "raised 64 → ") {
		t.Errorf("String() = %q", s)
	}
	// More files than the lowered limit open now.
	var files []*os.File
	t.Cleanup(func() {
		for _, f := range files {
			f.Close()
		}
	})
	for range low + 16 {
		f, err := os.Open(os.DevNull)
		if err != nil {
			t.Fatalf("after Raise, file %d: %v", len(files), err)
		}
		files = append(files, f)
	}
}

// TestRaise_AtHardLimit_Unchanged: a second Raise changes nothing and
// says so.
func TestRaise_AtHardLimit_Unchanged(t *testing.T) {
	if _, err := fdlimit.Raise(); err != nil {
		t.Fatal(err)
	}
	r, err := fdlimit.Raise()
	if err != nil {
		t.Fatal(err)
	}
	if r.Raised() || r.New != r.Max {
		t.Fatalf("Raise at the hard limit = %+v", r)
	}
	if s := r.String(); !strings.Contains(s, "(the hard limit)") {
		t.Errorf("String() = %q", s)
	}
}
