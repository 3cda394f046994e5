package gobuild

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// Build runs `go build -o out pkg` in dir, with env added to the
// process's environment, while holding the machine-wide lock named
// name (builds under other names run beside it). It returns the go
// command's output with its error.
func Build(name, dir, out, pkg string, env ...string) error {
	lock, err := os.OpenFile(filepath.Join(os.TempDir(), "opx-gobuild-"+name+".lock"), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return fmt.Errorf("gobuild: %w", err)
	}
	defer lock.Close() // releases the lock
	for {
		err = unix.Flock(int(lock.Fd()), unix.LOCK_EX)
		if err != unix.EINTR {
			break
		}
	}
	if err != nil {
		return fmt.Errorf("gobuild: lock: %w", err)
	}
	cmd := exec.Command("go", "build", "-o", out, pkg)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	if b, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("go build %s: %v\n%s", pkg, err, b)
	}
	return nil
}
