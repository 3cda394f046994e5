package engine

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// canaryPrefix starts the name of every canary directory; the engine's
// pid follows, so a later engine can tell whose it is.
const canaryPrefix = "opx-canary-"

// makeCanaryDir makes this engine's canary directory in runDir (default
// os.TempDir()), first removing those of engines that are gone: a killed
// engine cannot clean up after itself.
func makeCanaryDir(runDir string, logf func(string, ...any)) (string, error) {
	if runDir == "" {
		runDir = os.TempDir()
	}
	if err := os.MkdirAll(runDir, 0o700); err != nil {
		return "", fmt.Errorf("run dir: %w", err)
	}
	sweepCanaryDirs(runDir, logf)
	return os.MkdirTemp(runDir, fmt.Sprintf("%s%d-", canaryPrefix, os.Getpid()))
}

// sweepCanaryDirs removes the canary directories in dir whose engine no
// longer runs. A directory whose pid was reused by another process stays
// until that process is gone too: harmless, and never someone else's.
func sweepCanaryDirs(dir string, logf func(string, ...any)) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, ent := range ents {
		rest, ok := strings.CutPrefix(ent.Name(), canaryPrefix)
		if !ok || !ent.IsDir() {
			continue
		}
		pidText, _, ok := strings.Cut(rest, "-")
		pid, err := strconv.Atoi(pidText)
		if !ok || err != nil || pid <= 0 || processExists(pid) {
			continue
		}
		if err := os.RemoveAll(filepath.Join(dir, ent.Name())); err == nil {
			logf("engine: removed %s, left by engine pid %d", ent.Name(), pid)
		}
	}
}

// processExists reports whether pid names a process that has not exited
// (a zombie nobody reaped has exited).
func processExists(pid int) bool {
	if err := syscall.Kill(pid, 0); err == syscall.ESRCH {
		return false
	}
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		return true // no /proc here: trust kill
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return !os.IsNotExist(err)
	}
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	return len(f) > 0 && f[0] != "Z" && f[0] != "X"
}
