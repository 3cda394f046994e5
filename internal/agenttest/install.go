package agenttest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"
)

// A CLI names one of the coding-agent CLIs .ci/agents installs.
type CLI string

// The CLIs, by the name opx gives them (`opx hook AGENT`).
const (
	Claude CLI = "claude"
	Codex  CLI = "codex"
	Gemini CLI = "gemini"
)

// InstallCommand is what installs the CLIs (as .ci/run does, without its
// cache outside the clone).
const InstallCommand = "cd .ci/agents && npm ci --ignore-scripts && node node_modules/@anthropic-ai/claude-code/install.cjs"

// Root returns the module's root directory (the one with go.mod), found
// from this source file.
func Root() string {
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		panic("agenttest: no caller information")
	}
	return filepath.Dir(filepath.Dir(filepath.Dir(file)))
}

// modules is .ci/agents/node_modules (a symlink into the CI cache).
func modules() string { return filepath.Join(Root(), ".ci", "agents", "node_modules") }

// locate returns the command line that starts cli and the directories
// its PATH needs beside the system's, or an error saying what is missing.
func locate(cli CLI) (argv []string, path []string, err error) {
	var exe string
	nm := modules()
	switch cli {
	case Claude:
		// The native binary install.cjs copied over the npm stub.
		exe = filepath.Join(nm, "@anthropic-ai", "claude-code", "bin", "claude.exe")
	case Codex:
		// The native binary itself, not bin/codex.js (a node wrapper that
		// re-executes it); codex-path holds the rg it bundles.
		m, _ := filepath.Glob(filepath.Join(nm, "@openai", "codex-linux-*", "vendor", "*", "bin", "codex"))
		if len(m) == 0 {
			return nil, nil, fmt.Errorf("no native codex binary under %s", filepath.Join(nm, "@openai"))
		}
		exe = m[0]
		path = append(path, filepath.Join(filepath.Dir(filepath.Dir(exe)), "codex-path"))
	case Gemini:
		exe = filepath.Join(nm, "@google", "gemini-cli", "bundle", "gemini.js")
		node, err := exec.LookPath("node")
		if err != nil {
			return nil, nil, err
		}
		argv = []string{node}
		path = append(path, filepath.Dir(node))
	default:
		return nil, nil, fmt.Errorf("unknown CLI %q", cli)
	}
	st, err := os.Stat(exe)
	if err != nil {
		return nil, nil, err
	}
	if cli == Claude && st.Size() < 1<<20 {
		// The npm stub (about 500 bytes) that install.cjs replaces.
		return nil, nil, fmt.Errorf("%s is the npm stub: run node node_modules/@anthropic-ai/claude-code/install.cjs", exe)
	}
	return append(argv, exe), path, nil
}

// Program returns the command line that starts cli (the native binary, or
// node and Gemini's bundle) and the extra PATH directories it needs,
// after checking they are installed. A missing one skips the test, or
// fails it under CI=true.
func Program(t testing.TB, cli CLI) (argv, path []string) {
	t.Helper()
	argv, path, err := locate(cli)
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("agent CLI %s: %v (install: %s)", cli, err, InstallCommand)
		}
		t.Skipf("agent CLI %s: %v (install: %s)", cli, err, InstallCommand)
	}
	return argv, path
}
