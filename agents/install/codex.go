package install

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/opx-dev/opx/agents/codextrust"
	"github.com/opx-dev/opx/agents/hookproto"
)

// codexTimeout bounds one conversation with `codex app-server` (it
// starts in about a second).
const codexTimeout = 60 * time.Second

// trustCodex records as trusted every hook of opx's in the hooks file at
// path, as Codex lists it for the scope's workspace, and returns them.
func trustCodex(ctx context.Context, s codextrust.Server, path string, sc Scope, self string) ([]codextrust.Hook, error) {
	ctx, cancel := context.WithTimeout(ctx, codexTimeout)
	defer cancel()
	s = codexServerFor(s, sc)
	hooks, err := s.Trust(ctx, codexSelect(path, self), codexCwds(sc)...)
	switch {
	case errors.Is(err, codextrust.ErrNoHooks):
		return nil, fmt.Errorf("%w: %s was written, but %s", ErrCodexTrust, path, codexNotLoaded(path, sc))
	case err != nil:
		return nil, fmt.Errorf("%w: %s was written, but recording its hooks as trusted failed, so Codex will not run them: %w", ErrCodexTrust, path, err)
	}
	return hooks, nil
}

// codexServerFor runs the app-server in the workspace (Codex finds a
// project's configuration from its working directory).
func codexServerFor(s codextrust.Server, sc Scope) codextrust.Server {
	if !sc.IsUser() {
		s.Dir = sc.Workspace
	}
	return s
}

func codexCwds(sc Scope) []string {
	if sc.IsUser() {
		return nil
	}
	return []string{sc.Workspace}
}

// codexSelect selects opx's hooks in the hooks file at path.
func codexSelect(path, self string) func(codextrust.Hook) bool {
	return func(h codextrust.Hook) bool {
		_, ok := parseHook(h.Command, hookproto.Codex, self)
		return ok && samePath(h.SourcePath, path)
	}
}

// codexNotLoaded says why Codex does not list the hooks in path.
func codexNotLoaded(path string, sc Scope) string {
	if sc.IsUser() {
		return fmt.Sprintf("Codex does not list the hooks of %s (is its hooks feature off? see codex features list), so it will not run them", path)
	}
	cfg := "$CODEX_HOME/config.toml"
	if d, err := userDir(hookproto.Codex); err == nil {
		cfg = filepath.Join(d, "config.toml")
	}
	return fmt.Sprintf("Codex reads a project's .codex/hooks.json only in a project it trusts, and it does not trust %s: "+
		"trust it (Codex asks on its first interactive run there; or add [projects.%q] trust_level = \"trusted\" to %s) and run opx agents install codex again, "+
		"or install with --user", sc.Workspace, sc.Workspace, cfg)
}

// codexTrustStatus asks Codex how it sees opx's hooks in path: "trusted"
// when every one is, else the first other status with its event, or "not
// loaded" when Codex does not list them.
func codexTrustStatus(ctx context.Context, s codextrust.Server, path string, sc Scope, self string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, codexTimeout)
	defer cancel()
	s = codexServerFor(s, sc)
	hooks, err := s.List(ctx, codexCwds(sc)...)
	if err != nil {
		return "", err
	}
	sel := codexSelect(path, self)
	found := false
	for _, h := range hooks {
		if !sel(h) {
			continue
		}
		found = true
		if h.TrustStatus != "trusted" && h.TrustStatus != "managed" {
			return fmt.Sprintf("%s (%s)", h.TrustStatus, h.EventName), nil
		}
	}
	if !found {
		return "not loaded", nil
	}
	return "trusted", nil
}

// samePath reports whether a and b name the same file, following links.
func samePath(a, b string) bool {
	if filepath.Clean(a) == filepath.Clean(b) {
		return true
	}
	ra, err1 := filepath.EvalSymlinks(a)
	rb, err2 := filepath.EvalSymlinks(b)
	if err1 == nil && err2 == nil && ra == rb {
		return true
	}
	fa, err1 := os.Stat(a)
	fb, err2 := os.Stat(b)
	return err1 == nil && err2 == nil && os.SameFile(fa, fb)
}

// CodexServer is the codextrust.Server for the codex program at path,
// with the caller's environment (CODEX_HOME and HOME choose the
// configuration it reads and writes).
func CodexServer(path string) *codextrust.Server {
	return &codextrust.Server{Argv: []string{path}, Env: os.Environ()}
}
