// Package baseline is the frozen pre-issue-14 Shield: shield, then
// engine/shield (shield.go, policy.go, heuristics.go, glob.go), and the argument mapping
// of engine.ShieldEvaluator as they were at commit 2bf6772, with the
// default policy of that commit (default.yaml, embedded as DefaultPolicy).
// It is kept only as the baseline the Shield benchmarks run beside
// today's Shield in the same run (BenchmarkShieldEval); nothing else may
// use it, and it is never changed except to keep it compiling.
//
// Edits from the original: the package name, Action without Facts (added
// by issue 14's shared shapes, unused here), the evaluator's mapping as a
// method (EvaluateTool) instead of engine.ShieldEvaluator, the embedded
// policy.
package baseline

import _ "embed"

// DefaultPolicy is the default policy as it was at the baseline's commit.
//
//go:embed default.yaml
var DefaultPolicy []byte
