package gobuild_test

import (
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/opx-dev/opx/internal/gobuild"
)

// TestBuild_Concurrent: builds under one name, started together, all
// succeed (one after the other) and what they built runs.
func TestBuild_Concurrent(t *testing.T) {
	dir := t.TempDir()
	var wg sync.WaitGroup
	errs := make([]error, 3)
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = gobuild.Build("gobuild-test", ".", filepath.Join(dir, "hello"+string(rune('a'+i))), "./testdata/hello")
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("build %d: %v", i, err)
		}
		out, err := exec.Command(filepath.Join(dir, "hello"+string(rune('a'+i)))).Output()
		if err != nil || !strings.Contains(string(out), "hello from a built program") {
			t.Errorf("built program %d: %q %v", i, out, err)
		}
	}
}

// TestBuild_Fails: a package that does not build is an error naming it,
// with the go command's output.
func TestBuild_Fails(t *testing.T) {
	err := gobuild.Build("gobuild-test", ".", filepath.Join(t.TempDir(), "x"), "./testdata/nosuch")
	if err == nil || !strings.Contains(err.Error(), "go build ./testdata/nosuch") {
		t.Fatalf("got %v", err)
	}
}
