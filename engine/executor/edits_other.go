//go:build !linux

package executor

import "context"

// Edits is unavailable off Linux (see Workspace).
type Edits struct{}

// NewEdits returns the unavailable editing tools.
func NewEdits(ws *Workspace) *Edits { return &Edits{} }

// Tools implements Executor: none off Linux.
func (e *Edits) Tools() []ToolDef { return nil }

// Touches implements Toucher.
func (e *Edits) Touches(c Call) ([]string, error) { return nil, ErrUnsupported }

// Execute implements Executor.
func (e *Edits) Execute(ctx context.Context, c Call) Result { return Errorf("%v", ErrUnsupported) }
