package undo

import "github.com/opx-dev/opx/chronicle"

// WrapFSForTest wraps the workspace c reads and writes (for the engine's
// Chronicle, call it before Run), so that crash tests can stop a rollback
// made through ChronicleService part way.
func (c *Chronicle) WrapFSForTest(wrap func(chronicle.Workspace) chronicle.Workspace) {
	c.fs = wrap(c.fs)
}
