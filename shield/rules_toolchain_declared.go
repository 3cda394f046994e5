package shield

import (
	"bytes"
	"encoding/json"
	"maps"
	"path"
	"slices"
	"strings"
)

// What a workspace file declares of the toolchain (rules 12; see
// rules_toolchain.go). Two ways, both read from the file alone:
//
//   - a project or manifest file names the tools that read it: west.yml
//     is west's (and the board tools of its ecosystem), conanfile.py
//     conan's, platformio.ini pio's, MODULE.bazel bazel's, a .uplugin
//     Unreal's build tool's, .lfsconfig git-lfs's (toolchainByFile);
//   - a file that runs commands names their programs: Makefile recipes,
//     justfile and Taskfile lines, package.json scripts (and its
//     devDependencies, whose command shares the package's name), CI
//     steps (run:, script:), workspace scripts (.sh, .ps1, .bat), the
//     code of the agent instructions (AGENTS.md, CLAUDE.md, GEMINI.md:
//     an edit of one is asked about, a README's or a doc's is not, so
//     those declare nothing), .tool-versions and mise's [tools]; a
//     program named by a
//     variable in command position ("$UNITY_PATH", & "$env:UNITY_PATH")
//     is declared as "$UNITY_PATH".

// MaxToolchainFileBytes bounds the bytes of one file read for
// declarations.
const MaxToolchainFileBytes = 128 << 10

// toolchainByFile are the tools a project or manifest file names by
// its base name (or, "*.ext", its extension).
var toolchainByFile = map[string][]string{
	"west.yml":           {"west", "nrfjprog", "nrfutil", "pyocd", "JLinkExe", "openocd", "imgtool"},
	"platformio.ini":     {"pio", "platformio", "openocd", "JLinkExe"},
	"sdkconfig":          {"idf.py", "esptool.py", "esptool", "espefuse.py", "espsecure.py", "idf_monitor.py"},
	"sdkconfig.defaults": {"idf.py", "esptool.py", "esptool", "espefuse.py", "espsecure.py", "idf_monitor.py"},
	"idf_component.yml":  {"idf.py", "esptool.py", "esptool"},
	"conanfile.py":       {"conan"},
	// rules 19: a Yocto/OpenEmbedded layer's files name its build tools
	"*.bb":                         {"bitbake", "bitbake-layers", "devtool", "recipetool", "oe-pkgdata-util", "runqemu", "wic", "kas", "kas-container"},
	"*.bbappend":                   {"bitbake", "bitbake-layers", "devtool", "recipetool", "oe-pkgdata-util", "runqemu", "wic", "kas", "kas-container"},
	"bblayers.conf":                {"bitbake", "bitbake-layers", "devtool", "recipetool", "oe-pkgdata-util", "runqemu", "wic", "kas", "kas-container"},
	"layer.conf":                   {"bitbake", "bitbake-layers", "devtool", "recipetool", "oe-pkgdata-util", "runqemu", "wic", "kas", "kas-container"},
	"conanfile.txt":                {"conan"},
	"vcpkg.json":                   {"vcpkg"},
	"vcpkg-configuration.json":     {"vcpkg"},
	".lfsconfig":                   {"git-lfs"},
	".p4ignore":                    {"p4"},
	".p4config":                    {"p4"},
	"p4config.txt":                 {"p4"},
	"*.nomad":                      {"nomad"},
	"*.uproject":                   {"RunUAT.sh", "RunUAT.bat", "UnrealEditor", "UnrealEditor-Cmd", "UnrealBuildTool"},
	"*.uplugin":                    {"RunUAT.sh", "RunUAT.bat", "UnrealEditor", "UnrealEditor-Cmd", "UnrealBuildTool"},
	"*.jlink":                      {"JLinkExe"},
	"flake.nix":                    {"nix", "nix-shell", "nix-build", "devenv"},
	"shell.nix":                    {"nix", "nix-shell", "nix-build"},
	"devenv.nix":                   {"devenv", "nix"},
	"MODULE.bazel":                 {"bazel", "bazelisk", "ibazel", "buildifier", "buildozer"},
	"WORKSPACE":                    {"bazel", "bazelisk", "ibazel", "buildifier", "buildozer"},
	"WORKSPACE.bazel":              {"bazel", "bazelisk", "ibazel", "buildifier", "buildozer"},
	".bazelversion":                {"bazel", "bazelisk"},
	"mix.exs":                      {"mix"},
	"CMakeLists.txt":               {"cmake", "ctest", "cpack"},
	"CMakePresets.json":            {"cmake", "ctest", "cpack"},
	"meson.build":                  {"meson", "ninja"},
	"build.zig":                    {"zig"},
	"justfile":                     {"just"},
	"Justfile":                     {"just"},
	".justfile":                    {"just"},
	"Taskfile.yml":                 {"task"},
	"Taskfile.yaml":                {"task"},
	"Earthfile":                    {"earthly"},
	"turbo.json":                   {"turbo"},
	"nx.json":                      {"nx"},
	"lerna.json":                   {"lerna"},
	"biome.json":                   {"biome"},
	"buf.yaml":                     {"buf"},
	"buf.gen.yaml":                 {"buf"},
	"sqlc.yaml":                    {"sqlc"},
	"atlas.hcl":                    {"atlas"},
	"schema.prisma":                {"prisma"},
	"alembic.ini":                  {"alembic"},
	"pubspec.yaml":                 {"flutter", "dart"},
	"dune-project":                 {"dune", "opam"},
	"stack.yaml":                   {"stack"},
	"elm.json":                     {"elm"},
	"gleam.toml":                   {"gleam"},
	"rebar.config":                 {"rebar3"},
	"uv.lock":                      {"uv"},
	"poetry.lock":                  {"poetry"},
	"pdm.lock":                     {"pdm"},
	".pre-commit-config.yaml":      {"pre-commit"},
	"lefthook.yml":                 {"lefthook"},
	"lefthook.yaml":                {"lefthook"},
	"tox.ini":                      {"tox"},
	"noxfile.py":                   {"nox"},
	"Package.swift":                {"swift"},
	"Podfile":                      {"pod"},
	"build.sbt":                    {"sbt"},
	"project.clj":                  {"lein"},
	"deps.edn":                     {"clojure", "clj"},
	"pants.toml":                   {"pants"},
	"BUCK":                         {"buck2"},
	".buckconfig":                  {"buck2"},
	"tsconfig.json":                {"tsc"},
	"Tiltfile":                     {"tilt"},
	"skaffold.yaml":                {"skaffold"},
	"playwright.config.ts":         {"playwright"},
	"cypress.config.ts":            {"cypress"},
	"vitest.config.ts":             {"vitest"},
	"jest.config.js":               {"jest"},
	"jest.config.ts":               {"jest"},
	".golangci.yml":                {"golangci-lint"},
	".golangci.yaml":               {"golangci-lint"},
	"dbt_project.yml":              {"dbt"},
	"drizzle.config.ts":            {"drizzle-kit"},
	"wrangler.toml":                {"wrangler"},
	"ProjectVersion.txt":           nil, // a Unity project: its editor is named by a variable
	"openocd.cfg":                  {"openocd"},
	"*.sbatch":                     {"sbatch", "squeue", "sacct", "scancel", "srun", "sinfo", "sstat"},
	"*.slurm":                      {"sbatch", "squeue", "sacct", "scancel", "srun", "sinfo", "sstat"},
	"foundry.toml":                 {"forge", "cast", "anvil", "chisel"},
	"MLproject":                    {"mlflow"},
	"dvc.lock":                     {"dvc"},
	"*.cabal":                      {"cabal"},
	"*.opam":                       {"opam", "dune"},
	"*.ipynb":                      {"jupyter", "jupyter-lab", "jupyter-notebook"},
	"Project.toml":                 {"julia"},
	"JuliaProject.toml":            {"julia"},
	"renv.lock":                    {"Rscript", "R"},
	"DESCRIPTION":                  {"Rscript", "R"},
	"pyproject.toml":               nil, // [tool.X] sections (below)
	".tool-versions":               nil, // first column (below)
	"mise.toml":                    nil,
	".mise.toml":                   nil,
	"package.json":                 nil,
	"Makefile":                     nil,
	"makefile":                     nil,
	"GNUmakefile":                  nil,
	".gitattributes":               nil,
	".gitlab-ci.yml":               nil,
	"Jenkinsfile":                  nil,
	"azure-pipelines.yml":          nil,
	"bitbucket-pipelines.yml":      nil,
	"AGENTS.md":                    nil,
	"CLAUDE.md":                    nil,
	"GEMINI.md":                    nil,
	".github/workflows/*.yml":      nil,
	".github/workflows/*.yaml":     nil,
	".circleci/config.yml":         nil,
	".buildkite/pipeline.yml":      nil,
	".devcontainer/*.sh":           nil,
	"*.mk":                         nil,
	"*.sh":                         nil,
	"*.bash":                       nil,
	"*.ps1":                        nil,
	"*.bat":                        nil,
	"*.cmd":                        nil,
	".github/actions/*/action.yml": nil,
}

// ToolchainFile reports whether the workspace file rel (relative,
// slash-separated) may declare tools the workspace uses.
func ToolchainFile(rel string) bool {
	_, ok := toolchainFileKind(rel)
	return ok
}

// toolchainFileKind is the toolchainByFile key rel matches.
func toolchainFileKind(rel string) (string, bool) {
	if rel == ".git/config" {
		return rel, true // its remotes: the repositories the workspace's own (GitRemoteRepos)
	}
	base := path.Base(rel)
	dir := path.Dir(rel)
	if dir == "." {
		dir = ""
	}
	// Whole relative patterns first (CI, dev container scripts).
	for _, k := range []string{".github/workflows/*.yml", ".github/workflows/*.yaml", ".circleci/config.yml",
		".buildkite/pipeline.yml", ".devcontainer/*.sh", ".github/actions/*/action.yml"} {
		if ok, _ := path.Match(k, rel); ok {
			return k, true
		}
	}
	if _, ok := toolchainByFile[base]; ok {
		switch base {
		case "AGENTS.md", "CLAUDE.md":
			// The repository's own, in its first levels.
			if strings.Count(rel, "/") > 3 {
				return "", false
			}
		case "GEMINI.md", ".gitlab-ci.yml", "Jenkinsfile",
			"azure-pipelines.yml", "bitbucket-pipelines.yml", ".tool-versions", "mise.toml", ".mise.toml":
			if dir != "" {
				return "", false
			}
		}
		if vendoredPath(rel) {
			return "", false
		}
		return base, true
	}
	if i := strings.LastIndexByte(base, '.'); i > 0 {
		ext := "*" + base[i:]
		if strings.HasSuffix(base, ".nomad.hcl") {
			ext = "*.nomad"
		}
		if _, ok := toolchainByFile[ext]; ok && !vendoredPath(rel) {
			return ext, true
		}
	}
	return "", false
}

// vendoredPath reports whether rel lies in a tree of someone else's
// code or of build output (its files declare nothing of the project).
func vendoredPath(rel string) bool {
	for _, seg := range strings.Split(rel, "/") {
		switch seg {
		case "node_modules", "vendor", "third_party", "third-party", "external", "deps", "_deps", "build", "dist", "out",
			"target", ".venv", "venv", "site-packages", "Pods", "Library", "Temp", ".pio", "examples", "example",
			"community", "fixtures", "testdata", ".git", "bower_components", "jspm_packages", ".cache":
			return true
		}
	}
	return false
}

// DeclaredTools calls add with the toolchain key of every program the
// workspace file rel (content b, at most MaxToolchainFileBytes read)
// declares.
func DeclaredTools(rel string, b []byte, add func(key string)) {
	kind, ok := toolchainFileKind(rel)
	if !ok {
		return
	}
	if len(b) > MaxToolchainFileBytes {
		b = b[:MaxToolchainFileBytes]
	}
	for _, k := range toolchainByFile[kind] {
		add(k)
	}
	text := string(b)
	switch kind {
	case "pyproject.toml":
		for _, l := range strings.Split(text, "\n") {
			l = strings.TrimSpace(l)
			if rest, ok := strings.CutPrefix(l, "[tool."); ok {
				name := strings.FieldsFunc(rest, func(c rune) bool { return c == '.' || c == ']' })
				if len(name) > 0 && validProgram(name[0]) {
					add(name[0])
				}
			}
		}
	case ".tool-versions":
		add("asdf")
		add("mise")
		for _, l := range strings.Split(text, "\n") {
			if f := strings.Fields(l); len(f) > 1 && !strings.HasPrefix(f[0], "#") && validProgram(f[0]) {
				add(f[0])
			}
		}
	case "mise.toml", ".mise.toml":
		add("mise")
		in := false
		for _, l := range strings.Split(text, "\n") {
			l = strings.TrimSpace(l)
			if strings.HasPrefix(l, "[") {
				in = l == "[tools]"
				continue
			}
			if k, _, ok := strings.Cut(l, "="); ok && in {
				k = strings.Trim(strings.TrimSpace(k), `"'`)
				if i := strings.LastIndexAny(k, ":/"); i >= 0 {
					k = k[i+1:]
				}
				if validProgram(k) {
					add(k)
				}
			}
		}
	case "package.json":
		var pj struct {
			Scripts         map[string]string `json:"scripts"`
			DevDependencies map[string]string `json:"devDependencies"`
		}
		if json.Unmarshal(b, &pj) == nil {
			for _, k := range slices.Sorted(maps.Keys(pj.Scripts)) {
				commandPrograms(pj.Scripts[k], add)
			}
			for _, name := range slices.Sorted(maps.Keys(pj.DevDependencies)) {
				if strings.HasPrefix(name, "@") && strings.Count(name, "/") == 1 && len(name) <= 128 {
					add(name) // the package, as a runner names it
				}
				if i := strings.LastIndexByte(name, '/'); i >= 0 {
					name = name[i+1:]
				}
				if validProgram(name) {
					add(name)
				}
			}
		}
	case ".gitattributes":
		if strings.Contains(text, "filter=lfs") {
			add("git-lfs")
		}
	case "Makefile", "makefile", "GNUmakefile", "*.mk":
		for _, l := range strings.Split(text, "\n") {
			if strings.HasPrefix(l, "\t") {
				commandPrograms(l, add)
			}
		}
	case "justfile", "Justfile", ".justfile", "Taskfile.yml", "Taskfile.yaml":
		for _, l := range strings.Split(text, "\n") {
			if strings.HasPrefix(l, " ") || strings.HasPrefix(l, "\t") {
				commandPrograms(strings.TrimPrefix(strings.TrimSpace(l), "- "), add)
			}
		}
	case ".github/workflows/*.yml", ".github/workflows/*.yaml", ".gitlab-ci.yml", ".circleci/config.yml", ".buildkite/pipeline.yml",
		"azure-pipelines.yml", "bitbucket-pipelines.yml", ".github/actions/*/action.yml":
		ciPrograms(text, add)
	case "Jenkinsfile", "*.sh", "*.bash", "*.ps1", "*.bat", "*.cmd", ".devcontainer/*.sh":
		for _, l := range strings.Split(text, "\n") {
			commandPrograms(l, add)
		}
	case "AGENTS.md", "CLAUDE.md", "GEMINI.md":
		markdownPrograms(text, add)
	case ".git/config":
		GitRemoteRepos(b, add)
	}
}

// ciPrograms adds the programs of a CI file's run: and script: steps.
func ciPrograms(text string, add func(string)) {
	lines := strings.Split(text, "\n")
	for i := 0; i < len(lines); i++ {
		l := lines[i]
		t := strings.TrimSpace(l)
		t = strings.TrimPrefix(t, "- ")
		var rest string
		var ok bool
		for _, k := range []string{"run:", "script:", "command:", "before_script:", "after_script:"} {
			if rest, ok = strings.CutPrefix(t, k); ok {
				break
			}
		}
		if !ok {
			continue
		}
		rest = strings.TrimSpace(rest)
		if rest != "" && rest != "|" && rest != ">" && rest != "|-" && rest != ">-" {
			commandPrograms(rest, add)
			continue
		}
		// A block: the more indented lines that follow (a script list's
		// "- cmd" items too).
		ind := len(l) - len(strings.TrimLeft(l, " "))
		for i+1 < len(lines) {
			n := lines[i+1]
			if strings.TrimSpace(n) == "" {
				i++
				continue
			}
			if len(n)-len(strings.TrimLeft(n, " ")) <= ind && !strings.HasPrefix(strings.TrimSpace(n), "- ") {
				break
			}
			if len(n)-len(strings.TrimLeft(n, " ")) < ind {
				break
			}
			commandPrograms(strings.TrimPrefix(strings.TrimSpace(n), "- "), add)
			i++
		}
	}
}

// markdownPrograms adds the programs of a Markdown file's code: fenced
// blocks and inline code spans.
func markdownPrograms(text string, add func(string)) {
	fenced := false
	for _, l := range strings.Split(text, "\n") {
		t := strings.TrimSpace(l)
		if strings.HasPrefix(t, "```") || strings.HasPrefix(t, "~~~") {
			fenced = !fenced
			continue
		}
		if fenced {
			commandPrograms(strings.TrimPrefix(strings.TrimPrefix(t, "$ "), "> "), add)
			continue
		}
		for n := 0; n < 64; n++ {
			i := strings.IndexByte(t, '`')
			if i < 0 {
				break
			}
			j := strings.IndexByte(t[i+1:], '`')
			if j < 0 {
				break
			}
			commandPrograms(t[i+1:i+1+j], add)
			t = t[i+1+j+1:]
		}
	}
}

// commandSeparators split a command line into simple commands.
var commandSeparators = strings.NewReplacer("&&", "\n", "||", "\n", ";", "\n", "|", "\n", "$(", "\n", "`", "\n", "(", "\n")

// commandPrograms adds the program of every simple command of a command
// line as written in a declaring file (split at && || ; | and $( …).
func commandPrograms(line string, add func(string)) {
	if len(line) > 4096 {
		line = line[:4096]
	}
	line = commandSeparators.Replace(line)
	for _, seg := range strings.Split(line, "\n") {
		f := strings.Fields(seg)
		for len(f) > 0 {
			w := strings.TrimLeft(f[0], "@-+")
			switch {
			case w == "" || w == "&" || w == "sudo" || w == "exec" || w == "time" || w == "env" || w == "then" || w == "do" ||
				w == "else" || w == "call" || w == "run:" || w == "$" || w == "!" || w == "{" || w == "command":
				f = f[1:]
				continue
			case strings.Contains(w, "=") && !strings.HasPrefix(w, "$") && isIdent(w[:strings.IndexByte(w, '=')]):
				f = f[1:]
				continue
			}
			break
		}
		if len(f) == 0 {
			continue
		}
		w := strings.Trim(strings.TrimLeft(f[0], "@-+"), `"'`)
		switch {
		case w == "git" && len(f) > 1 && f[1] == "lfs":
			add("git-lfs")
		case strings.HasPrefix(w, "$env:") || strings.HasPrefix(w, "${env:"):
			v := strings.Trim(strings.TrimPrefix(strings.TrimPrefix(w, "$"), "{"), "}")
			v = strings.TrimPrefix(v, "env:")
			if isIdent(v) {
				add("$" + v)
			}
		case strings.HasPrefix(w, "$"):
			v := strings.TrimSuffix(strings.TrimPrefix(strings.TrimPrefix(w, "$"), "{"), "}")
			if isIdent(v) {
				add("$" + v)
			}
		case strings.HasPrefix(w, "%") && strings.HasSuffix(w, "%") && len(w) > 2:
			if v := w[1 : len(w)-1]; isIdent(v) {
				add("$" + v)
			}
		case strings.Contains(w, "/"):
			if strings.HasPrefix(w, "./") && validProgram(path.Base(w)) {
				add(path.Base(w))
			}
		case validProgram(w) && !toolchainNever[w]:
			add(w)
		}
	}
}

// validProgram reports whether w can be a program's base name.
func validProgram(w string) bool {
	if w == "" || len(w) > 64 || w[0] == '.' || w[0] == '-' {
		return false
	}
	for i := 0; i < len(w); i++ {
		c := w[i]
		if !(isAlnum(c) || c == '_' || c == '-' || c == '.' || c == '+') {
			return false
		}
	}
	return !bytes.ContainsAny([]byte(w[:1]), "0123456789")
}
