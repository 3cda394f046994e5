package judge_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

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
		"services/api/justfile":        "test:\n    go test ./...\n    tbls doc\n",
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
		{"tbls doc", []string{"tbls=services/api/justfile"}},
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
	p := cmd("tbls doc")
	if final := engine.Decide(e.Evaluate(context.Background(), p)); final.Decision != "escalate" {
		t.Errorf("tbls doc unobserved: %+v, want asked", final)
	}
	p.Observe(e.Observe(p))
	if final := engine.Decide(e.Evaluate(context.Background(), p)); final.Decision != "allow" {
		t.Errorf("tbls doc observed: %+v, want allowed", final)
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

// TestToolchain_DeclaredCacheDirty: a proposal that names a declaring
// file costs a walk only once the file changed: proposed and not carried
// out, the cache stands (a declaration added behind its back stays
// unseen); carried out, the next lookup walks. A new declaring file
// proposed and not written costs none either; written, it does. Files
// changed too recently for their times to tell are read again (the
// window is set to nothing here: the test's files are all new).
func TestToolchain_DeclaredCacheDirty(t *testing.T) {
	defer judge.SetRacyWindow(-time.Hour)()
	e, ws := manifestEvaluator(t, map[string]string{"services/api/justfile": "test:\n    go test ./...\n", "Makefile": "all:\n\tgo build ./...\n"})
	e.Declared = judge.NewDeclarations()
	cmd := func(line string) judge.Proposal {
		b, _ := json.Marshal(map[string]string{"command": line})
		return proposal(t, "execute_command", string(b))
	}
	write := func(p, content string) judge.Proposal {
		b, _ := json.Marshal(map[string]string{"path": p, "content": content})
		return proposal(t, "write_file", string(b))
	}
	onDisk := func(p, content string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(ws, p), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if got := e.Toolchain(cmd("sqlc vet")); got != nil {
		t.Fatalf("sqlc undeclared: %q", got)
	}
	// Declared behind the cache's back (no proposal names it): unseen
	// until a walk.
	onDisk("services/api/sqlc.yaml", "version: \"2\"\n")
	// Proposed, not carried out: no walk.
	e.Observe(write("Makefile", "all:\n\tsqlc generate\n"))
	e.Observe(write("services/web/package.json", `{"scripts":{"x":"sqlc"}}`))
	if got := e.Toolchain(cmd("sqlc vet")); got != nil {
		t.Fatalf("walked again for proposals never carried out: %q", got)
	}
	// Proposed and carried out (a different size): the next lookup walks.
	e.Observe(write("Makefile", "all:\n\tgo build ./... && go vet ./...\n"))
	onDisk("Makefile", "all:\n\tgo build ./... && go vet ./...\n")
	if got := e.Toolchain(cmd("sqlc vet")); !slices.Equal(got, []string{"sqlc=services/api/sqlc.yaml"}) {
		t.Fatalf("after the change ran: %q", got)
	}
	// A new declaring file, proposed and written: walks.
	// (nearer the root than the first: the walk is breadth first)
	e.Observe(write("tools/sqlc.yaml", "version: \"2\"\n"))
	if got := e.Toolchain(cmd("sqlc vet")); !slices.Equal(got, []string{"sqlc=services/api/sqlc.yaml"}) {
		t.Fatalf("a new file proposed, not written: %q", got)
	}
	e.Observe(write("tools/sqlc.yaml", "version: \"2\"\n"))
	if err := os.MkdirAll(filepath.Join(ws, "tools"), 0o755); err != nil {
		t.Fatal(err)
	}
	onDisk("tools/sqlc.yaml", "version: \"2\"\n")
	if got := e.Toolchain(cmd("sqlc vet")); !slices.Equal(got, []string{"sqlc=tools/sqlc.yaml"}) {
		t.Fatalf("after a new declaring file: %q", got)
	}
}

// TestToolchain_DeclaredCacheRacy: a declaring file changed as recently
// as the walk is read again whenever it is proposed, its times unequal
// to the task or not (the real window: the test's files are new).
func TestToolchain_DeclaredCacheRacy(t *testing.T) {
	e, ws := manifestEvaluator(t, map[string]string{"Makefile": "all:\n\tgo build ./...\n"})
	e.Declared = judge.NewDeclarations()
	b, _ := json.Marshal(map[string]string{"command": "sqlc vet"})
	cmd := proposal(t, "execute_command", string(b))
	if got := e.Toolchain(cmd); got != nil {
		t.Fatalf("sqlc undeclared: %q", got)
	}
	if err := os.WriteFile(filepath.Join(ws, "sqlc.yaml"), []byte("version: \"2\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	w, _ := json.Marshal(map[string]string{"path": "Makefile", "content": "all:\n\tgo build ./...\n"})
	e.Observe(proposal(t, "write_file", string(w)))
	if got := e.Toolchain(cmd); !slices.Equal(got, []string{"sqlc=sqlc.yaml"}) {
		t.Fatalf("a file as recent as the walk not read again: %q", got)
	}
}

// TestToolchain_DeclaredCacheSkippedTree: a tree removed where the walk
// never looks (a real node_modules) costs no walk; the same name as a
// link to a directory the walk reads, or a tree elsewhere, does.
func TestToolchain_DeclaredCacheSkippedTree(t *testing.T) {
	e, ws := manifestEvaluator(t, map[string]string{"node_modules/x/package.json": "{}", "services/api/justfile": "test:\n    go test ./...\n"})
	if err := os.Symlink("services", filepath.Join(ws, "dist")); err != nil {
		t.Fatal(err)
	}
	e.Declared = judge.NewDeclarations()
	cmd := func(line string) judge.Proposal {
		b, _ := json.Marshal(map[string]string{"command": line})
		return proposal(t, "execute_command", string(b))
	}
	if got := e.Toolchain(cmd("sqlc vet")); got != nil {
		t.Fatalf("sqlc undeclared: %q", got)
	}
	if err := os.WriteFile(filepath.Join(ws, "services/sqlc.yaml"), []byte("version: \"2\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	e.Observe(cmd("rm -rf node_modules"))
	if got := e.Toolchain(cmd("sqlc vet")); got != nil {
		t.Fatalf("walked again for a tree the walk skips: %q", got)
	}
	e.Observe(cmd("rm -rf dist/*"))
	if got := e.Toolchain(cmd("sqlc vet")); !slices.Equal(got, []string{"sqlc=services/sqlc.yaml"}) {
		t.Fatalf("a link named like a skipped directory: %q", got)
	}
}

// TestToolchain_NamedByItsFile (rules 13): a tool's own file or
// directory declares it without a table naming it — dvc.yaml, .dvc/,
// spack.yaml, slither.config.json — and a file whose name says what it
// holds (config.yaml) declares nothing; the daily verb is then allowed
// by the default policy, the same line in a workspace without the file
// asked. A named file created later is seen once proposed.
func TestToolchain_NamedByItsFile(t *testing.T) {
	e, ws := manifestEvaluator(t, map[string]string{
		"ml/dvc.yaml":                   "stages: {}\n",
		"ml/.dvc/config":                "[core]\n",
		"hpc/spack/spack.yaml":          "spack: {}\n",
		"contracts/slither.config.json": "{}\n",
		"config.yaml":                   "a: 1\n",
	})
	e.Declared = judge.NewDeclarations()
	cmd := func(line string) judge.Proposal {
		b, _ := json.Marshal(map[string]string{"command": line})
		return proposal(t, "execute_command", string(b))
	}
	for _, c := range []struct {
		line string
		want []string
	}{
		{"cd ml && dvc status", []string{"dvc=ml/.dvc"}},
		{"spack -e hpc/spack concretize -f", []string{"spack=hpc/spack/spack.yaml"}},
		{"cd contracts && slither . --filter-paths lib", []string{"slither=contracts/slither.config.json"}},
		{"config show", nil},
		{"hardhat test", nil},
	} {
		if got := e.Toolchain(cmd(c.line)); !slices.Equal(got, c.want) {
			t.Errorf("%s: observed %q, want %q", c.line, got, c.want)
		}
	}
	p := cmd("cd ml && dvc status")
	p.Observe(e.Observe(p))
	if final := engine.Decide(e.Evaluate(context.Background(), p)); final.Decision != "allow" {
		t.Errorf("dvc status with its files: %+v, want allowed", final)
	}
	push := cmd("cd ml && dvc push")
	push.Observe(e.Observe(push))
	if final := engine.Decide(e.Evaluate(context.Background(), push)); final.Decision == "allow" {
		t.Errorf("dvc push: %+v, want asked (it leaves the machine)", final)
	}
	// hardhat.config.ts written through a file tool: seen at the next lookup.
	b, _ := json.Marshal(map[string]string{"path": "contracts/hardhat.config.ts", "content": "export default {}\n"})
	if err := os.WriteFile(filepath.Join(ws, "contracts/hardhat.config.ts"), []byte("export default {}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	e.Observe(proposal(t, "write_file", string(b)))
	if got := e.Toolchain(cmd("hardhat test")); !slices.Equal(got, []string{"hardhat=contracts/hardhat.config.ts"}) {
		t.Errorf("after hardhat.config.ts: %q", got)
	}
}
