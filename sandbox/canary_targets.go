package sandbox

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// PlantCanaryTargets creates what the agent's canary probes aim at, each
// certainly usable without a sandbox: a readable file, a writable
// directory (this engine's canary directory in runDir, default
// os.TempDir()), and a listener on a port the agent is not allowed.
// cleanup removes them.
func PlantCanaryTargets(runDir string, logf func(string, ...any)) (t CanaryTargets, cleanup func(), err error) {
	dir, err := makeCanaryDir(runDir, logf)
	if err != nil {
		return CanaryTargets{}, nil, err
	}
	file := dir + "/canary.txt"
	if err := os.WriteFile(file, []byte("opx canary: reading this means the sandbox did not hold\n"), 0o644); err != nil {
		os.RemoveAll(dir)
		return CanaryTargets{}, nil, err
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		os.RemoveAll(dir)
		return CanaryTargets{}, nil, err
	}
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	return CanaryTargets{ReadFile: file, WriteDir: dir, ConnectAddr: l.Addr().String()}, func() { l.Close(); os.RemoveAll(dir) }, nil
}

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
