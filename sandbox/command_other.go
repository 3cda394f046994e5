//go:build !linux

package sandbox

import (
	"fmt"
	"os"
)

// ExecSandboxed fails: this platform has no command sandbox yet, and a
// command never runs unconfined.
func ExecSandboxed(p CommandPolicy, argv []string, env []string) error {
	return ApplyCommandPolicy(p)
}

// RunSandboxedReaping fails as ExecSandboxed does.
func RunSandboxedReaping(p CommandPolicy, argv []string, env []string, _ *os.File) error {
	return ApplyCommandPolicy(p)
}

// ApplyCommandPolicy fails with ErrUnavailable: this platform has no
// command sandbox yet.
func ApplyCommandPolicy(p CommandPolicy) error {
	if err := p.Validate(); err != nil {
		return err
	}
	return fmt.Errorf(CommandErrorPrefix+"%w: no command sandbox on this platform", ErrUnavailable)
}

// PinCommandPaths does nothing: there is no command sandbox here.
func PinCommandPaths() (release func()) { return func() {} }

func commandSystemDirsList() []string { return nil }

func inheritedReport() *os.File { return nil }
