package shield

import (
	"github.com/opx-dev/opx/shield/manifest"
	"path"
	"strings"
)

// Destruction inside the workspace. Chronicle can roll back what a
// command deletes there, so single deletes pass (agents refactor: `rm
// src/old.go`, delete_file of a test). What is asked about is what a
// benign task almost never does and an attack does to hurt: removing
// or emptying the files that make the repository a project (manifests,
// lockfiles, git's internals), a whole source tree at once, or emptying
// files in place. Build outputs and caches are what cleaning is for.

// keyFiles are manifests and lockfiles, by base name.
var keyFiles = map[string]bool{"go.mod": true, "go.sum": true, "go.work": true, "go.work.sum": true, "package.json": true,
	"package-lock.json": true, "npm-shrinkwrap.json": true, "yarn.lock": true, "pnpm-lock.yaml": true, "pnpm-workspace.yaml": true,
	"bun.lockb": true, "bun.lock": true, "Cargo.toml": true, "Cargo.lock": true, "pyproject.toml": true, "poetry.lock": true,
	"uv.lock": true, "Pipfile": true, "Pipfile.lock": true, "Gemfile": true, "Gemfile.lock": true, "setup.py": true, "setup.cfg": true,
	"composer.json": true, "composer.lock": true, "pom.xml": true, "build.gradle": true, "build.gradle.kts": true, "settings.gradle": true,
	"mix.exs": true, "mix.lock": true, "Package.swift": true, "Package.resolved": true, "pdm.lock": true, "deno.json": true, "deno.lock": true,
	"cpanfile": true, "cpanfile.snapshot": true, "Makefile.PL": true, "Build.PL": true, // rules 28: Perl's
	// rules 29: Clojure's, vcpkg's, conda's
	"deps.edn": true, "project.clj": true, "shadow-cljs.edn": true, "bb.edn": true, "vcpkg.json": true, "environment.yml": true,
	"conda-lock.yml": true, "gradle.lockfile": true, "libs.versions.toml": true}

// keyFile reports whether base names a manifest or lockfile, or a build
// file of the table the shape rule reads (manifest.BuildReader).
func keyFile(base string) bool {
	return keyFiles[base] || strings.HasPrefix(base, "requirements") && strings.HasSuffix(base, ".txt") ||
		manifest.BuildReader(base) != "" && base != ".gitattributes" ||
		strings.HasSuffix(base, ".wrap") // rules 28: a Meson wrap pins a dependency's source and hash
}

// pipToolsLock reports whether p is a compiled requirements file in a
// requirements directory (requirements/base.txt: pip-tools' lock).
func pipToolsLock(p string) bool {
	return path.Ext(p) == ".txt" && path.Base(path.Dir(p)) == "requirements"
}

// migrationDirs hold a database's schema history, whatever the framework.
var migrationDirs = map[string]bool{"migrations": true, "migration": true, "migrate": true, "alembic": true, "flyway": true,
	"liquibase": true, "evolutions": true, "db_migrations": true, "schema_migrations": true, "changelogs": true,
	// session 28: sqitch's change scripts
	"sqitch": true}

// dataExts are database and state files: what a delete or an in-place
// overwrite of destroys is data, not code.
var dataExts = map[string]bool{".db": true, ".sqlite": true, ".sqlite3": true, ".db3": true, ".mdb": true, ".accdb": true,
	".rdb": true, ".aof": true, ".ibd": true, ".mdf": true, ".ldf": true, ".frm": true, ".duckdb": true, ".realm": true,
	".tfstate": true, ".kdbx": true}

// precious says what p is when it is infrastructure state (*.tfstate,
// terraform.tfstate.d), a database's migrations (beneath a migrations
// directory of any framework) or, when overwritten in place (dd,
// truncate, shred: the data is gone, not reset), a database file; else "".
// A development database deleted is a reset, and passes.
func precious(p string, overwrite bool) string {
	base := path.Base(p)
	switch {
	case strings.HasSuffix(base, ".tfstate") || strings.Contains(base, ".tfstate.") || base == "terraform.tfstate.d":
		return "infrastructure state"
	case overwrite && dataExts[path.Ext(base)]:
		return "a database"
	case deploymentRecord(p):
		return "a record of what was deployed where" // rules 19
	}
	for d, n := p, 0; d != "/" && d != "." && n < 8; d, n = path.Dir(d), n+1 {
		if migrationDirs[strings.ToLower(path.Base(d))] { // rules 18: EF's Migrations
			return "a database's migrations"
		}
		// session 28: Liquibase's changelog directory beneath a
		// database's (db2/changelog, db/changelog)
		if b := strings.ToLower(path.Base(d)); b == "changelog" && dbDir.MatchString(path.Dir(d)) {
			return "a database's migrations"
		}
	}
	return ""
}

// buildDirs are directories of build outputs and caches: deleting them
// is cleaning.
var buildDirs = map[string]bool{"dist": true, "build": true, "out": true, "target": true, "node_modules": true, ".next": true, ".nuxt": true,
	"coverage": true, "__pycache__": true, ".pytest_cache": true, ".mypy_cache": true, ".ruff_cache": true, ".tox": true, ".nox": true,
	".venv": true, "venv": true, ".cache": true, "tmp": true, ".tmp": true, ".turbo": true, ".parcel-cache": true, ".svelte-kit": true,
	".gradle": true, ".eggs": true, ".coverage": true, ".nyc_output": true, ".hypothesis": true, ".vite": true, "htmlcov": true, ".terraform": true, "bazel-out": true, "_build": true, ".angular": true, "storybook-static": true,
	"bin": true, "obj": true, "_site": true, ".output": true, ".docusaurus": true, ".expo": true, ".serverless": true, ".aws-sam": true, "vendor": true,
	// rules 15: .NET's and test runners' outputs
	"artifacts": true, "TestResults": true, "test-results": true, "playwright-report": true, "blob-report": true, ".dart_tool": true, "DerivedData": true,
	// session 28: a project's cache directory, Quarto's render state
	"cache": true, ".quarto": true}

// dbDir is a directory of a database's files (db, db2, database, sql).
var dbDir = mustRx(`(?i)(?:^|/)(?:db\d*|database|databases|sql|schema|liquibase)$`)

// buildExts are build outputs and scratch files by extension (logs
// included: a workspace's logs are its programs', not an audit trail).
var buildExts = map[string]bool{".pyc": true, ".pyo": true, ".o": true, ".obj": true, ".a": true, ".so": true, ".class": true, ".log": true,
	".tmp": true, ".orig": true, ".rej": true, ".swp": true, ".bak": true, ".test": true, ".out": true, ".prof": true, ".egg-info": true}

// sourceRoots are top-level directories that hold a project's source.
var sourceRoots = map[string]bool{"src": true, "lib": true, "app": true, "pkg": true, "cmd": true, "internal": true, "test": true, "tests": true,
	"spec": true, "docs": true, "source": true, "packages": true, "apps": true}

// buildOutput reports whether p (beneath the workspace) is a build
// output, cache or scratch file.
func (s *Shield) buildOutput(p string) bool {
	rel := strings.TrimPrefix(strings.TrimPrefix(p, s.cfg.Workspace), "/")
	segs := strings.Split(rel, "/")
	for _, seg := range segs[:len(segs)-1] {
		if buildDirs[seg] || strings.HasSuffix(seg, ".egg-info") {
			return true
		}
	}
	base := segs[len(segs)-1]
	return buildDirs[base] || buildExts[path.Ext(base)] || base == ".DS_Store" || strings.HasSuffix(base, "~") || strings.HasSuffix(base, ".egg-info") ||
		strings.HasSuffix(base, ".Rcheck") // R CMD check's output
}

// workspaceDestruction is `destructive:workspace-key-file`,
// `destructive:workspace-tree` and `destructive:workspace-truncate`
// (escalate): deleting or emptying a manifest, a lockfile or git's
// internals; deleting a whole source tree (`rm -rf src/*`, `rm -rf *`,
// `find . -name '*.go' -delete`, `find src -delete`, `rm -rf src`);
// emptying a file in place (`truncate -s0 x`, `: > x`, `> x`, `cp
// /dev/null x`, `shred`). Build outputs, caches and logs pass.
func (s *Shield) workspaceDestruction(_ *Action, f *Facts, j *judgement) {
	ws := s.cfg.Workspace
	git := path.Join(ws, ".git")
	if s.workspaceHarm(f, j) {
		return
	}
	for i := range f.Deletes {
		r := &f.Deletes[i]
		if !within(r.Path, ws) || r.Path == ws || s.buildOutput(r.Path) {
			continue
		}
		base := path.Base(r.Path)
		switch {
		case within(r.Path, git) && !strings.HasSuffix(base, ".lock"):
			j.escalate("destructive:workspace-key-file", "%s deletes %s, git's own data", by(r), r.Path)
			return
		case !r.Glob && (base == ".git" || strings.Contains(r.Path, "/.git/")) && !strings.HasSuffix(base, ".lock"):
			// session 28: a submodule's or a nested checkout's .git
			j.escalate("destructive:workspace-key-file", "%s deletes %s, a nested repository's git data (a submodule's checkout breaks)", by(r), r.Path)
			return
		case !r.Glob && (keyFile(base) || pipToolsLock(r.Path)):
			j.escalate("destructive:workspace-key-file", "%s deletes %s, a manifest or lockfile of the project", by(r), r.Path)
			return
		case precious(strings.TrimPrefix(r.Path, ws), false) != "":
			j.escalate("destructive:workspace-key-file", "%s deletes %s, %s", by(r), r.Path, precious(strings.TrimPrefix(r.Path, ws), false))
			return
		case r.Glob && (pureWildcard(base) || base == "*.*" || base == ".*" || strings.Contains(r.Path, "**") || keyFile(base)):
			j.escalate("destructive:workspace-tree", "%s deletes %s: a whole tree of the workspace at once", by(r), r.Path)
			return
		case r.By == "find -delete" && r.Tree:
			j.escalate("destructive:workspace-tree", "%s deletes everything under %s", by(r), r.Path)
			return
		case r.Tree && !r.Glob && path.Dir(r.Path) == ws && r.By != "mv" && r.By != "move_file" && r.By != "git" && r.By != "rsync":
			// A top-level directory that is not a build output: a tree
			// of the project (src, services, web ...), whatever its name.
			j.escalate("destructive:workspace-tree", "%s deletes %s, a whole top-level tree of the project", by(r), r.Path)
			return
		case !r.Glob && s.guardFile(r.Path):
			j.escalate("destructive:workspace-checks", "%s deletes %s, a check that guards the repository (CI, hooks)", by(r), r.Path)
			return
		case s.recordsDeleted(r, j), s.subtreeDestruction(r, j):
			return
		}
	}
	if s.treesDestruction(f, j) || s.documentEmptied(f, j) {
		return
	}
	// A manifest or lockfile written with nothing in it (an empty
	// go.mod, "{}" over package-lock.json): the project's dependencies
	// and their pins are gone, whatever wrote it.
	for _, t := range f.Texts {
		p, ok := strings.CutPrefix(t.Source, "content:")
		if !ok || !within(p, ws) || !keyFile(path.Base(p)) {
			continue
		}
		switch strings.Trim(t.Body, " \t\r\n") {
		case "", "{}", "[]", "null", "{\n}":
			j.escalate("destructive:workspace-key-file", "%s is written empty (%q): a manifest or lockfile of the project emptied", p, clipText(t.Body, 20))
			return
		}
	}
	null, ddOver := false, false
	for i := range f.Runs {
		if f.Runs[i].Name == "dd" {
			// dd of zeros or random bytes over a file: in place
			// (conv=notrunc) it corrupts what is there; onto source or
			// a manifest it replaces it. Random test data (of=x.bin) is
			// what dd writes every day.
			zero, notrunc := false, false
			for _, a := range f.Runs[i].Argv {
				switch {
				case a == "if=/dev/zero" || a == "if=/dev/urandom" || a == "if=/dev/random" || a == "if=/dev/null":
					zero = true
				case strings.HasPrefix(a, "conv=") && strings.Contains(a, "notrunc"):
					notrunc = true
				case strings.HasPrefix(a, "of="):
					// session 28: over any file not named as data (a
					// schema.prisma, a config): not only source
					notrunc = notrunc || sourceFile(a[3:]) || precious(a[3:], true) != "" || !ddDataName(a[3:])
				}
			}
			ddOver = ddOver || zero && notrunc
		}
	}
	for i := range f.Reads {
		switch f.Reads[i].Path {
		case "/dev/null", "/dev/zero", "/dev/urandom", "/dev/random":
			null = true
		}
	}
	for i := range f.Writes {
		r := &f.Writes[i]
		if r.Glob || !within(r.Path, ws) || r.Path == ws || s.buildOutput(r.Path) {
			continue
		}
		empties := r.By == "truncate" || r.By == "shred" || r.By == "cp" && null || r.By == "dd" && ddOver || r.By == "redirect" && nullLine(f)
		if !empties {
			continue
		}
		if keyFile(path.Base(r.Path)) || within(r.Path, git) || precious(strings.TrimPrefix(r.Path, ws), true) != "" {
			j.escalate("destructive:workspace-key-file", "%s empties %s, a manifest, lockfile, database, state file or git's own data", by(r), r.Path)
		} else {
			j.escalate("destructive:workspace-truncate", "%s empties %s in place", by(r), r.Path)
		}
		return
	}
}

// nullLine reports whether a line runs nothing that writes output (`:
// > x`, `> x`, `true > x`): its redirections only empty files.
func nullLine(f *Facts) bool {
	for i := range f.Runs {
		switch f.Runs[i].Name {
		case ":", "true", "false":
		default:
			return false
		}
	}
	return true
}

// guardFile reports whether p is a check that guards the repository: a
// CI workflow or pipeline, a git hook manager's hook or configuration, a
// checker's configuration (cargo-deny, golangci-lint, gitleaks, semgrep,
// detect-secrets, the dependency update bots), or a directory that holds
// them (.github, .github/workflows, .githooks: rules 15). Deleting one
// removes what would have caught a change.
func (s *Shield) guardFile(p string) bool {
	rel := strings.TrimPrefix(strings.TrimPrefix(p, s.cfg.Workspace), "/")
	if rel == "" {
		return false
	}
	for _, pre := range guardDirs {
		if strings.HasPrefix(rel, pre) || strings.HasPrefix(pre, rel+"/") {
			return true
		}
	}
	for _, g := range guardFiles {
		if rel == g || strings.HasPrefix(g, rel+"/") {
			return true
		}
	}
	return guardConfig[path.Base(rel)]
}

// guardDirs hold checks: every file in them guards the repository.
var guardDirs = []string{".github/workflows/", ".husky/", ".circleci/", ".buildkite/", ".gitlab/ci/", ".githooks/", ".git-hooks/",
	".hooks/", "githooks/", ".semgrep/", ".woodpecker/", ".forgejo/workflows/", ".gitea/workflows/"}

// guardFiles are checks by their path in the repository.
var guardFiles = []string{".pre-commit-config.yaml", "lefthook.yml", ".lefthook.yml", ".gitlab-ci.yml", "Jenkinsfile", "azure-pipelines.yml",
	".travis.yml", "bitbucket-pipelines.yml", ".drone.yml", "CODEOWNERS", ".github/CODEOWNERS", "docs/CODEOWNERS"}

// guardConfig are checkers' configurations by name, wherever they stand
// (a crate's deny.toml, a service's .golangci.yml); the dependency bots'
// and a few scanners' are destructive:purpose-file's (repoGoverning).
var guardConfig = setOf("deny.toml", ".golangci.yml", ".golangci.yaml", ".golangci.toml", ".golangci.json",
	"gitleaks.toml", ".gitleaksignore", ".semgrep.yaml", ".secrets.baseline", "cargo-deny.toml", ".cargo-deny.toml", ".trufflehog.yml",
	"osv-scanner.toml", ".bandit", "sonar-project.properties", ".checkov.yml", ".checkov.yaml", ".tfsec.yml",
	".hadolint.yaml", ".hadolint.yml", "commitlint.config.js", ".commitlintrc", ".commitlintrc.json", ".lintstagedrc", ".lintstagedrc.json")

// gitDestroys names what a git command destroys that git could otherwise
// recover, or "": commits dropped by a hard reset to an ancestor, branches
// force-deleted, the reflog expired, unreachable objects pruned now,
// stashes cleared, history rewritten, refs deleted, the whole index
// untracked.
func gitDestroys(argv []string) string {
	if len(argv) < 2 {
		return ""
	}
	args := argv[1:]
	for len(args) > 1 && (args[0] == "-C" || args[0] == "-c") {
		args = args[2:]
	}
	if len(args) == 0 {
		return ""
	}
	rest := strings.Join(args[1:], " ")
	has := func(fs ...string) bool {
		for _, a := range args[1:] {
			for _, f := range fs {
				if a == f {
					return true
				}
			}
		}
		return false
	}
	switch args[0] {
	case "reset":
		if has("--hard", "--merge", "--keep") {
			for _, a := range args[1:] {
				if strings.Contains(a, "~") || strings.Contains(a, "^") {
					return "commits dropped by a hard reset to " + a
				}
			}
		}
	case "branch":
		if has("-D") || has("-d", "--delete") && has("-f", "--force") {
			return "branches force-deleted"
		}
	case "reflog":
		if strings.Contains(rest, "expire") || strings.Contains(rest, "delete") {
			return "the reflog expired"
		}
	case "gc", "prune":
		if strings.Contains(rest, "--prune=now") || strings.Contains(rest, "--expire=now") || args[0] == "prune" {
			return "unreachable objects pruned"
		}
	case "stash":
		if strings.HasPrefix(rest, "clear") {
			return "every stash cleared"
		}
	case "filter-branch", "filter-repo":
		return "history rewritten"
	case "update-ref":
		if has("-d") {
			return "a ref deleted"
		}
	case "rm":
		if has("--cached") && (has("-r") || has("-rf") || has("-fr")) && (has(".") || has("*") || has(":/")) {
			return "every file untracked"
		}
	}
	return ""
}

// gitDestruction is `destructive:git-history` (escalate): a git command
// that destroys what git could otherwise bring back (gitDestroys); and
// `destructive:discard-changes` (escalate): one that throws away work
// not yet committed, which nothing brings back (gitDiscards).
func (s *Shield) gitDestruction(_ *Action, f *Facts, j *judgement) {
	for i := range f.Runs {
		if r := &f.Runs[i]; r.Name == "git" {
			if what := gitDestroys(r.Argv); what != "" {
				j.escalate("destructive:git-history", "%s: %s, which git could otherwise recover", clipText(r.Line, 80), what)
				return
			}
			if what := gitDiscards(r.Argv); what != "" {
				j.escalate("destructive:discard-changes", "%s: %s, which no commit holds", clipText(r.Line, 80), what)
				return
			}
		}
	}
}

// gitDiscards names the uncommitted work a git command throws away, or
// "": a checkout or restore of a directory, the whole tree or a glob
// (git checkout ., git checkout -- src, git restore .), a forced checkout
// or switch, a hard reset, a stash that takes untracked files with it, a
// forced clean. Restoring one file (git checkout -- main.go), unstaging
// (git restore --staged .) and switching branches do not.
func gitDiscards(argv []string) string {
	if len(argv) < 2 {
		return ""
	}
	args := argv[1:]
	for len(args) > 1 && (args[0] == "-C" || args[0] == "-c") {
		args = args[2:]
	}
	if len(args) == 0 {
		return ""
	}
	sub, rest := args[0], args[1:]
	var opts, ops, paths []string
	dashed := false
	for _, a := range rest {
		switch {
		case dashed:
			paths = append(paths, a)
		case a == "--":
			dashed = true
		case strings.HasPrefix(a, "-") && a != "-":
			opts = append(opts, a)
		default:
			ops = append(ops, a)
		}
	}
	has := func(fs ...string) bool {
		for _, o := range opts {
			for _, f := range fs {
				if o == f || strings.HasPrefix(f, "-") && !strings.HasPrefix(f, "--") && !strings.HasPrefix(o, "--") && len(f) == 2 && strings.ContainsRune(o[1:], rune(f[1])) {
					return true
				}
			}
		}
		return false
	}
	tree := func(ps []string, all bool) string {
		for _, p := range ps {
			if all && wholePathspec(p) || !all && treePathspec(p) {
				return p
			}
		}
		return ""
	}
	switch sub {
	case "checkout":
		if has("-b", "-B", "--orphan") {
			return ""
		}
		if has("-f", "--force") {
			return "a forced checkout discards uncommitted changes"
		}
		if p := tree(paths, false); p != "" {
			return "the uncommitted changes under " + p + " are discarded"
		}
		if p := tree(ops, true); p != "" {
			return "the uncommitted changes under " + p + " are discarded"
		}
	case "restore":
		if has("-S", "--staged") && !has("-W", "--worktree") {
			return "" // the index only: nothing in the working tree changes
		}
		if p := tree(append(ops, paths...), false); p != "" {
			return "the uncommitted changes under " + p + " are discarded"
		}
	case "switch":
		if has("-f", "--force", "--discard-changes") {
			return "a forced switch discards uncommitted changes"
		}
	case "reset":
		if has("--hard") {
			return "a hard reset discards uncommitted changes"
		}
	case "stash":
		if len(ops) > 0 && ops[0] != "push" && ops[0] != "save" {
			return ""
		}
		if has("-u", "--include-untracked", "-a", "--all") {
			return "untracked files are taken out of the working tree with the stash"
		}
	}
	return ""
}

// wholePathspec reports whether a git pathspec written without "--"
// names the whole tree or a pattern (".", ":/", "*.go"); a bare word
// may be a branch.
func wholePathspec(p string) bool {
	switch p {
	case ".", "./", ":/", ":", "*", ":(top)", "..":
		return true
	}
	return strings.HasSuffix(p, "/") || strings.ContainsAny(p, "*?[") || strings.HasPrefix(p, ":(")
}

// treePathspec reports whether a git pathspec names more than one file:
// the whole tree, a pattern, or a directory (a name with no extension
// that is not one of the files known to have none).
func treePathspec(p string) bool {
	if wholePathspec(p) {
		return true
	}
	base := path.Base(p)
	if path.Ext(base) != "" || strings.HasPrefix(base, ".") {
		return false
	}
	switch base {
	case "Makefile", "makefile", "GNUmakefile", "Dockerfile", "Containerfile", "LICENSE", "README", "Gemfile", "Rakefile", "Procfile",
		"Jenkinsfile", "Vagrantfile", "Pipfile", "Justfile", "justfile", "CODEOWNERS", "VERSION", "NOTICE", "AUTHORS", "CHANGELOG", "go":
		return false
	}
	return true
}

// sourceFile reports whether a path's name is source code, a manifest or
// a document of the project (not data: .bin, .dat, .img).
func sourceFile(p string) bool {
	base := path.Base(p)
	if keyFile(base) {
		return true
	}
	switch path.Ext(base) {
	case ".go", ".rs", ".py", ".ts", ".tsx", ".js", ".jsx", ".mjs", ".cjs", ".java", ".kt", ".c", ".h", ".cc", ".cpp", ".hpp", ".rb", ".php",
		".swift", ".cs", ".scala", ".sh", ".sql", ".json", ".toml", ".yaml", ".yml", ".md", ".proto", ".tf", ".vue", ".svelte", ".css", ".html":
		return true
	}
	return false
}

// ddDataName reports whether p is named as the bytes dd writes every day:
// an image, a blob, test data (disk.img, random.bin, /dev/null).
func ddDataName(p string) bool {
	switch strings.ToLower(path.Ext(p)) {
	case ".bin", ".img", ".raw", ".dat", ".data", ".iso", ".dd", ".blob", ".tmp", ".test", ".part", ".fs", ".ext4", ".squashfs", ".hex", ".elf":
		return true
	}
	return strings.HasPrefix(p, "/dev/")
}
