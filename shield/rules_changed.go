package shield

import (
	"path"
	"slices"
	"strings"

	"github.com/opx-dev/opx/shield/manifest"
)

// A build or test file changed, then run (issue 27, pass 5;
// docs/shield-rules.md "flow:changed-then-run"). A session that writes a
// file some tool executes (conftest.py, a test runner's global setup,
// alembic's env.py, a package.json lifecycle script, a Makefile) and then
// runs that tool runs what it wrote, outside any review of the run. Shield
// is pure: what a session changed is told to it with each action, like
// what it read (Action.Taint): Sensitive names the change with the
// ChangedPrefix, the engine keeps it in its taint projection once the call
// ran and records it with later proposals, so a replay judges the same.

// ChangedPrefix begins a Sensitive entry (and so a Taint's What) that
// names a build or test file the call changes, rather than a sensitive
// read: "changed: /ws/tests/conftest.py — run by pytest".
const ChangedPrefix = "changed: "

// changedSep separates the path from why in such an entry.
const changedSep = " — "

// Changed reports whether a taint entry names a changed build or test
// file rather than a sensitive read.
func (t Taint) Changed() bool { return strings.HasPrefix(t.What, ChangedPrefix) }

// changedPath returns the path a changed entry names.
func (t Taint) changedPath() string {
	p, _, _ := strings.Cut(strings.TrimPrefix(t.What, ChangedPrefix), changedSep)
	return p
}

// toolFile is a file some tool executes or loads as code, and the
// programs that do (a wrapper's argument counts: python -m pytest, npx
// vitest, uv run alembic).
type toolFile struct {
	what    string
	runners []string
	// always: even a version query runs it (a wrapper downloads the
	// distribution it names before it answers ./gradlew --version)
	always bool
}

var (
	jsToolConfig = mustRx(`^(vitest|vite|jest|playwright|cypress|karma|mocha|ava|babel|webpack|rollup|esbuild|tsup|next|nuxt|astro|svelte|remix|postcss|tailwind|eslint)\.(config|setup|workspace)(\.[\w-]+)*\.(js|mjs|cjs|ts|mts|cts|json)$|^\.mocharc\.|^babel\.config\.|^\.babelrc`)
	jsSetup      = mustRx(`(?i)(^|[._-])(global[-_]?setup|global[-_]?teardown|setup[-_]?tests?|test[-_]?setup|setup)([._-].*)?\.(js|mjs|cjs|ts|mts|cts|jsx|tsx)$`)
	jsRunners    = []string{"vitest", "vite", "jest", "playwright", "cypress", "karma", "mocha", "ava", "next", "nuxt", "astro", "webpack", "rollup", "tsup", "npm", "pnpm", "yarn", "bun", "npx", "bunx", "turbo", "nx"}
	pyTest       = []string{"pytest", "py.test", "tox", "nox", "hatch", "pdm", "uv", "poetry", "pipenv", "rye"}
)

// toolFileOf returns who runs the file at p as code, or false. supplyRuns
// says a build file's change adds or changes code that runs (a
// lifecycle script): a manifest counts only then, a version bump is not
// remembered.
func toolFileOf(p string, supplyRuns bool) (toolFile, bool) {
	base := path.Base(p)
	dir := path.Base(path.Dir(p))
	switch {
	case base == "conftest.py":
		return toolFile{what: "conftest.py, loaded by pytest", runners: pyTest}, true
	case base == "noxfile.py":
		return toolFile{what: "noxfile.py, run by nox", runners: []string{"nox"}}, true
	case base == "tox.ini" || base == "pytest.ini":
		return toolFile{what: base + ", read by pytest and tox", runners: pyTest}, true
	case base == "env.py" && (dir == "alembic" || dir == "migrations"), base == "alembic.ini":
		return toolFile{what: base + ", run by alembic", runners: []string{"alembic"}}, true
	case base == "setup.py":
		return toolFile{what: "setup.py, run at install", runners: []string{"pip", "pip3", "uv", "python", "python3", "pipx", "poetry", "pdm"}}, true
	case base == "build.rs":
		return toolFile{what: "build.rs, run by cargo", runners: []string{"cargo"}}, true
	case base == "Makefile" || base == "makefile" || base == "GNUmakefile" || path.Ext(base) == ".mk":
		return toolFile{what: base + ", run by make", runners: []string{"make", "gmake"}}, true
	case base == "justfile" || base == "Justfile" || base == ".justfile":
		return toolFile{what: base + ", run by just", runners: []string{"just"}}, true
	case base == "Taskfile.yml" || base == "Taskfile.yaml":
		return toolFile{what: base + ", run by task", runners: []string{"task"}}, true
	case base == "Rakefile":
		return toolFile{what: "Rakefile, run by rake", runners: []string{"rake", "rails", "bundle"}}, true
	case base == "tasks.py" || base == "fabfile.py":
		return toolFile{what: base + ", run by invoke/fab", runners: []string{"invoke", "inv", "fab"}}, true
	case base == "gulpfile.js" || base == "Gruntfile.js":
		return toolFile{what: base + ", run by gulp/grunt", runners: []string{"gulp", "grunt", "npx"}}, true
	case base == "Tiltfile":
		return toolFile{what: "Tiltfile, run by tilt", runners: []string{"tilt"}}, true
	case base == "skaffold.yaml" || base == "skaffold.yml":
		return toolFile{what: base + ", run by skaffold", runners: []string{"skaffold"}}, true
	case base == "Earthfile":
		return toolFile{what: "Earthfile, run by earthly", runners: []string{"earthly"}}, true
	case base == "magefile.go":
		return toolFile{what: "magefile.go, run by mage", runners: []string{"mage"}}, true
	case base == ".pre-commit-config.yaml":
		return toolFile{what: base + ", run by pre-commit", runners: []string{"pre-commit", "prek"}}, true
	case base == "manage.py":
		return toolFile{what: "manage.py, run by Django", runners: []string{"python", "python3", "django-admin", "uv", "poetry"}}, true
	case jsToolConfig.MatchString(base) || jsSetup.MatchString(base) && !strings.Contains(p, "/node_modules/"):
		return toolFile{what: base + ", loaded by the JavaScript build or test runner", runners: jsRunners}, true
	case migrationFile(p):
		return toolFile{what: base + ", a database migration, applied by the migration tool", runners: migrationRunners}, true
	case supplyRuns && base == "pyproject.toml":
		// rules 19: a plugin the test runner loads, a build hook
		return toolFile{what: base + " (code that runs at build, install or test time), read by the Python tools", runners: []string{"pytest", "py.test", "tox", "nox", "flake8", "pylint"}}, true
	case supplyRuns && (path.Ext(base) == ".bb" || path.Ext(base) == ".bbappend" || path.Ext(base) == ".inc" || path.Ext(base) == ".bbclass"):
		// rules 19: a recipe's source redirected, then built
		return toolFile{what: base + " (where the recipe's code comes from), built by bitbake", runners: []string{"bitbake", "kas", "kas-container", "devtool"}}, true
	case supplyRuns && (base == "devcontainer.json" || base == ".devcontainer.json"):
		// rules 19: its lifecycle commands run when the container is made
		return toolFile{what: base + " (its lifecycle commands), run by the dev container CLI", runners: []string{"devcontainer"}}, true
	case supplyRuns && (base == "package.json" || base == ".npmrc" || base == ".yarnrc.yml"):
		return toolFile{what: base + " (code that runs at install or run time), run by the package manager", runners: []string{"npm", "pnpm", "yarn", "bun", "npx", "corepack"}}, true
	case supplyRuns:
		// any build file whose change adds code that runs or redirects
		// where code comes from (manifest.KindRuns, KindSource): its
		// reader, and the reader's wrapper, run what it changed
		if reader := manifest.BuildReader(p); reader != "" {
			if rs, ok := buildRunners[reader]; ok {
				return toolFile{what: base + " (code that runs, or where code comes from), read by " + reader, runners: rs, always: strings.Contains(reader, "wrapper")}, true
			}
			if !strings.ContainsAny(reader, " ") {
				return toolFile{what: base + " (code that runs, or where code comes from), read by " + reader, runners: []string{strings.ToLower(reader)}}, true
			}
		}
	}
	return toolFile{}, false
}

// buildRunners are the programs that run a build file's reader, where
// they are not the reader's own name (manifest.BuildReader).
var buildRunners = map[string][]string{
	"gradle": {"gradle", "gradlew"}, "the Gradle wrapper": {"gradle", "gradlew"},
	"maven": {"mvn", "mvnw"}, "the Maven wrapper": {"mvn", "mvnw"},
	"helm": {"helm", "helmfile"}, "NuGet": {"dotnet", "nuget", "msbuild"}, "msbuild": {"dotnet", "msbuild"},
	"SwiftPM": {"swift", "xcodebuild"}, "CocoaPods": {"pod"}, "Carthage": {"carthage"}, "pub": {"dart", "flutter"},
	"bazel": {"bazel", "bazelisk"}, "sbt": {"sbt"},
	"conda": {"conda", "mamba", "micromamba"}, "spark": {"spark-submit", "pyspark", "spark-shell", "spark-sql"},
	"R": {"R", "Rscript"}, "renv": {"R", "Rscript"},
}

// migrationRunners apply migrations.
var migrationRunners = []string{"alembic", "flask", "rails", "rake", "prisma", "knex", "sequelize", "flyway", "liquibase",
	"goose", "migrate", "dbmate", "atlas", "sqlx", "diesel", "typeorm", "drizzle-kit", "mikro-orm", "yoyo", "sqitch", "psql", "manage.py"}

// migrationFile reports whether p is a database migration (alembic's
// versions/, a migrations/ or db/migrate/ directory, prisma's).
func migrationFile(p string) bool {
	d := path.Dir(p)
	switch ext := path.Ext(p); ext {
	case ".py", ".sql", ".rb", ".ts", ".js", ".go", ".rs":
	default:
		return false
	}
	if path.Base(p) == "__init__.py" {
		return false
	}
	return path.Base(d) == "migrations" || strings.HasSuffix(d, "/alembic/versions") || strings.HasSuffix(d, "/db/migrate") ||
		strings.Contains(p, "/prisma/migrations/") || strings.Contains(p, "/migrations/") && path.Ext(p) == ".sql"
}

// taskRunners run a named target or script whose recipe Shield does not
// see (make migrate, npm run test, just build): such a run counts as the
// tool's when the target names the tool's job (taskJobs).
var taskRunners = map[string]bool{"make": true, "gmake": true, "just": true, "task": true, "npm": true, "pnpm": true,
	"yarn": true, "bun": true, "invoke": true, "inv": true, "nox": true, "tox": true, "poe": true, "mise": true, "rake": true}

// taskJobs are words in a target's name, by what the changed file is.
func taskJobs(tf toolFile) []string {
	switch {
	case slices.Equal(tf.runners, migrationRunners):
		return []string{"migrat", "upgrade", "db", "schema", "seed"}
	case slices.Equal(tf.runners, pyTest), slices.Equal(tf.runners, jsRunners):
		return []string{"test", "check", "ci", "cov", "e2e", "verify", "build", "dev", "start"}
	}
	return []string{"install", "setup", "bootstrap", "build", "prepare", "ci"}
}

// changedFiles names the tool files an action changes, for Sensitive.
func (s *Shield) changedFiles(f *Facts) []string {
	runs := map[string]bool{}
	for _, c := range f.Supply {
		// a new origin counts in a build file judged by shape (where a
		// KindSource is a URL, host or namespace the file did not name;
		// a parser's KindSource is also a version bump)
		if c.Path != "" && (c.Kind == manifest.KindRuns || c.Kind == manifest.KindSource && manifest.BuildReader(c.Path) != "") {
			runs[c.Path] = true
		}
	}
	for _, t := range f.Texts {
		// rules 19: a dev container's lifecycle commands changed; a
		// recipe's source made to follow a branch or moved
		p, ok := strings.CutPrefix(t.Source, "content:")
		if ok && bitbakeFile(p) && sourceFollowsBranch(p, clip(t.Body, maxTextJudged), removedText(f, t.Source)) != "" {
			runs[p] = true
		}
		if ok && (path.Base(p) == "devcontainer.json" || path.Base(p) == ".devcontainer.json") {
			old := lineSet(removedText(f, t.Source))
			for _, l := range strings.Split(clip(t.Body, maxTextJudged), "\n") {
				if !old[strings.TrimSuffix(strings.TrimSpace(l), ",")] && lifecycleKey.MatchString(l) {
					runs[p] = true
					break
				}
			}
		}
	}
	var out []string
	for _, w := range f.Writes {
		if w.Glob || w.Tree && !copiedOnto(w) || metaWriters[w.By] {
			continue
		}
		tf, ok := toolFileOf(w.Path, runs[w.Path])
		if ok && s.cleanChange(f, w.Path) {
			continue // rules 17: read whole, and only the tool's job
		}
		if !ok && fetchingScript(f, w.Path) {
			tf, ok = toolFile{what: path.Base(w.Path) + ", a script that runs code it fetches", runners: []string{path.Base(w.Path)}, always: true}, true
		}
		if !ok && s.writtenRisk(f, w.Path) {
			tf, ok = toolFile{what: path.Base(w.Path) + writtenRiskWhat, runners: []string{path.Base(w.Path)}, always: true}, true
		}
		if !ok || testDataPath(w.Path) {
			continue
		}
		e := ChangedPrefix + w.Path + changedSep + tf.what
		if !slices.Contains(out, e) {
			out = append(out, e)
		}
	}
	return out
}

// bitbakeFile reports whether p is a BitBake recipe, append, include or
// class.
func bitbakeFile(p string) bool {
	switch path.Ext(p) {
	case ".bb", ".bbappend", ".inc", ".bbclass":
		return true
	}
	return false
}

// lifecycleKey is a dev container's command that runs when it is made
// or started.
var lifecycleKey = mustRx(`"(?:initializeCommand|onCreateCommand|updateContentCommand|postCreateCommand|postStartCommand|postAttachCommand)"`)

// copiedOnto reports whether a Tree write is a copy's or a move's
// destination (cp x Makefile): it may be a directory the sources land in,
// but when it names a tool's file by its name, the file is what is
// written (rules 17; a directory called Makefile is not what one meets).
func copiedOnto(w Ref) bool {
	switch w.By {
	case "cp", "mv", "install", "gcp", "gmv", "rsync", "scp":
		return true
	}
	return false
}

// testDataPath reports whether p lies where a tool's file is data, not
// run (a fixture corpus, vendored dependencies).
func testDataPath(p string) bool {
	return strings.Contains(p, "/node_modules/") || strings.Contains(p, "/testdata/") || strings.Contains(p, "/fixtures/")
}

// runWrappers run the program named by an argument (python -m pytest, npx
// vitest, uv run alembic, docker compose run api pytest).
var runWrappers = map[string]bool{"python": true, "python3": true, "uv": true, "uvx": true, "poetry": true, "pdm": true,
	"hatch": true, "pipenv": true, "rye": true, "npx": true, "pnpm": true, "yarn": true, "bun": true, "bunx": true,
	"npm": true, "docker": true, "podman": true, "env": true, "time": true, "nice": true, "dotenv": true, "tox": true, "nox": true,
	"sh": true, "bash": true, "zsh": true, "ruby": true, "node": true, "perl": true, "pwsh": true,
	"jupyter": true, "papermill": true, "ipython": true, "spark-submit": true, "php": true, "deno": true}

// changedThenRun is `flow:changed-then-run` (escalate): the session
// changed a file a tool runs as code (a.Taint's changed entries), and this
// action runs that tool.
func (s *Shield) changedThenRun(a *Action, f *Facts, j *judgement) {
	if len(a.Taint) == 0 || j.inner || len(f.Runs) == 0 {
		return
	}
	for _, t := range a.Taint {
		if !t.Changed() || strings.Contains(t.What, changedSep+askedWhy) {
			continue // rules 12's asked changes are flow:commit-carries'
		}
		p := t.changedPath()
		tf, ok := toolFileOf(p, true)
		if !ok && (strings.HasSuffix(t.What, ", a script that runs code it fetches") || strings.HasSuffix(t.What, writtenRiskWhat)) {
			tf, ok = toolFile{what: "", runners: []string{path.Base(p)}, always: true}, true
		}
		if !ok {
			continue
		}
		for i := range f.Runs {
			r := &f.Runs[i]
			by := runsTool(r, tf.runners, tf.always)
			if by == "" {
				by = runsTarget(r, taskJobs(tf))
			}
			if by != "" {
				_, what, _ := strings.Cut(t.What, changedSep)
				j.escalate("flow:changed-then-run", "this session changed %s (call %s: %s); %s runs what it changed", s.relPath(p), t.Call, what, clipText(r.Line, 80))
				return
			}
		}
	}
}

// runsTool returns the runner r is (or runs through a wrapper), or "".
func runsTool(r *Run, runners []string, always bool) string {
	if r.Name == "" {
		return ""
	}
	if slices.Contains(runners, r.Name) {
		if (versionOnly(r.Argv) || settingsOnly(r.Argv) || runsNothing(r.Argv)) && !always {
			return ""
		}
		return r.Name
	}
	if !runWrappers[r.Name] {
		return ""
	}
	for k, w := range r.Argv[1:] {
		if b := path.Base(w); slices.Contains(runners, b) {
			if runsNothing(r.Argv[1+k:]) && !always {
				return ""
			}
			return b
		}
	}
	return ""
}

// runsNothing reports whether argv (a tool's name, then its arguments)
// asks the tool for work that runs none of its configuration's code
// (rules 19): pre-commit bumping, validating or installing its hooks
// (not running them), terraform formatting or recording its providers'
// checksums (not loading them).
func runsNothing(argv []string) bool {
	if len(argv) < 2 {
		return false
	}
	switch path.Base(argv[0]) {
	case "pre-commit", "prek":
		switch argv[1] {
		case "autoupdate", "validate-config", "validate-manifest", "clean", "gc", "sample-config", "migrate-config", "install", "uninstall", "init-templatedir":
			return true
		}
	case "terraform", "tofu":
		args := argv[1:]
		for len(args) > 0 && strings.HasPrefix(args[0], "-chdir") {
			args = args[1:]
		}
		if len(args) > 0 && (args[0] == "fmt" || args[0] == "version") {
			return true
		}
		return len(args) > 1 && args[0] == "providers" && (args[1] == "lock" || args[1] == "mirror")
	case "pnpm", "npm", "yarn", "bun":
		// rules 20: the package store or cache pruned or listed, a
		// version printed: no package's script runs
		args := argv[1:]
		return len(args) > 1 && (args[0] == "store" && (args[1] == "prune" || args[1] == "path" || args[1] == "status") || args[0] == "cache" && (args[1] == "clean" || args[1] == "ls" || args[1] == "verify" || args[1] == "dir")) ||
			len(args) == 1 && (args[0] == "--version" || args[0] == "-v")
	}
	return false
}

// runsTarget returns the target of a task runner's run whose name says
// it does one of jobs (make migrate, npm run test:unit), or "".
func runsTarget(r *Run, jobs []string) string {
	if !taskRunners[r.Name] {
		return ""
	}
	for _, a := range r.Argv[1:] {
		if strings.HasPrefix(a, "-") || a == "run" {
			continue
		}
		l := strings.ToLower(a)
		for _, j := range jobs {
			if strings.Contains(l, j) {
				return r.Name + " " + a
			}
		}
	}
	return ""
}

// versionOnly reports whether argv only asks for a version or help.
func versionOnly(argv []string) bool {
	if len(argv) != 2 {
		return false
	}
	switch argv[1] {
	case "--version", "-v", "-V", "version", "--help", "-h", "help":
		return true
	}
	return false
}

// scriptFetchRun is a script's line that runs what it fetches (curl … |
// sh, iex (… DownloadString …)); fetchEval covers code evaluating it.
var scriptFetchRun = mustRx(`(?i)\b(curl|wget|fetch|iwr|irm|Invoke-WebRequest|Invoke-RestMethod)\b[^\n|]*\|\s*(sudo\s+)?(ba|z|da)?sh\b|\b(curl|wget)\b[^\n|]*\|\s*(sudo\s+)?(python\d*|perl|ruby|node)\b|\b(iex|Invoke-Expression)\b[^\n]*(DownloadString|Invoke-WebRequest|iwr|irm)`)

// fetchingScript reports whether the action writes, at p, a script that
// runs code it fetches: the session running it next runs the server's
// answer (flow:changed-then-run remembers it, with the script as runner).
func fetchingScript(f *Facts, p string) bool {
	for _, t := range f.Texts {
		if t.Source == "content:"+p {
			body := clipRaw(t.Body, maxAppsecText)
			if scriptFetchRun.MatchString(body) || fetchHint(body) && fetchEval.MatchString(body) {
				return true
			}
		}
	}
	return false
}
