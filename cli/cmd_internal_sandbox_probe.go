package cli

import (
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"

	"github.com/opx-dev/opx/sandbox"
	"github.com/urfave/cli/v2"
)

// internalSandboxProbeCommand is the child of `opx sandbox probe` and
// `opx doctor`: it applies the agent's sandbox to itself, runs the canary
// probes and prints the result as JSON.
func internalSandboxProbeCommand() *cli.Command {
	return &cli.Command{
		Name:   "internal-sandbox-probe",
		Usage:  "apply the agent's sandbox and print the canary result (run by opx sandbox probe)",
		Hidden: true,
		Flags: append([]cli.Flag{
			&cli.IntFlag{Name: "port", Usage: "the one TCP `PORT` to allow, as the engine's", Required: true},
		}, canaryFlags()...),
		Action: func(c *cli.Context) error {
			r := sandboxSelf(uint16(c.Int("port")), canaryTargets(c))
			return json.NewEncoder(c.App.Writer).Encode(r)
		},
	}
}

// liveCanary plants canary targets, runs a child that applies the agent's
// sandbox exactly as the agent does, and returns the child's result.
func liveCanary() (sandbox.CanaryResult, error) {
	var r sandbox.CanaryResult
	dir, err := os.MkdirTemp("", "opx-canary-")
	if err != nil {
		return r, err
	}
	defer os.RemoveAll(dir)
	file := filepath.Join(dir, "canary.txt")
	if err := os.WriteFile(file, []byte("opx canary\n"), 0o644); err != nil {
		return r, err
	}
	listen := func() (net.Listener, error) {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
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
		return l, nil
	}
	allowed, err := listen()
	if err != nil {
		return r, err
	}
	defer allowed.Close()
	denied, err := listen()
	if err != nil {
		return r, err
	}
	defer denied.Close()
	self, err := os.Executable()
	if err != nil {
		return r, err
	}
	cmd := exec.Command(self, "internal-sandbox-probe", "--port", strconv.Itoa(allowed.Addr().(*net.TCPAddr).Port),
		"--canary-file", file, "--canary-dir", dir, "--canary-addr", denied.Addr().String())
	cmd.Env = []string{}
	out, err := cmd.Output()
	if err != nil {
		return r, fmt.Errorf("sandbox probe child: %w", err)
	}
	if err := json.Unmarshal(out, &r); err != nil {
		return r, fmt.Errorf("sandbox probe child said %q: %w", out, err)
	}
	return r, nil
}
