package install

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/opx-dev/opx/agents/hookproto"
	"mvdan.cc/sh/v3/shell"
	"mvdan.cc/sh/v3/syntax"
)

// Executable returns the path hooks should run opx by: the running
// program, absolute with its symbolic links resolved. A binary of `go run`
// or `go test` (in Go's build cache or a go-build temporary directory) is
// refused with ErrBuildCache: it is deleted or replaced soon after, and
// every hook would then fail.
func Executable() (string, error) {
	exe, err := os.Executable()
	if err != nil {
		return "", fmt.Errorf("the running opx's path: %w", err)
	}
	if exe, err = filepath.EvalSymlinks(exe); err != nil {
		return "", fmt.Errorf("the running opx's path: %w", err)
	}
	if InBuildCache(exe) {
		return "", fmt.Errorf("%w: %s", ErrBuildCache, exe)
	}
	return exe, nil
}

// InBuildCache reports whether path is where the go command puts the
// binaries it builds for a run: a go-build* directory (under the
// temporary directory, $GOTMPDIR or the build cache) or $GOCACHE.
func InBuildCache(path string) bool {
	for _, part := range strings.Split(filepath.ToSlash(path), "/") {
		if strings.HasPrefix(part, "go-build") {
			return true
		}
	}
	if c := os.Getenv("GOCACHE"); c != "" && c != "off" && within(filepath.Clean(c), path) {
		return true
	}
	return false
}

// within reports whether path is dir or below it.
func within(dir, path string) bool {
	rel, err := filepath.Rel(dir, path)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, "../")
}

// CheckCommand checks that path can be a hook's opx: absolute, and an
// executable regular file.
func CheckCommand(path string) error {
	if !filepath.IsAbs(path) {
		return fmt.Errorf("%w: %q is not an absolute path", ErrCommand, path)
	}
	fi, err := os.Stat(path)
	if err != nil {
		return fmt.Errorf("%w: %v", ErrCommand, err)
	}
	if !fi.Mode().IsRegular() || fi.Mode().Perm()&0o111 == 0 {
		return fmt.Errorf("%w: %s is not an executable file", ErrCommand, path)
	}
	return nil
}

// HookProgram is the base name of the small hook binary (cli/opx-hook),
// which runs as `opx-hook AGENT` where opx runs as `opx hook AGENT`.
const HookProgram = "opx-hook"

// IsHookProgram reports whether exe is the small hook binary, by its
// name.
func IsHookProgram(exe string) bool { return filepath.Base(exe) == HookProgram }

// HookCommand is the command line a CLI's hook runs: the program at exe
// (quoted for the shell where it needs it), then hook AGENT for opx, or
// AGENT alone for opx-hook (IsHookProgram).
func HookCommand(exe string, agent hookproto.Agent) (string, error) {
	q, err := syntax.Quote(exe, syntax.LangPOSIX)
	if err != nil {
		return "", fmt.Errorf("%w: %q cannot be quoted for the shell: %v", ErrCommand, exe, err)
	}
	if IsHookProgram(exe) {
		return q + " " + string(agent), nil
	}
	return q + " hook " + string(agent), nil
}

// parseHook returns the program of command if command runs opx's hook
// for agent: `opx ... hook AGENT` (the first word's base name is opx, or
// the word is self, the program being installed, whatever its name), or
// `opx-hook ... AGENT`. A command the shell parser cannot split is not
// opx's.
func parseHook(command string, agent hookproto.Agent, self string) (exe string, ok bool) {
	words, err := shell.Fields(command, os.Getenv)
	if err != nil || len(words) < 2 {
		return "", false
	}
	if IsHookProgram(words[0]) {
		if slices.Contains(words[1:], string(agent)) {
			return words[0], true
		}
		return "", false
	}
	if filepath.Base(words[0]) != "opx" && (self == "" || words[0] != self) {
		return "", false
	}
	for i := 1; i+1 < len(words); i++ {
		if words[i] == "hook" && words[i+1] == string(agent) {
			return words[0], true
		}
	}
	return "", false
}

// handlerCommand returns the command of a command handler, or "".
func handlerCommand(h any) string {
	o, ok := h.(*object)
	if !ok {
		return ""
	}
	if t, ok := o.get("type"); ok && t != "command" {
		return ""
	}
	c, _ := o.get("command")
	s, _ := c.(string)
	return s
}

// ours reports whether handler h runs opx's hook for agent.
func ours(h any, agent hookproto.Agent, self string) bool {
	_, ok := parseHook(handlerCommand(h), agent, self)
	return ok
}

// groupHandlers returns the handlers of hook group g, or nil when g is
// not a group of the shape the CLIs read.
func groupHandlers(g any) []any {
	o, ok := g.(*object)
	if !ok {
		return nil
	}
	hs, _ := o.get("hooks")
	a, _ := hs.([]any)
	return a
}

// matcherCoversAll reports whether group g fires for every tool: no
// matcher, "", "*" or ".*".
func matcherCoversAll(g *object) (string, bool) {
	m, ok := g.get("matcher")
	if !ok || m == nil {
		return "", true
	}
	s, isStr := m.(string)
	return s, isStr && slices.Contains([]string{"", "*", ".*"}, strings.TrimSpace(s))
}
