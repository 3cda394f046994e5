package judge_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/opx-dev/opx/engine"
	"github.com/opx-dev/opx/engine/judge"
)

// TestToolchain_Observed: the programs a command runs that the workspace
// declares, as observed with the proposal (and recorded): a tool its
// justfile runs, one a manifest names, a linter named by a variable its
// script runs, a script of its own run by its path; nothing for a tool
// only vendored code names, or a script that is not there. The verdict
// follows the record: the same line without it is asked.
func TestToolchain_Observed(t *testing.T) {
	e, _ := manifestEvaluator(t, map[string]string{
		"services/api/justfile":        "test:\n    go test ./...\n    sqlc vet\n",
		"services/api/buf.yaml":        "version: v2\n",
		"services/api/scripts/lint.sh": "#!/bin/sh\n\"$GOLANGCI_LINT\" run ./...\n",
		"vendor/x/Makefile":            "all:\n\tevil-tool build\n",
		"node_modules/y/package.json":  `{"scripts": {"x": "evil-tool run"}}`,
	})
	cmd := func(line string) judge.Proposal {
		b, _ := json.Marshal(map[string]string{"command": line})
		return proposal(t, "execute_command", string(b))
	}
	for _, c := range []struct {
		line string
		want []string
	}{
		{"cd services/api && just test", []string{"just=services/api/justfile"}},
		{"sqlc vet", []string{"sqlc=services/api/justfile"}},
		{"just test", []string{"just=services/api/justfile"}},
		{`"$GOLANGCI_LINT" run ./...`, []string{"$GOLANGCI_LINT=services/api/scripts/lint.sh"}},
		{"services/api/scripts/lint.sh --fix", []string{"services/api/scripts/lint.sh=services/api/scripts/lint.sh"}},
		{"services/api/scripts/missing.sh", nil},
		{"evil-tool build", nil},
		{"ls -la", nil},
	} {
		got := e.Toolchain(cmd(c.line))
		if !slices.Equal(got, c.want) {
			t.Errorf("%s: observed %q, want %q", c.line, got, c.want)
		}
	}
	p := cmd("sqlc vet")
	if final := engine.Decide(e.Evaluate(context.Background(), p)); final.Decision != "escalate" {
		t.Errorf("sqlc vet unobserved: %+v, want asked", final)
	}
	p.Observe(e.Observe(p))
	if final := engine.Decide(e.Evaluate(context.Background(), p)); final.Decision != "allow" {
		t.Errorf("sqlc vet observed: %+v, want allowed", final)
	}
}

// TestToolchain_DeclaredCache: with a cache, the workspace is walked once
// and again after a proposal changes a declaring file.
func TestToolchain_DeclaredCache(t *testing.T) {
	e, ws := manifestEvaluator(t, map[string]string{"services/api/justfile": "test:\n    go test ./...\n"})
	e.Declared = judge.NewDeclarations()
	cmd := func(line string) judge.Proposal {
		b, _ := json.Marshal(map[string]string{"command": line})
		return proposal(t, "execute_command", string(b))
	}
	if got := e.Toolchain(cmd("sqlc vet")); got != nil {
		t.Fatalf("sqlc undeclared: %q", got)
	}
	// A declaring file written through a file tool: the cache is dropped.
	if err := os.WriteFile(filepath.Join(ws, "services/api/sqlc.yaml"), []byte("version: \"2\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := e.Toolchain(cmd("sqlc vet")); got != nil {
		t.Fatalf("cached: %q, want the walk's result kept until a change is proposed", got)
	}
	b, _ := json.Marshal(map[string]string{"path": "services/api/sqlc.yaml", "content": "version: \"2\"\n"})
	e.Observe(proposal(t, "write_file", string(b)))
	if got := e.Toolchain(cmd("sqlc vet")); !slices.Equal(got, []string{"sqlc=services/api/sqlc.yaml"}) {
		t.Fatalf("after the change: %q", got)
	}
}
