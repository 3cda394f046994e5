package executor

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/opx-dev/opx/sandbox"
	"golang.org/x/sys/unix"
)

// GroupShell is the tool group of execute_command.
const GroupShell = "shell"

// Defaults of ShellConfig (and GitConfig's output cap).
const (
	DefaultShellTimeout    = 2 * time.Minute
	DefaultShellMaxTimeout = 10 * time.Minute
	DefaultOutputCap       = 64 << 10
	// MaxCommandBytes caps the command line (the kernel takes at most
	// 128 KiB in one argument).
	MaxCommandBytes = 64 << 10
)

// CommandPath is the PATH every command starts with; the Go toolchain's
// bin directory is appended when Go is installed at a known place.
const CommandPath = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

// goBinDirs are where Go toolchains are commonly installed.
var goBinDirs = []string{"/usr/local/go/bin", "/usr/lib/go/bin"}

// ShellConfig configures execute_command.
type ShellConfig struct {
	// Launcher is the argv prefix that runs a command sandboxed, up to
	// but without the "--" before the command: for opx,
	// [opx, internal-sandbox-exec, policy.Args()...] (see
	// sandbox.CommandPolicy). Without one every command is refused.
	Launcher []string
	// TempDir is a private directory for HOME and TMPDIR (and so for
	// build caches). It must be one of the launcher's --writable
	// directories; empty leaves HOME and TMPDIR unset.
	TempDir string
	// Timeout applies when the call gives none; MaxTimeout caps what a
	// call may ask for. Zero means DefaultShellTimeout and
	// DefaultShellMaxTimeout.
	Timeout, MaxTimeout time.Duration
	// OutputCap is how many bytes of output are kept, half from the
	// head and half from the tail. Zero means DefaultOutputCap.
	OutputCap int
	// Env are extra NAME=value variables (GOCACHE, GOFLAGS, ...); they
	// override the defaults of the same name. Nothing else reaches the
	// command from the engine's environment.
	Env []string
}

// Shell implements execute_command: `sh -c command` in the workspace,
// through the sandboxing launcher, in its own process group, with a
// scrubbed environment, a timeout and an output cap. It is mutating and
// workspace-wide: Chronicle snapshots the whole workspace around it.
type Shell struct {
	ws  *Workspace
	cfg ShellConfig
	env []string
}

// NewShell returns execute_command for a workspace.
func NewShell(ws *Workspace, cfg ShellConfig) *Shell {
	if cfg.Timeout <= 0 {
		cfg.Timeout = DefaultShellTimeout
	}
	if cfg.MaxTimeout <= 0 {
		cfg.MaxTimeout = DefaultShellMaxTimeout
	}
	cfg.Timeout = min(cfg.Timeout, cfg.MaxTimeout)
	if cfg.OutputCap <= 0 {
		cfg.OutputCap = DefaultOutputCap
	}
	base := []string{"PATH=" + commandPath(), "LANG=C.UTF-8"}
	if cfg.TempDir != "" {
		base = append(base, "HOME="+cfg.TempDir, "TMPDIR="+cfg.TempDir)
	}
	return &Shell{ws: ws, cfg: cfg, env: mergeEnv(base, cfg.Env)}
}

// commandPath is CommandPath plus the Go toolchain's bin directory.
func commandPath() string {
	for _, d := range goBinDirs {
		if st, err := os.Stat(filepath.Join(d, "go")); err == nil && st.Mode().IsRegular() {
			return CommandPath + ":" + d
		}
	}
	return CommandPath
}

// mergeEnv returns base with extra's variables added, an extra replacing
// a base variable of the same name in place; entries without "=" are
// dropped. No name appears twice, so every libc reads the same value.
func mergeEnv(base, extra []string) []string {
	out := append([]string(nil), base...)
	index := map[string]int{}
	for i, kv := range out {
		name, _, _ := strings.Cut(kv, "=")
		index[name] = i
	}
	for _, kv := range extra {
		name, _, ok := strings.Cut(kv, "=")
		if !ok || name == "" {
			continue
		}
		if i, seen := index[name]; seen {
			out[i] = kv
			continue
		}
		index[name] = len(out)
		out = append(out, kv)
	}
	return out
}

// Tools implements Executor.
func (s *Shell) Tools() []ToolDef {
	maxSeconds := int(s.cfg.MaxTimeout / time.Second)
	return []ToolDef{{
		Name: "execute_command", Group: GroupShell, Mutating: true, WorkspaceWide: true,
		Description: "Run a shell command (sh -c) in the workspace, sandboxed: it can change files in the workspace only, " +
			"has no network unless the policy allows it, and is killed with everything it started when it ends or times out. " +
			"Returns its combined stdout and stderr (long output keeps the head and the tail) and a last line with the exit status.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{` +
			`"command":{"type":"string","description":"the shell command line"},` +
			`"cwd":{"type":"string","description":"directory to run in, relative to the workspace; default the workspace root"},` +
			`"timeout_seconds":{"type":"integer","minimum":1,"maximum":` + strconv.Itoa(maxSeconds) + `,"description":"kill the command after this many seconds; default ` +
			strconv.Itoa(int(s.cfg.Timeout/time.Second)) + `"}},"required":["command"],"additionalProperties":false}`),
	}}
}

type shellArgs struct {
	Command        string `json:"command"`
	Cwd            string `json:"cwd"`
	TimeoutSeconds *int64 `json:"timeout_seconds"`
}

// Execute implements Executor.
func (s *Shell) Execute(ctx context.Context, c Call) Result {
	if c.Tool != "execute_command" {
		return Errorf("shell executor has no tool %q", c.Tool)
	}
	var a shellArgs
	if err := decodeArgs(c.Args, &a); err != nil {
		return Errorf("execute_command: %v", err)
	}
	switch {
	case strings.TrimSpace(a.Command) == "":
		return Errorf("execute_command: command must not be empty")
	case len(a.Command) > MaxCommandBytes:
		return Errorf("execute_command: the command is %d bytes, over the %d byte limit", len(a.Command), MaxCommandBytes)
	case strings.IndexByte(a.Command, 0) >= 0:
		return Errorf("execute_command: the command contains a NUL byte")
	}
	timeout := s.cfg.Timeout
	if a.TimeoutSeconds != nil {
		if *a.TimeoutSeconds < 1 {
			return Errorf("execute_command: timeout_seconds must be at least 1")
		}
		timeout = min(time.Duration(min(*a.TimeoutSeconds, 1<<31))*time.Second, s.cfg.MaxTimeout)
	}
	dir, err := resolveDir(s.ws, c.Judged(a.Cwd))
	if err != nil {
		return Errorf("execute_command: cwd: %v", err)
	}
	r := runSandboxed(ctx, s.cfg.Launcher, []string{"/bin/sh", "-c", a.Command}, dir, s.env, timeout, s.cfg.OutputCap)
	if r.failed != "" {
		// It did not run: no exit status, a failure of the tool.
		return Result{Content: "execute_command: " + r.failed, IsError: true}
	}
	content := r.output
	if content != "" && !strings.HasSuffix(content, "\n") {
		content += "\n"
	}
	content += "[" + r.status + "]"
	return Result{Content: content, IsError: r.exitCode != 0, Truncated: r.truncated, ExitCode: r.exitCode}
}

// resolveDir returns the absolute path of the workspace directory rel
// ("" or "." is the root), as the kernel resolved it beneath the root
// (openat2 RESOLVE_BENEATH), so "..", absolute paths and symlinks that
// lead out are refused rather than followed.
func resolveDir(ws *Workspace, rel string) (string, error) {
	if rel == "" {
		rel = "."
	}
	root, err := realDir(ws, ".")
	if err != nil {
		return "", err
	}
	dir, err := realDir(ws, rel)
	if err != nil {
		return "", err
	}
	if dir != root && !strings.HasPrefix(dir, strings.TrimSuffix(root, "/")+"/") {
		// Cannot happen after RESOLVE_BENEATH; checked because the
		// path given to the child must be the one that was checked.
		return "", fmt.Errorf("%s: resolves outside the workspace", rel)
	}
	return dir, nil
}

// realDir opens rel beneath the workspace as a directory, following no
// symlink (rel is the directory as Shield judged it: Call.Judged), and
// returns the path the kernel reports for it.
func realDir(ws *Workspace, rel string) (string, error) {
	f, err := ws.Strict().Open(rel, unix.O_RDONLY|unix.O_DIRECTORY, 0)
	if err != nil {
		return "", err
	}
	defer f.Close()
	p, err := os.Readlink("/proc/self/fd/" + strconv.Itoa(int(f.Fd())))
	if err != nil {
		return "", fmt.Errorf("%s: %w", rel, err)
	}
	return p, nil
}

// runResult is what a sandboxed process did.
type runResult struct {
	output    string // capped, valid UTF-8
	truncated bool
	exitCode  int    // -1 when killed
	status    string // "exit status 2", "killed: timed out after 2m0s", ...
	failed    string // set when the command did not run at all, and why
}

// runSandboxed runs argv through the launcher (see runProcess) and tells
// a launcher that refused to run the command (the sandbox could not be
// applied: fail closed) from the command's own failure.
func runSandboxed(ctx context.Context, launcher, argv []string, dir string, env []string, timeout time.Duration, outputCap int) runResult {
	if len(launcher) == 0 {
		return runResult{exitCode: -1, failed: "no command sandbox is configured, so no command can run"}
	}
	full := append(append(append([]string(nil), launcher...), "--"), argv...)
	r := runProcess(ctx, full, dir, env, timeout, outputCap)
	if r.failed == "" && r.exitCode != 0 && strings.HasPrefix(r.output, "opx: "+sandbox.CommandErrorPrefix) {
		r.failed = "the command did not run: " + strings.TrimSpace(r.output)
	}
	return r
}

// capBuffer keeps the first and the last bytes written to it, up to a
// cap, and counts the rest.
type capBuffer struct {
	cap   int
	head  []byte
	tail  []byte // the last bytes seen after head filled, at most 2*tailCap
	total int64
}

func newCapBuffer(limit int) *capBuffer { return &capBuffer{cap: max(limit, 2)} }

func (b *capBuffer) headCap() int { return b.cap / 2 }
func (b *capBuffer) tailCap() int { return b.cap - b.cap/2 }

func (b *capBuffer) Write(p []byte) (int, error) {
	b.total += int64(len(p))
	n := len(p)
	if room := b.headCap() - len(b.head); room > 0 {
		k := min(room, len(p))
		b.head = append(b.head, p[:k]...)
		p = p[k:]
	}
	b.tail = append(b.tail, p...)
	if t := b.tailCap(); len(b.tail) > 2*t {
		b.tail = append(b.tail[:0:0], b.tail[len(b.tail)-t:]...)
	}
	return n, nil
}

// Result returns what was kept: everything if it fits the cap, else the
// head, a line saying how many bytes were left out, and the tail, cut at
// character boundaries. Invalid UTF-8 becomes U+FFFD, so the result is
// the same however it is stored.
func (b *capBuffer) Result() (string, bool) {
	if b.total <= int64(b.cap) {
		return strings.ToValidUTF8(string(b.head)+string(b.tail), "\uFFFD"), false
	}
	head := b.head
	tail := b.tail[len(b.tail)-min(len(b.tail), b.tailCap()):]
	// Do not split a character: drop an incomplete one at the end of the
	// head and continuation bytes at the start of the tail.
	for i := 1; i <= utf8.UTFMax && i <= len(head); i++ {
		if r := head[len(head)-i]; utf8.RuneStart(r) {
			if !utf8.FullRune(head[len(head)-i:]) {
				head = head[:len(head)-i]
			}
			break
		}
	}
	for i := 0; i < utf8.UTFMax && len(tail) > 0 && !utf8.RuneStart(tail[0]); i++ {
		tail = tail[1:]
	}
	omitted := b.total - int64(len(head)) - int64(len(tail))
	var sb strings.Builder
	sb.Write(head)
	if len(head) > 0 && head[len(head)-1] != '\n' {
		sb.WriteByte('\n')
	}
	fmt.Fprintf(&sb, "[... %d bytes omitted ...]\n", omitted)
	sb.Write(tail)
	return strings.ToValidUTF8(sb.String(), "\uFFFD"), true
}
