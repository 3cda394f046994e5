package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/opx-dev/opx/cli/internal/ui"
	"github.com/opx-dev/opx/engine/config"
)

// doctorCommands is what doctor found out about the command sandbox by
// running commands in it exactly as the engine would: whether they can
// read what only the engine's user (root, often) may.
type doctorCommands struct {
	UID    int               `json:"uid"`
	Checks []doctorPathCheck `json:"checks"`
}

type doctorPathCheck struct {
	Path     string `json:"path"`
	Readable bool   `json:"readable"`
	Detail   string `json:"detail"`
}

// commandSecrets are the paths a sandboxed command must not read, which
// exist here: the system's password hashes, the engine user's SSH keys
// and home, and opx's own state.
func commandSecrets(home, state string) []string {
	var out []string
	for _, p := range []string{"/etc/shadow", "/etc/gshadow", filepath.Join(home, ".ssh"), home, state, "/root"} {
		if _, err := os.Stat(p); err == nil && !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	return out
}

// checkCommandSandbox reads each of commandSecrets with cat (files) or ls
// (directories) through the engine's command launcher. A read that
// succeeds is a problem; so is a launcher that cannot run.
func checkCommandSandbox(ws, state string, problem func(string, ...any)) *doctorCommands {
	out := &doctorCommands{UID: os.Geteuid(), Checks: []doctorPathCheck{}}
	cfg, err := config.Load(ws)
	if err != nil {
		problem("command sandbox checked with the default configuration: %v", err)
		cfg = config.Default()
	}
	sh, err := newShield(ws, cfg, filepath.Join(state, "ledger.db"))
	if err != nil {
		problem("command sandbox not checked: %v", err)
		return out
	}
	self, err := os.Executable()
	if err != nil {
		problem("command sandbox not checked: %v", err)
		return out
	}
	shellCfg, _, err := commandTools(self, ws, sh.policy)
	if err != nil {
		problem("command sandbox not checked: %v", err)
		return out
	}
	home, _ := os.UserHomeDir()
	for _, p := range commandSecrets(home, state) {
		argv := []string{"/bin/cat", p}
		if st, err := os.Stat(p); err == nil && st.IsDir() {
			argv = []string{"/bin/ls", "-a", p}
		}
		check := doctorPathCheck{Path: p}
		full := append(append(append([]string(nil), shellCfg.Launcher...), "--"), argv...)
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		cmd := exec.CommandContext(ctx, full[0], full[1:]...)
		cmd.Dir, cmd.Env = ws, shellCfg.Env
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		err := cmd.Run()
		cancel()
		msg := strings.TrimSpace(stderr.String())
		var exit *exec.ExitError
		switch {
		case err == nil:
			check.Readable, check.Detail = true, "read by a sandboxed command"
			problem("a sandboxed command can read %s", p)
		case errors.As(err, &exit) && strings.Contains(msg, "Permission denied"):
			check.Detail = "permission denied"
		default:
			check.Detail = fmt.Sprintf("not checked: %v: %s", err, msg)
			problem("command sandbox check of %s did not run: %v: %s", p, err, msg)
		}
		out.Checks = append(out.Checks, check)
	}
	return out
}

func printDoctorCommands(w io.Writer, d *doctorCommands) {
	if d == nil {
		return
	}
	who := fmt.Sprintf("uid %d", d.UID)
	if d.UID == 0 {
		who = "uid 0 (root) without any capability"
	}
	var denied, readable []string
	for _, c := range d.Checks {
		if c.Readable {
			readable = append(readable, c.Path)
		} else if c.Detail == "permission denied" {
			denied = append(denied, c.Path)
		}
	}
	fmt.Fprintf(w, "commands  run as %s; tried to read %s: %s\n", who, strings.Join(denied, ", "), ui.Green(w, "denied"))
	if len(readable) > 0 {
		fmt.Fprintf(w, "          %s %s\n", ui.Red(w, "readable:"), strings.Join(readable, ", "))
	}
}
