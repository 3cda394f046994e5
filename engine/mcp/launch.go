package mcp

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/opx-dev/opx/ledger/event"
	"github.com/opx-dev/opx/sandbox"
)

// defaultPath is a server's PATH unless its spec sets one.
const defaultPath = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

// prepare builds the launcher's argv, the sandbox record and the
// server's environment.
func prepare(sb Sandbox, spec Spec) (argv []string, box event.MCPSandbox, env []string, err error) {
	switch {
	case spec.Name == "" || len(spec.Argv) == 0 || spec.Argv[0] == "":
		return nil, box, nil, fmt.Errorf("%w: a name and a command are required", ErrInvalidSpec)
	case !filepath.IsAbs(spec.Workspace):
		return nil, box, nil, fmt.Errorf("%w: workspace %q is not absolute", ErrInvalidSpec, spec.Workspace)
	case sb.Self == "" || !filepath.IsAbs(sb.HomeRoot):
		return nil, box, nil, fmt.Errorf("%w: the sandbox needs the opx binary and an absolute home root", ErrInvalidSpec)
	case strings.ContainsAny(spec.Name, "/\x00") || spec.Name == "." || spec.Name == "..":
		return nil, box, nil, fmt.Errorf("%w: server name %q", ErrInvalidSpec, spec.Name)
	}
	lookup := spec.Env["PATH"]
	if lookup == "" {
		lookup = os.Getenv("PATH")
	}
	prog, err := resolveProgram(spec.Argv[0], lookup)
	if err != nil {
		return nil, box, nil, err
	}
	server := append([]string{prog}, spec.Argv[1:]...)
	userHome, _ := os.UserHomeDir()
	dirs, err := installDirs(server, lookup, userHome)
	if err != nil {
		return nil, box, nil, err
	}
	if !spec.TrustWorkspaceCode {
		if err := outsideWorkspace(filepath.Clean(spec.Workspace), server, dirs); err != nil {
			return nil, box, nil, err
		}
	}
	home := filepath.Join(sb.HomeRoot, spec.Name)
	if err := os.MkdirAll(filepath.Join(home, "tmp"), 0o700); err != nil {
		return nil, box, nil, fmt.Errorf("server home: %w", err)
	}
	readOnly := slices.Clone(dirs)
	for _, d := range spec.ReadOnly {
		if d = filepath.Clean(d); !slices.Contains(readOnly, d) {
			readOnly = append(readOnly, d)
		}
	}
	policy := sandbox.CommandPolicy{
		Workspace: filepath.Clean(spec.Workspace), WorkspaceReadOnly: !spec.Writable,
		Writable: []string{home}, ReadOnly: readOnly, AllowNetwork: spec.Network,
		// The launcher stays the server's parent and kills the whole
		// group when the engine dies (its death signal, SIGTERM): no
		// child of a server outlives the engine (review #6).
		ReapGroup: true,
	}
	if err := policy.Validate(); err != nil {
		return nil, box, nil, fmt.Errorf("%w: %v", ErrInvalidSpec, err)
	}
	argv = append(append([]string{sb.Self, "internal-sandbox-exec"}, policy.Args()...), "--")
	argv = append(argv, server...)

	vars := map[string]string{"HOME": home, "TMPDIR": filepath.Join(home, "tmp"), "LANG": "C.UTF-8", "PATH": defaultPath}
	// The program's own directory and its interpreter's, when outside
	// the system ones, so that "#!/usr/bin/env node" finds the node the
	// engine would.
	var extra []string
	for _, f := range []string{prog, interpreter(prog, lookup)} {
		if f == "" {
			continue
		}
		if real, err := filepath.EvalSymlinks(f); err == nil && !underSystem(real) && !slices.Contains(extra, filepath.Dir(f)) {
			extra = append(extra, filepath.Dir(f))
		}
	}
	if len(extra) > 0 {
		vars["PATH"] = strings.Join(extra, ":") + ":" + defaultPath
	}
	for k, v := range spec.Env {
		vars[k] = v
	}
	for _, k := range slices.Sorted(maps.Keys(vars)) {
		env = append(env, k+"="+vars[k])
	}
	box = event.MCPSandbox{Writable: spec.Writable, Network: spec.Network, ReadOnly: readOnly, Home: home}
	return argv, box, env, nil
}

// outsideWorkspace refuses a server whose code the agent could change
// (review #3): its program or an install root inside the workspace (or
// the workspace inside an install root), or an argument that names a
// file of the workspace (the server's working directory), such as
// `node server.js`.
func outsideWorkspace(ws string, argv, dirs []string) error {
	if code := workspaceCode(ws, argv, dirs); len(code) > 0 {
		return fmt.Errorf("%w: %s (set trust_workspace_code to run it anyway)", ErrWorkspaceCode, code[0].why)
	}
	return nil
}

// codeInWorkspace is one place of a server's code the agent could change.
type codeInWorkspace struct {
	path string // absolute, inside the workspace; "" when the workspace is inside it
	why  string
}

// workspaceCode finds what of a server's code (argv resolved, dirs its
// install roots) is in the workspace ws.
func workspaceCode(ws string, argv, dirs []string) []codeInWorkspace {
	real := ws
	if r, err := filepath.EvalSymlinks(ws); err == nil {
		real = r
	}
	// inside returns p as a path beneath ws, or "".
	inside := func(p string) string {
		switch {
		case within(p, ws):
			return p
		case within(p, real):
			rel, err := filepath.Rel(real, p)
			if err != nil {
				return ""
			}
			return filepath.Join(ws, rel)
		}
		return ""
	}
	var out []codeInWorkspace
	if r, err := filepath.EvalSymlinks(argv[0]); err == nil {
		if p := inside(r); p != "" {
			out = append(out, codeInWorkspace{p, fmt.Sprintf("its program %s is in the workspace", argv[0])})
		}
	}
	for _, d := range dirs {
		if p := inside(d); p != "" {
			out = append(out, codeInWorkspace{p, fmt.Sprintf("it runs from %s, which holds or is in the workspace", d)})
		} else if within(ws, d) || within(real, d) {
			out = append(out, codeInWorkspace{"", fmt.Sprintf("it runs from %s, which holds or is in the workspace", d)})
		}
	}
	for _, a := range argv[1:] {
		if a == "" || strings.HasPrefix(a, "-") || len(a) > 4096 {
			continue
		}
		p := a
		if !filepath.IsAbs(p) {
			p = filepath.Join(ws, p)
		}
		p = filepath.Clean(p)
		if !within(p, ws) && !within(p, real) || p == ws || p == real {
			continue // the workspace itself is what a server serves
		}
		if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() {
			out = append(out, codeInWorkspace{inside(p), fmt.Sprintf("its argument %q is a file of the workspace", a)})
		}
	}
	return out
}

// WorkspaceCode returns the paths, relative to the workspace (slash
// separated), of a server's code that lies in its workspace: its
// program, script arguments and install roots there. They are what a
// server with TrustWorkspaceCode runs from, which the engine protects
// from the agent's tools like its own configuration. An install root
// that holds the whole workspace cannot be protected apart from it and
// is not returned.
func WorkspaceCode(spec Spec) ([]string, error) {
	if len(spec.Argv) == 0 || !filepath.IsAbs(spec.Workspace) {
		return nil, fmt.Errorf("%w: a command and an absolute workspace are required", ErrInvalidSpec)
	}
	lookup := spec.Env["PATH"]
	if lookup == "" {
		lookup = os.Getenv("PATH")
	}
	prog, err := resolveProgram(spec.Argv[0], lookup)
	if err != nil {
		return nil, err
	}
	server := append([]string{prog}, spec.Argv[1:]...)
	userHome, _ := os.UserHomeDir()
	dirs, err := installDirs(server, lookup, userHome)
	if err != nil {
		return nil, err
	}
	ws := filepath.Clean(spec.Workspace)
	var out []string
	for _, c := range workspaceCode(ws, server, dirs) {
		if c.path == "" {
			continue
		}
		rel, err := filepath.Rel(ws, c.path)
		if err != nil || rel == "." || strings.HasPrefix(rel, "..") {
			continue
		}
		if rel = filepath.ToSlash(rel); !slices.Contains(out, rel) {
			out = append(out, rel)
		}
	}
	slices.Sort(out)
	return out, nil
}
