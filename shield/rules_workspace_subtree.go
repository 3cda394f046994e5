package shield

import (
	"path"
	"strings"
)

// Destruction by subtree and of secret stores (rules 11, issue 27 pass
// 8). A project's source is not only its top-level trees: an app's
// directory two levels down (mobile/ios/App, services/billing/src) is as
// much the project, and a repository's encrypted secrets (a vault file,
// credentials.yml.enc, a signing keystore) exist nowhere else.

// regenDirs are directories, at any depth, whose content a tool
// regenerates (beside buildDirs): dependency checkouts and IDE state.
var regenDirs = map[string]bool{"Pods": true, "DerivedData": true, ".dart_tool": true, ".build": true, "generated": true, "gen": true,
	"__generated__": true, "xcuserdata": true, "logs": true, "log": true, "output": true, "outputs": true, "artifacts": true, "reports": true,
	"test-results": true, "playwright-report": true, ".pnpm-store": true, "Carthage": true, ".idea": true, ".vs": true, ".pub-cache": true,
	".cxx": true, ".externalNativeBuild": true, "cache": true, "caches": true, "temp": true, ".temp": true, ".sass-cache": true, "deps": true,
	".elixir_ls": true, ".stack-work": true, "dist-newstyle": true, "zig-cache": true, "zig-out": true, "cmake-build-debug": true, "cmake-build-release": true}

// scratchPath reports whether a workspace path lies in, or is, a
// directory a tool regenerates (buildDirs, regenDirs) or scratch by its
// name (tmp-*, *.tmp, *-cache).
func (s *Shield) scratchPath(p string) bool {
	if s.buildOutput(p) {
		return true
	}
	rel := strings.TrimPrefix(strings.TrimPrefix(p, s.cfg.Workspace), "/")
	for _, seg := range strings.Split(rel, "/") {
		l := strings.ToLower(seg)
		if regenDirs[seg] || regenDirs[l] || buildDirs[l] || strings.HasPrefix(l, "tmp") || strings.HasSuffix(l, "-cache") || strings.HasSuffix(l, "_cache") || strings.HasSuffix(l, ".tmp") {
			return true
		}
	}
	return false
}

// secretStoreFile reports whether a file's name says it is a store of
// secrets a repository keeps (encrypted or key material), whose deletion
// loses them: credentials.yml.enc, master.key, vault.yml, *.sops.yaml,
// *.jks, *.keystore, *.p12, *.p8, *.mobileprovision, keystore.properties.
func secretStoreFile(base string) bool {
	l := strings.ToLower(base)
	switch path.Ext(l) {
	case ".enc", ".jks", ".keystore", ".p12", ".pfx", ".p8", ".mobileprovision", ".gpg", ".age", ".kdbx":
		return true
	}
	switch {
	case l == "master.key" || l == "keystore.properties" || l == "key.properties" || l == "secrets.ejson" || l == ".env.vault":
		return true
	case strings.Contains(l, ".sops.") || strings.HasPrefix(l, "vault.") || strings.HasSuffix(l, "_vault.yml") || strings.HasSuffix(l, "-vault.yml") || strings.HasSuffix(l, ".vault.yml"):
		return true
	}
	return false
}

// subRoots are directory names that hold a (sub-)project's source or
// build settings wherever they lie: packages/api/src, mobile/ios/Config.
var subRoots = map[string]bool{"src": true, "source": true, "sources": true, "Sources": true, "lib": true, "app": true, "App": true,
	"config": true, "Config": true, "ios": true, "android": true, "macos": true, "windows": true, "linux": true, "web": true, "server": true,
	"client": true, "cmd": true, "pkg": true, "internal": true, "main": true, "java": true, "kotlin": true, "res": true,
	"deploy": true, "infra": true, "terraform": true, "charts": true, "roles": true, "playbooks": true}

// assetRoots are directories that hold a (sub-)project's content or
// code by their name in more ecosystems (rules 12, k27h): a game
// engine's Assets, Content and Source, a web app's packages, apps,
// components and routes, Elixir's priv, a schema's migrations.
var assetRoots = map[string]bool{"assets": true, "Assets": true, "Content": true, "Source": true, "packages": true, "apps": true,
	"services": true, "components": true, "routes": true, "pages": true, "priv": true, "migrations": true, "proto": true, "protos": true}

// subtreeDestruction is workspaceDestruction's judgement of a secret
// store deleted (escalate): a repository's encrypted secrets or signing
// keys. It reports whether it spoke.
func (s *Shield) subtreeDestruction(r *Ref, j *judgement) bool {
	if !r.Glob && secretStoreFile(path.Base(r.Path)) {
		j.escalate("destructive:secret-store", "%s deletes %s, a store of the project's secrets or signing keys that exists nowhere else in the repository", by(r), r.Path)
		return true
	}
	return false
}

// treesDestruction is workspaceDestruction's judgement of trees below the
// top level (escalate): a directory named as a (sub-)project's source or
// settings root deleted whole at any depth (mobile/ios/App, packages/api/
// src), or several of the project's trees deleted by one call. One
// package removed in a refactor (rm -rf internal/oldpkg) and build
// outputs or scratch stay allowed. It reports whether it spoke.
func (s *Shield) treesDestruction(f *Facts, j *judgement) bool {
	ws := s.cfg.Workspace
	var trees []*Ref
	for i := range f.Deletes {
		r := &f.Deletes[i]
		if !r.Tree || r.Glob || !within(r.Path, ws) || path.Dir(r.Path) == ws || r.Path == ws || r.By == "mv" || r.By == "move_file" || r.By == "git" || r.By == "rsync" || s.scratchPath(r.Path) {
			continue
		}
		if b := path.Base(r.Path); subRoots[b] || assetRoots[b] || assetRoots[strings.ToLower(b)] {
			// rules 16: by name whatever its case (.NET's Migrations, Assets)
			j.escalate("destructive:workspace-tree", "%s deletes %s, the source or settings root of a part of the project", by(r), r.Path)
			return true
		}
		trees = append(trees, r)
	}
	if len(trees) >= 2 {
		j.escalate("destructive:workspace-tree", "%s deletes %d trees of the project at once (%s, %s...)", by(trees[0]), len(trees), trees[0].Path, trees[1].Path)
		return true
	}
	return false
}
