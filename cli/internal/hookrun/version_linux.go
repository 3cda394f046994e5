package hookrun

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"github.com/opx-dev/opx/agents/hookproto"
	"github.com/opx-dev/opx/internal/regularfile"
)

// Bounds of the search for the agent's version.
const (
	versionParents = 4        // the CLI, and the shells between it and the hook
	versionArgs    = 4        // of each process's arguments, the first few
	versionLevels  = 8        // directories walked up from each candidate
	versionProc    = 64 << 10 // of /proc/PID/cmdline and stat
	versionPackage = 256 << 10
)

// agentPackages are the npm package names whose package.json gives each
// CLI's version (the platform packages beside the main one carry the
// same version).
var agentPackages = map[hookproto.Agent][]string{
	hookproto.Claude: {"@anthropic-ai/claude-code"},
	hookproto.Codex:  {"@openai/codex"},
	hookproto.Gemini: {"@google/gemini-cli"},
}

// agentVersion is the version of agent's CLI that runs this hook, from
// its npm package: found from the executable or the script arguments of
// this process's parent, or of that one's parents (the CLI may run the
// hook through sh -c); "" when none names the package.
func agentVersion(agent hookproto.Agent) string {
	_, v := agentProcess(agent)
	return v
}

// agentProcess is the process of agent's CLI that runs this hook and its
// version (agentVersion); 0 and "" when none of the parents is it.
func agentProcess(agent hookproto.Agent) (pid int, version string) {
	return processFrom(agent, os.Getppid())
}

// versionFrom is agentVersion searched from process pid up.
func versionFrom(agent hookproto.Agent, pid int) string {
	_, v := processFrom(agent, pid)
	return v
}

// processFrom is agentProcess searched from process pid up.
func processFrom(agent hookproto.Agent, pid int) (int, string) {
	for range versionParents {
		if pid <= 1 {
			return 0, ""
		}
		for _, p := range procPaths(pid) {
			if v := packageVersion(agent, p); v != "" {
				return pid, v
			}
		}
		pid = parentPID(pid)
	}
	return 0, ""
}

// procPaths are the files process pid runs: its executable, and those of
// its first arguments that name files (a node script), made absolute
// against its working directory.
func procPaths(pid int) []string {
	proc := fmt.Sprintf("/proc/%d", pid)
	var out []string
	if exe, err := os.Readlink(proc + "/exe"); err == nil {
		out = append(out, exe)
	}
	args := strings.Split(strings.TrimRight(string(readProc(proc+"/cmdline")), "\x00"), "\x00")
	if len(args) > 1+versionArgs {
		args = args[:1+versionArgs]
	}
	cwd, _ := os.Readlink(proc + "/cwd")
	for _, a := range args[min(1, len(args)):] {
		switch {
		case a == "" || strings.HasPrefix(a, "-"):
		case filepath.IsAbs(a):
			out = append(out, a)
		case cwd != "" && strings.ContainsRune(a, '/'):
			out = append(out, filepath.Join(cwd, a))
		}
	}
	return out
}

// parentPID is the parent of process pid from /proc/PID/stat (0 if
// unknown). The command name in parentheses may hold anything: the
// fields are counted after its last ")".
func parentPID(pid int) int {
	b := readProc(fmt.Sprintf("/proc/%d/stat", pid))
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 2 {
		return 0
	}
	ppid, _ := strconv.Atoi(f[1])
	return ppid
}

// readProc reads at most versionProc bytes of a /proc file (their size
// says 0).
func readProc(path string) []byte {
	f, err := os.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	b, _ := io.ReadAll(io.LimitReader(f, versionProc))
	return b
}

// platformSuffix is the part of a platform package's version that names
// the platform (@openai/codex's linux-x64 build says 0.171.0-linux-x64).
var platformSuffix = regexp.MustCompile(`-(linux|darwin|win32)-[a-z0-9]+$`)

// versionText is what a version may be: a semantic version's characters.
var versionText = regexp.MustCompile(`^[0-9A-Za-z.+-]{1,64}$`)

// packageVersion walks up from file path (symlinks resolved) to the
// nearest package.json of agent's package and returns its version.
func packageVersion(agent hookproto.Agent, path string) string {
	real, err := filepath.EvalSymlinks(path)
	if err != nil {
		return ""
	}
	d := filepath.Dir(real)
	for range versionLevels {
		if b, err := regularfile.Read(filepath.Join(d, "package.json"), versionPackage); err == nil {
			var p struct{ Name, Version string }
			if json.Unmarshal(b, &p) == nil && isAgentPackage(agent, p.Name) && versionText.MatchString(p.Version) {
				return platformSuffix.ReplaceAllString(p.Version, "")
			}
		}
		parent := filepath.Dir(d)
		if parent == d {
			break
		}
		d = parent
	}
	return ""
}

// isAgentPackage reports whether npm package name is agent's CLI or one
// of its platform packages (name-linux-x64).
func isAgentPackage(agent hookproto.Agent, name string) bool {
	for _, p := range agentPackages[agent] {
		if name == p || strings.HasPrefix(name, p+"-") {
			return true
		}
	}
	return false
}
