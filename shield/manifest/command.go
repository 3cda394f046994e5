package manifest

import (
	"path"
	"strings"
)

// Command judges a package-manager command line that edits manifests or
// configuration. ok is false when argv is not such a command.
func Command(argv []string) (changes []Change, files []string, ok bool) {
	if len(argv) == 0 || len(argv) > maxEntries {
		return nil, nil, false
	}
	prog := path.Base(strings.ReplaceAll(argv[0], "\\", "/"))
	prog = strings.TrimSuffix(prog, ".exe")
	args := argv[1:]
	switch prog {
	case "python", "python3":
		if len(args) >= 2 && args[0] == "-m" && (args[1] == "pip" || args[1] == "pip3") {
			return Command(append([]string{"pip"}, args[2:]...))
		}
		return nil, nil, false
	case "go":
		changes, files, ok = goCommand(args)
	case "npm", "pnpm", "yarn", "bun":
		changes, files, ok = npmCommand(prog, args)
	case "cargo":
		changes, files, ok = cargoCommand(args)
	case "pip", "pip3":
		changes, files, ok = pipCommand(args)
	case "poetry", "pdm", "uv":
		changes, files, ok = pyToolCommand(prog, args)
	case "bundle", "bundler", "gem":
		changes, files, ok = rubyCommand(prog, args)
	case "git":
		changes, files, ok = gitCommand(args)
	default:
		return nil, nil, false
	}
	return finish(changes), files, ok
}

// opt reads a flag at args[i]: "--name=v" or "--name v" (or "-n v"). It
// returns the value and how many args it took, or 0.
func opt(args []string, i int, names ...string) (string, int) {
	a := args[i]
	for _, n := range names {
		if a == n {
			if i+1 < len(args) {
				return args[i+1], 2
			}
			return "", 1
		}
		if strings.HasPrefix(a, n+"=") {
			return a[len(n)+1:], 1
		}
	}
	return "", 0
}

// npmValuedGlobals are the options before the verb that take a value, by
// program (pnpm's -w is --workspace-root and takes none; npm's names a
// workspace).
var npmValuedGlobals = map[string][]string{
	"npm":  {"-w", "--workspace", "--prefix", "-C"},
	"pnpm": {"--filter", "-F", "-C", "--dir", "--filter-prod", "--workspace-dir"},
	"yarn": {"--cwd"},
	"bun":  {"--cwd", "--filter"},
}

// installValued are, by program, the options after an install or add
// verb that take a value as a word of their own (--registry URL, -w web):
// what follows such an option is its value, not a package. One table for
// every reader of an install line (the manifest's change here, Shield's
// look-alike packages). Short options mean different things per program:
// npm's -s is --silent and its -w names a workspace; pnpm's -w is
// --workspace-root; pip's -f is --find-links, dotnet's --framework.
var installValued = func() map[string]map[string]bool {
	m := map[string][]string{
		"npm":      {"--prefix", "-w", "--workspace", "--tag", "--omit", "--include", "--cache", "-C", "--install-strategy", "--save-prefix", "--registry", "--userconfig", "--globalconfig"},
		"pnpm":     {"--filter", "-F", "-C", "--dir", "--registry", "--tag", "--workspace-dir", "--filter-prod", "--save-prefix", "--config-dir", "--store-dir", "--virtual-store-dir"},
		"yarn":     {"--cwd", "--registry", "--tag", "--modules-folder", "--cache-folder"},
		"bun":      {"--cwd", "--filter", "--registry", "-c", "--config", "--backend", "--cache-dir"},
		"pip":      {"-r", "--requirement", "-c", "--constraint", "-e", "--editable", "-i", "--index-url", "--extra-index-url", "-f", "--find-links", "-t", "--target", "--prefix", "--root", "--platform", "--python-version", "--implementation", "--abi", "--src", "--upgrade-strategy", "--progress-bar", "--log", "--proxy", "--cert", "--client-cert", "--cache-dir", "--trusted-host", "--report", "--config-settings", "-C"},
		"uv":       {"-r", "--requirements", "--requirement", "-c", "--constraint", "--constraints", "-e", "--editable", "-i", "--index-url", "--extra-index-url", "--index", "--default-index", "-f", "--find-links", "--group", "--optional", "--extra", "-p", "--python", "--package", "--project", "--directory", "--target", "--prefix", "--branch", "--tag", "--rev", "--marker", "-m", "--script", "--upgrade-package", "-P", "--with", "--from"},
		"poetry":   {"-G", "--group", "-E", "--extras", "--source", "--python", "--platform", "-C", "--directory", "-P", "--project", "--markers"},
		"pdm":      {"-G", "--group", "-p", "--project", "-L", "--lockfile", "-v", "--venv", "--save-strategy", "--update-strategy"},
		"pipenv":   {"-r", "--requirements", "-i", "--index", "--extra-index-url", "--python", "--categories"},
		"cargo":    {"--git", "--branch", "--tag", "--rev", "--path", "--registry", "--index", "-p", "--package", "--features", "-F", "--rename", "--target", "--manifest-path", "--version", "--vers", "--root", "-j", "--jobs", "--profile", "--config", "-Z", "--target-dir", "--bin", "--example"},
		"go":       {"-C", "-modfile", "-o", "-tags", "-ldflags", "-gcflags", "-asmflags", "-p", "-mod", "-toolexec", "-overlay", "-pgo"},
		"gem":      {"-v", "--version", "-s", "--source", "-i", "--install-dir", "-n", "--bindir", "--platform", "-g", "--file", "--build-root", "-P", "--trust-policy"},
		"bundle":   {"-v", "--version", "-s", "--source", "-g", "--group", "--git", "--path", "--branch", "--ref", "--require", "--glob", "--github"},
		"composer": {"-d", "--working-dir"},
		"dart":     {"--path", "--git-url", "--git-ref", "--git-path", "--hosted-url", "--directory", "-C", "--sdk"},
		"deno":     {"-c", "--config", "--lock", "--import-map", "--cert", "--allow-scripts"},
		"dotnet":   {"-v", "--version", "-s", "--source", "-f", "--framework", "--package-directory", "--project"},
		"nuget":    {"-Version", "-Source", "-OutputDirectory", "-Framework", "-ConfigFile", "-FallbackSource", "-v", "-s", "-o"},
	}
	m["pip3"], m["pipx"], m["flutter"] = m["pip"], m["pip"], m["dart"]
	out := make(map[string]map[string]bool, len(m))
	for prog, opts := range m {
		out[prog] = map[string]bool{}
		for _, o := range opts {
			out[prog][o] = true
		}
	}
	return out
}()

// InstallTakesValue reports whether option o, after prog's install or
// add verb, takes the next word as its value (installValued).
func InstallTakesValue(prog, o string) bool { return installValued[prog][o] }

// installValuedList is prog's installValued options, for opt.
func installValuedList(prog string) []string {
	out := make([]string, 0, len(installValued[prog]))
	for o := range installValued[prog] {
		out = append(out, o)
	}
	return out
}

// SkipNPMGlobals returns args (what follows npm, pnpm, yarn or bun)
// without the options before the verb, those that take a value taking
// it (pnpm --filter @acme/api add x: the verb is add).
func SkipNPMGlobals(prog string, args []string) []string {
	for len(args) > 0 && strings.HasPrefix(args[0], "-") {
		if _, n := opt(args, 0, npmValuedGlobals[prog]...); n == 2 && !strings.Contains(args[0], "=") {
			args = args[1:]
		}
		args = args[1:]
	}
	return args
}

// npmGuardFlag judges an npm, pnpm, yarn or bun option that turns off a
// guard of the install for this run (rules 15): lifecycle scripts or
// every dependency's build allowed (--ignore-scripts=false,
// --config.dangerously-allow-all-builds=true), the release-age gate
// opened (--config.minimum-release-age=0), the lockfile not read or not
// enforced (--no-package-lock, --no-frozen-lockfile, --no-immutable),
// the store's integrity not checked, TLS not verified. The npm config
// keys npmKey judges count too (--registry is judged as a source apart).
func npmGuardFlag(a string) (Change, bool) {
	if !strings.HasPrefix(a, "--") || strings.HasPrefix(a, "--@") {
		return Change{}, false
	}
	k, v, has := strings.Cut(a[2:], "=")
	k = strings.ToLower(k)
	if !has {
		v = "true"
		if rest, ok := strings.CutPrefix(k, "no-"); ok {
			k, v = rest, "false"
		}
	}
	k = strings.TrimPrefix(k, "config.")
	ch := func(kind string) (Change, bool) {
		return Change{kind, clean(k), "now " + clip(v) + " for this run", ""}, true
	}
	switch k {
	case "ignore-scripts":
		if isFalse(v) {
			return ch(KindRuns)
		}
	case "dangerously-allow-all-builds", "unsafe-perm", "enable-scripts", "enablescripts":
		if !isFalse(v) {
			return ch(KindRuns)
		}
	case "minimum-release-age", "minimumreleaseage", "min-release-age", "npm-minimal-age-gate", "npmminimalagegate":
		if v == "0" || v == "" || isFalse(v) {
			return ch(KindSource)
		}
	case "package-lock", "frozen-lockfile", "lockfile", "immutable", "enable-immutable-installs", "prefer-frozen-lockfile":
		if isFalse(v) {
			return ch(KindSource)
		}
	case "verify-store-integrity", "check-integrity", "enable-hardened-mode", "hardened-mode":
		if isFalse(v) {
			return ch(KindChecksum)
		}
	case "skip-integrity-check", "no-verify-store-integrity":
		if !isFalse(v) {
			return ch(KindChecksum)
		}
	case "registry":
		return Change{}, false // judged as a source where it stands
	default:
		if f, ok := npmKey(k, v); ok && f.flag {
			return ch(f.kind)
		}
	}
	return Change{}, false
}

func src(k, v string) Change { return Change{KindSource, clean(k), "now " + clip(v), ""} }

func goCommand(args []string) ([]Change, []string, bool) {
	if len(args) < 1 {
		return nil, nil, false
	}
	var out []Change
	switch {
	case args[0] == "get" || len(args) >= 2 && args[0] == "mod" && (args[1] == "tidy" || args[1] == "download"):
		return nil, []string{"go.mod", "go.sum"}, true
	case args[0] == "env":
		w := false
		for _, a := range args[1:] {
			switch {
			case a == "-w":
				w = true
			case a == "-u":
				return nil, nil, true
			case w && strings.Contains(a, "="):
				k, v, _ := strings.Cut(a, "=")
				out = append(out, Env(k, v)...)
			}
		}
		if !w {
			return nil, nil, false
		}
		return out, nil, true
	case len(args) >= 2 && (args[0] == "mod" || args[0] == "work") && args[1] == "edit":
		file := "go.mod"
		if args[0] == "work" {
			file = "go.work"
		}
		rest := args[2:]
		for i := 0; i < len(rest); i++ {
			if v, n := opt(rest, i, "-replace", "--replace"); n > 0 {
				old, nw, _ := strings.Cut(v, "=")
				old, _, _ = strings.Cut(old, "@")
				if np, nv, _ := strings.Cut(nw, "@"); !(np == old && nv != "") {
					c := src("replace "+old, nw)
					if localPath(np) {
						c.Local = np
					}
					out = append(out, c)
				}
				i += n - 1
				continue
			}
			if v, n := opt(rest, i, "-use", "--use"); n > 0 {
				if leaves(v) {
					c := src("use "+v, v)
					c.Local = v
					out = append(out, c)
				}
				i += n - 1
				continue
			}
			if v, n := opt(rest, i, "-tool", "--tool"); n > 0 {
				out = append(out, Change{KindRuns, "tool " + clean(v), "now tool " + clip(v), ""})
				i += n - 1
				continue
			}
			if !strings.HasPrefix(rest[i], "-") && (strings.HasSuffix(rest[i], ".mod") || strings.HasSuffix(rest[i], ".work")) {
				file = rest[i]
			}
		}
		return out, []string{file}, true
	case len(args) >= 2 && args[0] == "work" && args[1] == "use":
		for _, a := range args[2:] {
			if !strings.HasPrefix(a, "-") && leaves(a) {
				c := src("use "+a, a)
				c.Local = a
				out = append(out, c)
			}
		}
		return out, []string{"go.work"}, true
	case len(args) >= 2 && args[0] == "work" && (args[1] == "init" || args[1] == "sync"):
		for _, a := range args[2:] {
			if !strings.HasPrefix(a, "-") && leaves(a) {
				out = append(out, src("use "+a, a))
			}
		}
		return out, []string{"go.work"}, true
	case len(args) >= 2 && args[0] == "mod" && args[1] == "init":
		return nil, []string{"go.mod"}, true
	}
	return nil, nil, false
}

var npmInstallVerbs = set("install", "i", "in", "ins", "inst", "insta", "instal", "isnt", "isnta", "isntal", "isntall", "add")
var npmBenignVerbs = set("update", "up", "upgrade", "uninstall", "un", "remove", "rm", "r", "unlink", "dedupe", "ddp", "prune", "ci", "remove")

// npmSpecSource reports whether an install argument comes from elsewhere
// than the registry, and the dependency name it adds.
func npmSpecSource(a string) (name string, other bool) {
	s := a
	// name@spec, @scope/name@spec
	at := strings.LastIndexByte(s, '@')
	if strings.Contains(s, "://") || strings.HasPrefix(s, "git@") || strings.HasPrefix(s, ".") || strings.HasPrefix(s, "/") || strings.HasPrefix(s, "~") {
		return s, true
	}
	if at > 0 {
		name, spec := s[:at], s[at+1:]
		if i := strings.IndexByte(name[1:], '@'); i >= 0 { // name@npm:other@1
			spec = s[i+2:]
			name = s[:i+1]
		}
		return name, !npmRegistrySpec(spec)
	}
	if strings.Contains(s, ":") || strings.HasSuffix(s, ".tgz") || strings.HasSuffix(s, ".tar.gz") {
		return s, true
	}
	if strings.HasPrefix(s, "@") {
		return s, false
	}
	if strings.Contains(s, "/") { // user/repo on GitHub
		return s, true
	}
	return s, false
}

func npmCommand(prog string, args []string) ([]Change, []string, bool) {
	// drop leading global flags (the ones that take a value with it:
	// pnpm --filter @acme/api add x names the package, not the verb);
	// a guard turned off among them still counts (rules 15)
	var guards []Change
	after := SkipNPMGlobals(prog, args)
	for _, a := range args[:len(args)-len(after)] {
		if c, ok := npmGuardFlag(a); ok {
			guards = append(guards, c)
		}
	}
	args = after
	if len(args) == 0 {
		return nil, nil, false
	}
	lock := map[string]string{"npm": "package-lock.json", "pnpm": "pnpm-lock.yaml", "yarn": "yarn.lock", "bun": "bun.lockb"}[prog]
	files := []string{"package.json", lock}
	verb, rest := args[0], args[1:]
	out := guards
	switch {
	case npmInstallVerbs[verb] || prog == "yarn" && verb == "add" || prog == "bun" && verb == "add":
		if prog == "yarn" && verb == "install" || prog == "pnpm" && verb == "install" && len(rest) == 0 {
			files = files[1:]
		}
		for i := 0; i < len(rest); i++ {
			a := rest[i]
			if a == "-g" || a == "--global" || a == "--location=global" {
				return nil, nil, false
			}
			if v, n := opt(rest, i, "--registry"); n > 0 {
				if !defaultNpmRegistry(v) {
					out = append(out, src("registry", v))
				}
				i += n - 1
				continue
			}
			if v, n := opt(rest, i, "--userconfig", "--globalconfig"); n > 0 {
				out = append(out, src(strings.SplitN(a, "=", 2)[0], v))
				i += n - 1
				continue
			}
			if _, n := opt(rest, i, installValuedList(prog)...); n > 0 {
				i += n - 1 // (pnpm's -w takes no value: pnpm add -w x names x)
				continue
			}
			if strings.HasPrefix(a, "--@") && strings.Contains(a, ":registry") {
				k, v, _ := strings.Cut(a[2:], "=")
				out = append(out, src(k, v))
				continue
			}
			if c, ok := npmGuardFlag(a); ok {
				out = append(out, c)
				continue
			}
			if strings.HasPrefix(a, "-") {
				continue
			}
			if name, other := npmSpecSource(a); other {
				out = append(out, src("dependencies."+name, a))
			}
		}
		return out, files, true
	case npmBenignVerbs[verb]:
		for _, a := range rest {
			if c, ok := npmGuardFlag(a); ok {
				out = append(out, c)
			}
		}
		return out, files, true
	case verb == "pkg" && len(rest) >= 1:
		if rest[0] != "set" {
			return nil, []string{"package.json"}, true
		}
		for _, a := range rest[1:] {
			if strings.HasPrefix(a, "-") {
				continue
			}
			k, v, _ := strings.Cut(a, "=")
			out = append(out, npmPkgSet(k, v)...)
		}
		return out, []string{"package.json"}, true
	case verb == "config" && len(rest) >= 1 || verb == "set":
		if verb == "config" {
			if rest[0] != "set" {
				return nil, nil, true
			}
			rest = rest[1:]
		}
		var pos []string
		var cfgFiles []string
		for i := 0; i < len(rest); i++ {
			if v, n := opt(rest, i, "--location", "-L"); n > 0 {
				if v == "project" {
					cfgFiles = []string{".npmrc"}
				}
				i += n - 1
				continue
			}
			if rest[i] == "--home" || rest[i] == "-H" || rest[i] == "--global" || rest[i] == "-g" {
				continue
			}
			pos = append(pos, rest[i])
		}
		if prog == "yarn" && cfgFiles == nil {
			cfgFiles = []string{".yarnrc.yml"}
		}
		for i := 0; i < len(pos); i++ {
			k, v, has := strings.Cut(pos[i], "=")
			if !has && i+1 < len(pos) {
				v = pos[i+1]
				i++
			}
			out = append(out, npmConfigSet(k, v)...)
		}
		return out, cfgFiles, true
	case prog == "yarn" && verb == "set" && len(rest) >= 2 && rest[0] == "version":
		if v := rest[1]; strings.Contains(v, "/") || strings.Contains(v, ":") || strings.HasPrefix(v, ".") {
			out = append(out, Change{KindRuns, "yarnPath", "now " + clip(v), ""})
		}
		return out, []string{".yarnrc.yml"}, true
	case prog == "yarn" && verb == "plugin" && len(rest) >= 2 && rest[0] == "import":
		return []Change{{KindRuns, "plugins " + clean(rest[1]), "now " + clip(rest[1]), ""}}, []string{".yarnrc.yml"}, true
	}
	return nil, nil, false
}

// npmPkgSet judges `npm pkg set key=value`.
func npmPkgSet(k, v string) []Change {
	fs := newFacts()
	switch {
	case strings.HasPrefix(k, "scripts."):
		if npmLifecycle[k[len("scripts."):]] {
			fs.add(KindRuns, k, v)
		}
	case strings.HasPrefix(k, "overrides.") || strings.HasPrefix(k, "resolutions.") || strings.HasPrefix(k, "pnpm.overrides."):
		npmDepFact(fs, k, v)
	case k == "publishConfig.registry" || k == "config.registry" || strings.HasSuffix(k, ":registry") && (strings.HasPrefix(k, "publishConfig.") || strings.HasPrefix(k, "config.")):
		if !defaultNpmRegistry(v) {
			fs.add(KindSource, k, v)
		}
	case k == "packageManager":
		if strings.Contains(v, "://") || strings.Contains(v, "file:") {
			fs.add(KindRuns, k, v)
		}
	default:
		for _, sec := range npmDepSections {
			if strings.HasPrefix(k, sec+".") {
				npmDepFact(fs, k, v)
			}
		}
	}
	out, _ := diffFacts(newFacts(), fs)
	return out
}

// npmConfigSet judges `npm|pnpm|yarn config set key value`.
func npmConfigSet(k, v string) []Change {
	switch k {
	case "npmRegistryServer", "npmPublishRegistry":
		if defaultNpmRegistry(v) {
			return nil
		}
		return []Change{src(k, v)}
	case "yarnPath":
		return []Change{{KindRuns, k, "now " + clip(v), ""}}
	case "enableStrictSsl":
		if isFalse(v) {
			return []Change{{KindChecksum, k, "now " + clip(v), ""}}
		}
		return nil
	case "unsafeHttpWhitelist", "caFilePath", "httpsCaFilePath":
		return []Change{{KindChecksum, k, "now " + clip(v), ""}}
	case "yarn-path":
		return []Change{{KindRuns, k, "now " + clip(v), ""}}
	}
	if strings.HasPrefix(k, "npmScopes.") && strings.HasSuffix(k, "RegistryServer") {
		return []Change{src(k, v)}
	}
	if f, ok := npmKey(k, v); ok && f.flag {
		return []Change{{f.kind, clean(k), "now " + clip(v), ""}}
	}
	return nil
}

func cargoCommand(args []string) ([]Change, []string, bool) {
	// rules 16: --config KEY=VALUE given to any cargo verb (before or
	// after it) changes where crates come from for this run as
	// .cargo/config.toml would: source replacement, a registry's index,
	// TLS checks off
	var cfg []Change
	for i := 0; i < len(args); i++ {
		if v, n := opt(args, i, "--config"); n > 0 {
			k, val, _ := strings.Cut(v, "=")
			k = strings.Trim(strings.TrimSpace(k), `"'`)
			val = strings.Trim(strings.TrimSpace(val), `"'`)
			switch {
			case strings.HasPrefix(k, "source.") || strings.HasPrefix(k, "registries.") || strings.HasPrefix(k, "registry.") || k == "net.git-fetch-with-cli" ||
				strings.HasPrefix(k, "patch."): // rules 22: a crate patched from elsewhere
				cfg = append(cfg, src("config "+k, val))
			case k == "http.check-revoke" || k == "http.ssl-version" || k == "http.cainfo":
				cfg = append(cfg, Change{KindChecksum, clean("config " + k), "now " + clip(val), ""})
			}
			i += n - 1
		}
	}
	for len(args) > 0 && strings.HasPrefix(args[0], "-") {
		if _, n := opt(args, 0, "--config", "-Z", "-C", "--manifest-path"); n == 2 && !strings.Contains(args[0], "=") {
			args = args[1:]
		}
		args = args[1:]
	}
	out, files, ok := cargoVerb(args)
	if len(cfg) > 0 {
		return append(cfg, out...), []string{"Cargo.toml", "Cargo.lock", ".cargo/config.toml"}, true
	}
	return out, files, ok
}

// cargoVerb reads a cargo verb's arguments.
func cargoVerb(args []string) ([]Change, []string, bool) {
	if len(args) == 0 {
		return nil, nil, false
	}
	files := []string{"Cargo.toml", "Cargo.lock"}
	switch args[0] {
	case "add":
	case "remove", "rm", "update", "generate-lockfile", "upgrade":
		return nil, files, true
	default:
		return nil, nil, false
	}
	var out []Change
	var names, where []string
	rest := args[1:]
	for i := 0; i < len(rest); i++ {
		if v, n := opt(rest, i, "--git", "--path", "--registry", "--index"); n > 0 {
			where = append(where, strings.TrimPrefix(strings.SplitN(rest[i], "=", 2)[0], "--")+" "+v)
			i += n - 1
			continue
		}
		if _, n := opt(rest, i, "--branch", "--tag", "--rev", "-F", "--features", "--rename", "--target", "-p", "--package", "--manifest-path", "--lockfile-path", "--config", "-Z"); n > 0 {
			i += n - 1
			continue
		}
		if !strings.HasPrefix(rest[i], "-") {
			n, _, _ := strings.Cut(rest[i], "@")
			names = append(names, n)
		}
	}
	if len(where) > 0 {
		if len(names) == 0 {
			names = []string{"(from " + where[0] + ")"}
		}
		for _, n := range names {
			out = append(out, src("dependencies."+n, strings.Join(where, " ")))
		}
	}
	return out, files, true
}

// pySpecSource reports whether an install argument names a URL, VCS or
// path instead of an index package.
func pySpecSource(a string) bool {
	if pyURLish(a) {
		return true
	}
	_, u, _, ok := pyReq(a)
	return ok && u != ""
}

var pipIndexOpts = []string{"-i", "--index-url", "--extra-index-url", "-f", "--find-links", "--trusted-host", "--index", "--default-index"}

func pipCommand(args []string) ([]Change, []string, bool) {
	if len(args) == 0 {
		return nil, nil, false
	}
	var out []Change
	switch args[0] {
	case "install":
	case "config":
		if len(args) >= 4 && args[1] == "set" {
			k := args[2]
			_, name, _ := strings.Cut(k, ".")
			switch strings.ReplaceAll(name, "_", "-") {
			case "index-url", "index":
				if !defaultPyIndex(args[3]) {
					out = append(out, src(k, args[3]))
				}
			case "extra-index-url", "find-links", "trusted-host":
				out = append(out, src(k, args[3]))
			case "cert":
				out = append(out, Change{KindChecksum, clean(k), "now " + clip(args[3]), ""})
			}
			return out, nil, true
		}
		return nil, nil, args[0] == "config"
	default:
		return nil, nil, false
	}
	rest := args[1:]
	for i := 0; i < len(rest); i++ {
		a := rest[i]
		if v, n := opt(rest, i, pipIndexOpts...); n > 0 {
			name := strings.SplitN(a, "=", 2)[0]
			if !((name == "-i" || name == "--index-url" || name == "--default-index") && defaultPyIndex(v)) {
				out = append(out, src(name, v))
			}
			i += n - 1
			continue
		}
		if v, n := opt(rest, i, "-e", "--editable"); n > 0 {
			if local := !strings.Contains(v, ":") && !strings.HasPrefix(v, "git@"); !local || leaves(v) {
				out = append(out, src("requirement "+v, v))
			}
			i += n - 1
			continue
		}
		if _, n := opt(rest, i, "-r", "--requirement", "-c", "--constraint", "-t", "--target", "--prefix", "--root", "--platform", "--python-version", "--implementation", "--abi", "--src", "--config-settings", "-C", "--global-option", "--no-binary", "--only-binary", "--progress-bar", "--log", "--cache-dir", "--proxy", "--timeout", "--retries"); n > 0 {
			i += n - 1
			continue
		}
		if strings.HasPrefix(a, "-") {
			continue
		}
		if pySpecSource(a) {
			out = append(out, src("requirement "+a, a))
		}
	}
	return out, nil, true
}

func pyToolCommand(prog string, args []string) ([]Change, []string, bool) {
	if len(args) == 0 {
		return nil, nil, false
	}
	lock := map[string]string{"poetry": "poetry.lock", "pdm": "pdm.lock", "uv": "uv.lock"}[prog]
	files := []string{"pyproject.toml", lock}
	var out []Change
	switch {
	case prog == "uv" && args[0] == "pip":
		c, _, ok := pipCommand(args[1:])
		return c, nil, ok
	case prog == "poetry" && args[0] == "source" && len(args) >= 2 && args[1] == "add":
		var pos []string
		for _, a := range args[2:] {
			if !strings.HasPrefix(a, "-") {
				pos = append(pos, a)
			}
		}
		if len(pos) >= 1 {
			u := ""
			if len(pos) >= 2 {
				u = pos[1]
			}
			out = append(out, src("[[tool.poetry.source]] "+pos[0], u))
		}
		return out, []string{"pyproject.toml"}, true
	case (prog == "poetry" || prog == "pdm") && args[0] == "config" && len(args) >= 3:
		k := args[1]
		if strings.HasPrefix(k, "repositories.") || strings.HasPrefix(k, "pypi.") && strings.HasSuffix(k, "url") || strings.HasPrefix(k, "source") {
			out = append(out, src(k, args[2]))
		}
		if strings.Contains(k, "verify_ssl") && isFalse(args[2]) || strings.HasPrefix(k, "certificates.") {
			out = append(out, Change{KindChecksum, clean(k), "now " + clip(args[2]), ""})
		}
		return out, nil, true
	case prog == "poetry" && args[0] == "self" && len(args) >= 2 && args[1] == "add":
		for _, a := range args[2:] {
			if !strings.HasPrefix(a, "-") {
				out = append(out, Change{KindRuns, "poetry plugin " + clean(a), "now " + clip(a), ""})
			}
		}
		return out, nil, true
	case args[0] == "add":
	case args[0] == "remove" || args[0] == "lock" || args[0] == "update" || args[0] == "sync" || args[0] == "install":
		return nil, files, true
	default:
		return nil, nil, false
	}
	rest := args[1:]
	for i := 0; i < len(rest); i++ {
		a := rest[i]
		if v, n := opt(rest, i, "--source", "--index", "--index-url", "--default-index", "--extra-index-url", "-f", "--find-links", "-i"); n > 0 {
			out = append(out, src(strings.SplitN(a, "=", 2)[0], v))
			i += n - 1
			continue
		}
		if v, n := opt(rest, i, "-e", "--editable"); n > 0 && (strings.HasPrefix(v, "-") == false) && prog != "uv" {
			if v != "." {
				out = append(out, src("dependency "+v, v))
			}
			i += n - 1
			continue
		}
		if _, n := opt(rest, i, "-G", "--group", "--optional", "--extra", "--python", "-p", "--package", "--marker", "-m", "--branch", "--tag", "--rev", "--bounds", "--script", "--directory", "--project", "-C", "-E", "--extras"); n > 0 {
			i += n - 1
			continue
		}
		if strings.HasPrefix(a, "-") {
			continue
		}
		_, after, has := strings.Cut(a, "@")
		if pyURLPrefix(a) || pyArchive(a) || has && pyURLish(strings.TrimSpace(after)) {
			out = append(out, src("dependency "+a, a))
		}
	}
	return out, files, true
}

func rubyCommand(prog string, args []string) ([]Change, []string, bool) {
	if len(args) == 0 {
		return nil, nil, false
	}
	var out []Change
	if prog == "gem" {
		switch args[0] {
		case "sources", "source":
			for i := 1; i < len(args); i++ {
				if v, n := opt(args, i, "-a", "--add"); n > 0 {
					if !defaultGemSource(v) {
						out = append(out, src("gem sources", v))
					}
					i += n - 1
				}
			}
			return out, nil, true
		case "install", "i", "update":
			for i := 1; i < len(args); i++ {
				if v, n := opt(args, i, "-s", "--source", "--clear-sources"); n > 0 {
					if args[i] != "--clear-sources" && !defaultGemSource(v) {
						out = append(out, src("gem --source", v))
						i += n - 1
					}
				}
			}
			return out, nil, true
		}
		return nil, nil, false
	}
	files := []string{"Gemfile", "Gemfile.lock"}
	switch args[0] {
	case "add":
		var name string
		var where []string
		rest := args[1:]
		for i := 0; i < len(rest); i++ {
			if v, n := opt(rest, i, "--git", "--github", "--source", "--path", "-s"); n > 0 {
				where = append(where, strings.SplitN(rest[i], "=", 2)[0]+" "+v)
				i += n - 1
				continue
			}
			if _, n := opt(rest, i, "--version", "-v", "--group", "-g", "--require", "-r", "--branch", "--ref", "--glob"); n > 0 {
				i += n - 1
				continue
			}
			if !strings.HasPrefix(rest[i], "-") && name == "" {
				name = rest[i]
			}
		}
		if len(where) > 0 {
			out = append(out, src("gem "+name, strings.Join(where, " ")))
		}
		return out, files, true
	case "config":
		rest := args[1:]
		if len(rest) > 0 && rest[0] == "set" {
			rest = rest[1:]
		}
		var pos []string
		cfg := []string{}
		for _, a := range rest {
			if a == "--local" {
				cfg = []string{".bundle/config"}
				continue
			}
			if strings.HasPrefix(a, "-") {
				continue
			}
			pos = append(pos, a)
		}
		if len(pos) >= 2 {
			k := "BUNDLE_" + strings.ToUpper(strings.NewReplacer(".", "__", "-", "___").Replace(pos[0]))
			for _, c := range Env(k, strings.Join(pos[1:], " ")) {
				c.Key = clean(pos[0])
				out = append(out, c)
			}
		}
		return out, cfg, true
	case "install", "update", "lock", "remove":
		return nil, files, true
	}
	return nil, nil, false
}

// localPath reports whether a replacement is a directory (go.mod's rule:
// it begins with ./, ../ or /) rather than a module path.
func localPath(p string) bool {
	return p == "." || p == ".." || strings.HasPrefix(p, "./") || strings.HasPrefix(p, "../") || strings.HasPrefix(p, "/")
}

// gitCommand reads what git writes into .gitmodules: `git submodule
// set-url [--] PATH URL` and `git config -f .gitmodules
// submodule.NAME.url URL` move where a submodule's code comes from (rules
// 21). Global options before the verb (-C DIR, -c k=v) are skipped.
func gitCommand(args []string) ([]Change, []string, bool) {
	for len(args) > 0 && strings.HasPrefix(args[0], "-") {
		if (args[0] == "-C" || args[0] == "-c") && len(args) > 1 {
			args = args[1:]
		}
		args = args[1:]
	}
	if len(args) == 0 {
		return nil, nil, false
	}
	var ops []string
	for _, a := range args[1:] {
		if a != "--" {
			ops = append(ops, a)
		}
	}
	switch {
	case args[0] == "submodule" && len(ops) >= 3 && ops[0] == "set-url":
		return []Change{{Kind: KindSource, Key: "submodule " + ops[1], Detail: "url set to " + ops[2]}}, []string{".gitmodules"}, true
	case args[0] == "config" && len(ops) >= 4 && (ops[0] == "-f" || ops[0] == "--file") && path.Base(ops[1]) == ".gitmodules" &&
		strings.HasPrefix(ops[2], "submodule.") && strings.HasSuffix(ops[2], ".url"):
		return []Change{{Kind: KindSource, Key: strings.TrimSuffix(ops[2], ".url"), Detail: "url set to " + ops[3]}}, []string{ops[1]}, true
	case args[0] == "config" && len(ops) >= 4 && (ops[0] == "-f" || ops[0] == "--file") && path.Base(ops[1]) == ".gitmodules" &&
		strings.HasPrefix(ops[2], "submodule.") && strings.HasSuffix(ops[2], ".branch") && ops[3] != "main" && ops[3] != "master":
		// rules 29: what the submodule tracks (the default branch, which
		// the recorded commit already follows, passes: rules 21)
		return []Change{{Kind: KindSource, Key: ops[2], Detail: "branch set to " + ops[3] + ": what the submodule tracks moved"}}, []string{ops[1]}, true
	case args[0] == "submodule" && len(ops) >= 2 && ops[0] == "set-branch":
		for i := 1; i < len(ops); i++ {
			if b, ok := strings.CutPrefix(ops[i], "--branch="); ok || (ops[i] == "-b" || ops[i] == "--branch") && i+1 < len(ops) {
				if !ok {
					b = ops[i+1]
				}
				return []Change{{Kind: KindSource, Key: "submodule " + ops[len(ops)-1] + " branch", Detail: "branch set to " + b + ": what the submodule tracks moved"}}, []string{".gitmodules"}, true
			}
		}
	case args[0] == "config" && len(ops) == 2 && strings.HasPrefix(ops[0], "submodule.") && strings.HasSuffix(ops[0], ".url"):
		// rules 22: the repository's own override (.git/config), which
		// the next `git submodule sync` or update fetches from
		return []Change{{Kind: KindSource, Key: strings.TrimSuffix(ops[0], ".url"), Detail: "url set to " + ops[1]}}, []string{".gitmodules"}, true
	}
	return nil, nil, false
}
