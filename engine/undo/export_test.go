package engine

import "github.com/opx-dev/opx/chronicle"

// WrapChronicleFSForTest wraps the workspace the engine's Chronicle reads
// and writes (call it before Run), so that crash tests can stop a
// rollback made through ChronicleService part way.
func (e *Engine) WrapChronicleFSForTest(wrap func(chronicle.Workspace) chronicle.Workspace) {
	e.chron.fs = wrap(e.chron.fs)
}
