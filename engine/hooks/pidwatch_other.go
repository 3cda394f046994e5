//go:build !linux

package hooks

import "errors"

// pidWatch watches nothing where there are no pidfds: calls of an agent
// that exits stay open until its session's end, hooks.tool_timeout or
// the engine's stop.
type pidWatch struct{}

func (*pidWatch) watch(int, func()) error { return errors.New("no pidfds here") }
func (*pidWatch) close()                  {}
