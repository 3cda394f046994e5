//go:build !linux

package mcp

import (
	"errors"
	"os"
	"syscall"
)

// process is a server's process; there is none on this platform: MCP
// servers run only in the command sandbox, which is Linux's.
type process struct {
	pid                   int
	stdin, stdout, stderr *os.File
	exited                chan struct{}
}

func startProcess(argv []string, dir string, env []string) (*process, error) {
	return nil, errors.New("MCP servers run in the command sandbox, which this platform does not have")
}

func (p *process) signal(sig syscall.Signal) {}

func (p *process) signalLeader(sig syscall.Signal) {}

func (p *process) exitStatus() (int, string) { return -1, "" }
