package engine_test

// The engine's tests run it with its sub-agents, as opx does.
import _ "github.com/opx-dev/opx/engine/subagent"
