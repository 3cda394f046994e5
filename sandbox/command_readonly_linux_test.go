package sandbox_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"syscall"
	"testing"

	"github.com/opx-dev/opx/sandbox"
	"golang.org/x/sys/unix"
)

// A read-only workspace (CommandPolicy.WorkspaceReadOnly, the sandbox of
// an MCP server that is not writable) is tested like the rest of the
// command sandbox: the test binary is the launcher, then the probe, which
// tries every way of changing the workspace and reports each errno.

const cmdProbeROArg = "-opx-command-probe-ro"

func init() {
	if len(os.Args) >= 3 && os.Args[1] == cmdProbeROArg {
		syscall.Exit(readOnlyProbe(os.Args[2]))
	}
}

func readOnlyProbe(cfgJSON string) int {
	var c probeConfig
	if err := json.Unmarshal([]byte(cfgJSON), &c); err != nil {
		fmt.Fprintln(os.Stderr, "probe config:", err)
		return 3
	}
	res := map[string]string{}
	try := func(name string, err error) { res[name] = outcome(err) }
	ws := func(p string) string { return filepath.Join(c.Workspace, p) }
	rw := func(p string) string { return filepath.Join(c.Writable, p) }

	// Reading and running what is there.
	try("ws_read", func() error { _, err := os.ReadFile(ws("existing.txt")); return err }())
	try("ws_list", func() error { _, err := os.ReadDir(ws("sub")); return err }())
	try("ws_exec", exec.Command(ws("tool.sh")).Run())
	try("ws_cwd_read", func() error { _, err := os.ReadFile("existing.txt"); return err }())

	// Changing it, every way.
	try("ws_open_write", func() error {
		f, err := os.OpenFile(ws("existing.txt"), os.O_WRONLY, 0)
		if err == nil {
			f.Close()
		}
		return err
	}())
	try("ws_append", func() error {
		f, err := os.OpenFile(ws("existing.txt"), os.O_WRONLY|os.O_APPEND, 0)
		if err == nil {
			f.Close()
		}
		return err
	}())
	try("ws_truncate", os.Truncate(ws("existing.txt"), 0))
	// O_TRUNC with O_RDONLY truncates on Linux with no right to write.
	try("ws_open_rdonly_trunc", func() error {
		fd, err := unix.Open(ws("existing.txt"), unix.O_RDONLY|unix.O_TRUNC, 0)
		if err == nil {
			unix.Close(fd)
		}
		return err
	}())
	try("ws_create", os.WriteFile(ws("new.txt"), []byte("x"), 0o644))
	try("ws_create_in_sub", os.WriteFile(ws("sub/new.txt"), []byte("x"), 0o644))
	try("ws_mkdir", os.Mkdir(ws("dir"), 0o755))
	try("ws_remove", os.Remove(ws("existing.txt")))
	try("ws_rmdir", os.Remove(ws("sub/empty")))
	try("ws_rename", os.Rename(ws("existing.txt"), ws("renamed.txt")))
	try("ws_rename_out", os.Rename(ws("existing.txt"), rw("stolen.txt")))
	try("ws_rename_in", func() error {
		if err := os.WriteFile(rw("planted.txt"), []byte("x"), 0o644); err != nil {
			return fmt.Errorf("setup: %v", err)
		}
		return os.Rename(rw("planted.txt"), ws("planted.txt"))
	}())
	try("ws_link_in", os.Link(rw("planted.txt"), ws("linked.txt")))
	try("ws_symlink", os.Symlink("existing.txt", ws("link")))
	try("ws_mkfifo", unix.Mkfifo(ws("fifo"), 0o644))
	try("ws_mknod_sock", unix.Mknod(ws("sock"), unix.S_IFSOCK|0o644, 0))
	// Landlock does not govern metadata: a mode change is possible
	// (documented on CommandPolicy.WorkspaceReadOnly).
	try("ws_chmod", os.Chmod(ws("existing.txt"), 0o640))

	// The writable directories stay writable.
	try("writable_create", os.WriteFile(rw("cache"), []byte("x"), 0o644))
	json.NewEncoder(os.Stdout).Encode(res)
	return 0
}

// TestExecSandboxed_WorkspaceReadOnly checks every errno of a read-only
// workspace on the real kernel, and that nothing in it changed.
func TestExecSandboxed_WorkspaceReadOnly(t *testing.T) {
	needCommandSandbox(t)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	c, _ := plantCommand(t)
	if err := os.MkdirAll(filepath.Join(c.Workspace, "sub", "empty"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(c.Workspace, "tool.sh"), []byte("#!/bin/sh\nexit 0\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	before := snapshotTree(t, c.Workspace)
	p := sandbox.CommandPolicy{Workspace: c.Workspace, WorkspaceReadOnly: true, Writable: []string{c.Writable},
		ReadOnly: []string{filepath.Dir(exe)}}
	if got := p.Args(); !strings.Contains(strings.Join(got, " "), "--workspace-read-only") {
		t.Fatalf("args %q", got)
	}

	cfg, _ := json.Marshal(c)
	defer sandbox.PinCommandPaths()()
	cmd := exec.Command(exe, append(append([]string{cmdLaunchArg}, p.Args()...), "--", exe, cmdProbeROArg, string(cfg))...)
	cmd.Env = []string{"PATH=/usr/bin:/bin"}
	cmd.Dir = c.Workspace
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if abi := sandbox.New().Probe().LandlockABI; abi < 3 {
		// Landlock handles truncation from ABI 3; below it, a read-only
		// workspace would not be one, so the launcher refuses to start.
		if err == nil || !strings.Contains(stderr.String(), "cannot refuse truncating") {
			t.Fatalf("Landlock ABI %d: a read-only workspace started (%v, %q)", abi, err, stderr.String())
		}
		if after := snapshotTree(t, c.Workspace); !reflect.DeepEqual(before, after) {
			t.Errorf("the workspace changed:\nbefore %v\nafter  %v", before, after)
		}
		return
	}
	if err != nil {
		t.Fatalf("probe: %v\n%s", err, stderr.String())
	}
	var got map[string]string
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("probe said %q: %v", out, err)
	}
	want := map[string]string{
		"ws_read": "ok", "ws_list": "ok", "ws_exec": "ok", "ws_cwd_read": "ok",
		"ws_open_write": "EACCES", "ws_append": "EACCES", "ws_truncate": "EACCES",
		"ws_open_rdonly_trunc": "EACCES", "ws_create": "EACCES",
		"ws_create_in_sub": "EACCES", "ws_mkdir": "EACCES", "ws_remove": "EACCES", "ws_rmdir": "EACCES",
		"ws_rename": "EACCES", "ws_rename_in": "EACCES", "ws_symlink": "EACCES", "ws_mkfifo": "EACCES",
		"ws_mknod_sock": "EACCES", "ws_chmod": "ok", "writable_create": "ok",
		"ws_rename_out": "EACCES", "ws_link_in": "EACCES",
	}
	for name, w := range want {
		if got[name] != w {
			t.Errorf("%s: %s, want %s", name, got[name], w)
		}
	}
	for name := range got {
		if _, ok := want[name]; !ok {
			t.Errorf("unchecked probe %s: %s", name, got[name])
		}
	}
	// Nothing in the workspace changed but the one mode.
	after := snapshotTree(t, c.Workspace)
	after["existing.txt"] = strings.Replace(after["existing.txt"], "-rw-r-----", "-rw-r--r--", 1)
	if !reflect.DeepEqual(before, after) {
		t.Errorf("the workspace changed:\nbefore %v\nafter  %v", before, after)
	}
}

// snapshotTree maps each path beneath root to its mode and content.
func snapshotTree(t *testing.T, root string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.Walk(root, func(p string, info os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		v := info.Mode().String()
		if info.Mode().IsRegular() {
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			v += " " + string(b)
		}
		out[rel] = v
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestCommandPolicyUnavailable: the sandbox refuses, before restricting
// anything, a policy the kernel cannot enforce, for kernels this machine
// is not. A read-only workspace needs Landlock ABI 3 (truncation), with
// or without the network.
func TestCommandPolicyUnavailable(t *testing.T) {
	caps := func(abi int) sandbox.Capabilities {
		return sandbox.Capabilities{LandlockABI: abi, Filesystem: abi >= 1, Network: abi >= 4, Scoping: abi >= 6, Seccomp: true}
	}
	ro := sandbox.CommandPolicy{Workspace: "/ws", WorkspaceReadOnly: true}
	roNet := sandbox.CommandPolicy{Workspace: "/ws", WorkspaceReadOnly: true, AllowNetwork: true}
	rwNet := sandbox.CommandPolicy{Workspace: "/ws", AllowNetwork: true}
	rw := sandbox.CommandPolicy{Workspace: "/ws"}
	for _, tc := range []struct {
		name string
		p    sandbox.CommandPolicy
		abi  int
		want string // "" = allowed
	}{
		{"no landlock", rwNet, 0, "unavailable"},
		{"rw net abi1", rwNet, 1, ""},
		{"rw no net abi3", rw, 3, "cannot restrict TCP"},
		{"rw no net abi4", rw, 4, ""},
		{"ro net abi1", roNet, 1, "cannot refuse truncating"},
		{"ro net abi2", roNet, 2, "cannot refuse truncating"},
		{"ro net abi3", roNet, 3, ""},
		{"ro no net abi3", ro, 3, "cannot restrict TCP"},
		{"ro no net abi4", ro, 4, ""},
		{"ro no net abi7", ro, 7, ""},
	} {
		err := sandbox.CommandPolicyUnavailable(tc.p, caps(tc.abi))
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: refused: %v", tc.name, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%s: %v, want an error with %q", tc.name, err, tc.want)
		case err != nil && !errors.Is(err, sandbox.ErrUnavailable):
			t.Errorf("%s: %v is not ErrUnavailable", tc.name, err)
		}
	}
}
