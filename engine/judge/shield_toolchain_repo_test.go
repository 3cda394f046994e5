package judge_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/opx-dev/opx/engine"
	"github.com/opx-dev/opx/engine/judge"
	"github.com/opx-dev/opx/shield"
)

const acmeRemote = "[core]\n\tbare = false\n[remote \"origin\"]\n\turl = git@github.com:acme/app.git\n\tfetch = +refs/heads/*:refs/remotes/origin/*\n"

func commandProposal(t *testing.T, line string) judge.Proposal {
	t.Helper()
	b, _ := json.Marshal(map[string]string{"command": line})
	return proposal(t, "execute_command", string(b))
}

// TestToolchain_OwnRepo (rules 26): the repository a --repo names is
// looked up in the workspace's .git/config and recorded; the verdict
// follows the record: the workspace's own repository is allowed,
// another one, or the same line in a workspace whose remotes name
// another, asked.
func TestToolchain_OwnRepo(t *testing.T) {
	e, _ := manifestEvaluator(t, map[string]string{".git/config": acmeRemote, "justfile": "test:\n    go test ./...\n"})
	own := commandProposal(t, "gh issue comment 1 --repo acme/app --body x")
	want := []string{"repo:github.com/acme/*=.git/config", "repo:github.com/acme/app=.git/config"}
	if got := e.Toolchain(own); !slices.Equal(got, want) {
		t.Fatalf("observed %q, want %q", got, want)
	}
	if got := e.Toolchain(commandProposal(t, "gh issue comment 1 --repo evil/app --body x")); got != nil {
		t.Errorf("another repository observed: %q", got)
	}
	// A program at a path like the key is not the repository.
	if got := e.Toolchain(commandProposal(t, "repo:github.com/acme/app build")); got != nil {
		t.Errorf("a program named like a key: %q", got)
	}
	if final := engine.Decide(e.Evaluate(context.Background(), own)); final.Decision != "escalate" {
		t.Errorf("unobserved: %+v, want asked", final)
	}
	own.Observe(e.Observe(own))
	if final := engine.Decide(e.Evaluate(context.Background(), own)); final.Decision != "allow" {
		t.Errorf("observed: %+v, want allowed", final)
	}
	evil := commandProposal(t, "gh issue comment 1 --repo evil/app --body x")
	evil.Observe(e.Observe(evil))
	if final := engine.Decide(e.Evaluate(context.Background(), evil)); final.Decision == "allow" {
		t.Errorf("another repository: %+v, want asked", final)
	}
}

// TestToolchain_OwnRepoNotDeclared: only .git/config declares: not a
// link to a file that names the repository, not a .git that is a file
// (a worktree's gitdir: outside the workspace), not a package.json.
func TestToolchain_OwnRepoNotDeclared(t *testing.T) {
	line := "gh issue comment 1 --repo acme/app --body x"
	e, ws := manifestEvaluator(t, map[string]string{"remotes.conf": acmeRemote, ".git/HEAD": "ref: refs/heads/main\n",
		"package.json": `{"repository": "github:acme/app", "scripts": {"x": "gh issue comment 1 --repo acme/app"}}`})
	if err := os.Symlink("../remotes.conf", filepath.Join(ws, ".git/config")); err != nil {
		t.Fatal(err)
	}
	if got := e.Toolchain(commandProposal(t, line)); got != nil {
		t.Errorf("a linked .git/config: %q", got)
	}
	e, ws = manifestEvaluator(t, map[string]string{"wt/config": acmeRemote})
	if err := os.WriteFile(filepath.Join(ws, ".git"), []byte("gitdir: "+filepath.Join(ws, "wt")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := e.Toolchain(commandProposal(t, line)); got != nil {
		t.Errorf("a .git file followed: %q", got)
	}
}

// TestToolchain_OwnRepoHugeConfig: a .git/config of a gigabyte (a
// sparse file of NULs after its remote) is read to the bound: the walk
// returns at once, allocates little, and still finds the remote.
func TestToolchain_OwnRepoHugeConfig(t *testing.T) {
	e, ws := manifestEvaluator(t, map[string]string{".git/config": acmeRemote})
	if err := os.Truncate(filepath.Join(ws, ".git/config"), 1<<30); err != nil {
		t.Fatal(err)
	}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	start := time.Now()
	got := e.Toolchain(commandProposal(t, "gh issue comment 1 --repo acme/app --body x"))
	took := time.Since(start)
	runtime.ReadMemStats(&after)
	if !slices.Contains(got, "repo:github.com/acme/app=.git/config") {
		t.Errorf("observed %q", got)
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 16<<20 {
		t.Errorf("allocated %d bytes for a 1 GiB .git/config (bound %d)", alloc, shield.MaxToolchainFileBytes)
	}
	if took > 5*time.Second {
		t.Errorf("took %v", took)
	}
}

// TestToolchain_OwnRepoCache: with a cache, a remote added to
// .git/config is seen once a proposal that writes it (or changes the
// remotes) is carried out; before, the walk's result stands.
func TestToolchain_OwnRepoCache(t *testing.T) {
	defer judge.SetRacyWindow(-time.Hour)()
	e, ws := manifestEvaluator(t, map[string]string{".git/config": acmeRemote})
	e.Declared = judge.NewDeclarations()
	up := commandProposal(t, "gh issue comment 1 --repo upstream-org/app --body x")
	if got := e.Toolchain(up); got != nil {
		t.Fatalf("undeclared: %q", got)
	}
	onDisk := func(content string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(ws, ".git/config"), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	withUp := acmeRemote + "[remote \"upstream\"]\n\turl = https://github.com/upstream-org/app.git\n"
	onDisk(withUp)
	if got := e.Toolchain(up); got != nil {
		t.Fatalf("cached: %q, want the walk's result kept until a change is proposed", got)
	}
	b, _ := json.Marshal(map[string]string{"path": ".git/config", "content": withUp})
	e.Observe(proposal(t, "write_file", string(b)))
	if got := e.Toolchain(up); !slices.Contains(got, "repo:github.com/upstream-org/app=.git/config") {
		t.Fatalf("after .git/config written: %q", got)
	}
	// A remote added by git (the facts do not name .git/config).
	other := commandProposal(t, "gh issue comment 1 --repo other-org/app --body x")
	e.Observe(commandProposal(t, "git remote add other https://github.com/other-org/app.git"))
	onDisk(withUp + "[remote \"other\"]\n\turl = https://github.com/other-org/app.git\n")
	if got := e.Toolchain(other); !slices.Contains(got, "repo:github.com/other-org/app=.git/config") {
		t.Fatalf("after git remote add: %q", got)
	}
}
