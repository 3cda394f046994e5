//go:build !linux

package executor

import (
	"context"
	"time"
)

// runProcess refuses: commands run only in the Linux command sandbox.
func runProcess(ctx context.Context, argv []string, dir string, env []string, timeout time.Duration, outputCap int) runResult {
	return runResult{exitCode: -1, failed: "commands need the Linux command sandbox: " + ErrUnsupported.Error()}
}
