package shield

import (
	"strings"
)

// Package runners and installers that fetch code the workspace does not
// pin and run it: remote code, as `curl | sh` is, though from a
// registry. Shield is pure and cannot see node_modules, so a bare `npx
// NAME` is judged by the name: the common dev tools a workspace almost
// surely pins (devTools) run the local copy; anything else, a version
// (`pkg@x`), a scope, `--package`, or `-y`/`--yes` (install without
// asking) is remote code.

// devTools are the npx/bunx names that run the workspace's own
// devDependency in benign work.
var devTools = map[string]bool{"tsc": true, "jest": true, "eslint": true, "prettier": true, "vitest": true, "mocha": true, "ts-node": true,
	"tsx": true, "playwright": true, "next": true, "vite": true, "webpack": true, "rollup": true, "esbuild": true, "nodemon": true,
	"cypress": true, "nx": true, "turbo": true, "lerna": true, "nyc": true, "c8": true, "rimraf": true, "cross-env": true,
	"concurrently": true, "husky": true, "lint-staged": true, "stylelint": true, "prisma": true, "tsup": true, "babel": true,
	"vue-tsc": true, "svelte-kit": true, "astro": true, "nuxt": true, "ng": true, "storybook": true, "ava": true, "tap": true,
	"drizzle-kit": true, "knex": true, "typeorm": true, "sequelize": true, "jasmine": true, "karma": true, "tsc-watch": true}

var (
	// goPinned is a fixed module version: vX.Y.Z (a pre-release or a
	// pseudo-version included), which the checksum database pins.
	goPinned = mustRx(`^v\d+\.\d+\.\d+(?:-[0-9A-Za-z.-]+)?(?:\+incompatible)?$`)
	// perlNet and pyNetExec: a one-liner that fetches code and runs it.
	perlNet   = mustRx(`^-M(?:LWP|HTTP::Tiny|IO::Socket|Net::|Mojo::UserAgent|HTTP::)`)
	perlRun   = mustRx(`\b(?:eval|do|system|exec)\b`)
	pyFetch   = mustRx(`\b(?:urllib|urlopen|requests\.get|httpx|http\.client|socket)\b`)
	pyRun     = mustRx(`\b(?:exec|eval|compile|__import__|runpy)\s*\(`)
	nodeFetch = mustRx(`\b(?:fetch|https?\.get|https?\.request|axios)\b`)
	nodeRun   = mustRx(`\beval\b|\bnew Function\b|\bvm\.run|\brequire\(['"]vm['"]\)`)
)

// remoteRunner is `remote-code:runner`: a package runner or installer
// that fetches code not pinned in the workspace and runs it (npx -y,
// pnpm dlx, yarn dlx, bunx, uvx, pipx run, go install …@latest, go run
// …@version, cargo install, gem install from a URL, pip install of a
// URL, deno run of a URL, a Perl, Python or Node one-liner that fetches
// code and evaluates it).
func (s *Shield) remoteRunner(a *Action, f *Facts, j *judgement) {
	for i := range f.Runs {
		r := &f.Runs[i]
		if why := remoteRun(r.Name, r.Argv); why != "" && !declaredRunner(a, r) {
			j.escalate("remote-code:runner", "%s runs code fetched at run time that the workspace does not pin (%s)", quote(r.Line), why)
			return
		}
	}
}

// remoteRun says why a program run with argv runs remote code, or "".
func remoteRun(name string, argv []string) string {
	args := argv
	if len(args) > 0 {
		args = args[1:]
	}
	if why := userInstall(name, args); why != "" {
		return why
	}
	switch name {
	case "npx", "pnpx", "bunx":
		return npxRemote(name, args)
	case "bun":
		if len(args) > 0 && args[0] == "x" {
			return npxRemote("bun x", args[1:])
		}
		if len(args) > 0 && (args[0] == "create" || args[0] == "c") {
			return initializer("bun create", args[1:])
		}
	case "npm":
		if len(args) > 0 && (args[0] == "exec" || args[0] == "x") {
			return npxRemote("npm exec", args[1:])
		}
		if len(args) > 0 && (args[0] == "init" || args[0] == "create" || args[0] == "innit") {
			return initializer("npm "+args[0], args[1:])
		}
	case "pnpm", "yarn":
		if len(args) > 0 && args[0] == "dlx" {
			return name + " dlx downloads the package and runs it"
		}
		if len(args) > 0 && args[0] == "create" {
			return initializer(name+" create", args[1:])
		}
	case "uvx", "pipx":
		if name == "uvx" || len(args) > 0 && args[0] == "run" {
			return name + " downloads the tool and runs it"
		}
	case "uv":
		if len(args) > 1 && args[0] == "tool" && args[1] == "run" {
			return "uv tool run downloads the tool and runs it"
		}
		if len(args) > 0 && args[0] == "pip" {
			return pipRemote(args[1:])
		}
	case "go":
		if len(args) > 1 && (args[0] == "install" || args[0] == "run") {
			for _, a := range args[1:] {
				if strings.HasPrefix(a, "-") {
					continue
				}
				if m, v, ok := strings.Cut(a, "@"); ok && !goPinned.MatchString(v) && !goProject(m) {
					return "go " + args[0] + " of " + a + ": a moving version, not pinned by go.sum"
				}
			}
		}
	case "cargo":
		if len(args) > 1 && args[0] == "binstall" && !versionOnly(args) {
			// rules 17: a prebuilt binary from a release or a repository
			return "cargo binstall installs a prebuilt binary fetched from a release or a repository"
		}
		if len(args) > 0 && args[0] == "install" {
			rest := args[1:]
			for _, a := range rest {
				if a == "--git" || strings.HasPrefix(a, "--git=") {
					return "cargo install --git builds and installs code from a repository"
				}
			}
			for k := 0; k < len(rest); k++ {
				a := rest[k]
				if a == "--path" || strings.HasPrefix(a, "--path=") {
					return ""
				}
				if a == "--version" || a == "--root" || a == "--features" || a == "-F" || a == "--target" || a == "--profile" || a == "-j" || a == "--bin" || a == "--example" {
					k++
					continue
				}
				if !strings.HasPrefix(a, "-") {
					return "cargo install of " + a + " builds (build.rs included) and installs a crate fetched from the registry"
				}
			}
		}
	case "gem":
		if len(args) > 0 && args[0] == "install" {
			for _, a := range args[1:] {
				if a == "--source" || a == "-s" || strings.HasPrefix(a, "--source=") || strings.Contains(a, "://") {
					return "gem install from a source outside rubygems.org"
				}
			}
		}
	case "pip", "pip3":
		return pipRemote(args)
	case "deno":
		if len(args) > 0 && (args[0] == "run" || args[0] == "install" || args[0] == "x") || len(args) > 0 && !strings.HasPrefix(args[0], "-") && strings.Contains(args[0], "://") {
			for _, a := range args {
				if strings.HasPrefix(a, "https://") || strings.HasPrefix(a, "http://") || strings.HasPrefix(a, "npm:") || strings.HasPrefix(a, "jsr:") {
					return "deno runs " + clip(a, 80)
				}
			}
		}
	case "perl":
		net, code := false, ""
		for k, a := range args {
			net = net || perlNet.MatchString(a)
			if (a == "-e" || a == "-E") && k+1 < len(args) {
				code = args[k+1]
			}
		}
		if net && perlRun.MatchString(code) {
			return "perl fetches code over the network and runs it"
		}
	default:
		if lang := interpLang(name); lang != "" {
			for k, a := range args {
				if (a == "-c" || a == "-e" || a == "--eval") && k+1 < len(args) {
					code := args[k+1]
					if lang == "python" && pyFetch.MatchString(code) && pyRun.MatchString(code) ||
						lang == "node" && nodeFetch.MatchString(code) && nodeRun.MatchString(code) {
						return name + " fetches code over the network and evaluates it"
					}
				}
			}
		}
	}
	return ""
}

// interpLang names the one-liner languages remoteRun reads.
func interpLang(name string) string {
	switch {
	case strings.HasPrefix(name, "python"):
		return "python"
	case name == "node" || name == "nodejs" || name == "bun":
		return "node"
	}
	return ""
}

// npxRemote judges npx's (and its kin's) arguments.
func npxRemote(name string, args []string) string {
	for k := 0; k < len(args); k++ {
		a := args[k]
		switch {
		case a == "--no-install" || a == "--offline" || a == "--no":
			return "" // the local copy or nothing
		case a == "-y" || a == "--yes" || a == "--yes=true":
			return name + " --yes installs whatever the name resolves to without asking"
		case a == "-p" || a == "--package" || strings.HasPrefix(a, "--package="):
			return name + " --package fetches the package named"
		case a == "-c" || a == "--call":
			k++
		case a == "--":
		case strings.HasPrefix(a, "-"):
		default:
			pkg := a
			if strings.HasPrefix(pkg, "@") {
				return name + " of the scoped package " + pkg
			}
			if strings.Contains(pkg, "@") {
				return name + " of " + pkg + ", a version the workspace does not pin"
			}
			if strings.ContainsAny(pkg, ":/") {
				return name + " of " + pkg + ", a package from outside the registry"
			}
			if devTools[pkg] {
				return ""
			}
			return name + " of " + pkg + ", a package the workspace may not hold: npx fetches it from the registry"
		}
	}
	return ""
}

// initializer judges the arguments of npm init, npm create, yarn create,
// pnpm create and bun create: with an initializer named (npm init vite,
// npm create vite@latest, yarn create react-app) the package manager
// fetches create-<name> from the registry and runs it; without one (npm
// init -y) it only writes a package.json. A local template (bun create
// ./tpl) runs nothing fetched.
func initializer(name string, args []string) string {
	for k := 0; k < len(args); k++ {
		a := args[k]
		switch {
		case a == "--":
			continue
		case a == "-w" || a == "--workspace" || a == "--scope":
			k++
		case strings.HasPrefix(a, "-"):
		case strings.HasPrefix(a, "./") || strings.HasPrefix(a, "../") || strings.HasPrefix(a, "/"):
			return ""
		default:
			return name + " " + a + " fetches the package's initializer (create-*) from the registry and runs it"
		}
	}
	return ""
}

// pipRemote judges pip's arguments: an install of a URL or a VCS
// checkout runs that package's build code.
func pipRemote(args []string) string {
	if len(args) == 0 || args[0] != "install" {
		return ""
	}
	for _, a := range args[1:] {
		if strings.Contains(a, "://") || strings.HasPrefix(a, "git+") || strings.HasPrefix(a, "hg+") || strings.HasPrefix(a, "svn+") || strings.HasPrefix(a, "bzr+") {
			return "pip install of " + clip(a, 80) + ": a package from a URL, whose setup runs"
		}
	}
	return ""
}

// goProject reports whether a module path is the Go project's own
// (golang.org/x/..., go.dev, google.golang.org): trusted as the
// toolchain that fetches it is, at any version.
func goProject(mod string) bool {
	first, _, _ := strings.Cut(mod, "/")
	return first == "golang.org" || first == "go.dev" || first == "google.golang.org"
}

// userInstall says why a package manager's line installs a package for
// the user, outside the workspace, or scaffolds a project by running a
// package's own scripts, or "" (rules 14). A user-level install puts a
// registry's code on the PATH (or into every later run of the tool, as
// composer's global plugins are) where it runs later outside any
// sandbox: remote code, and persistence. A scaffolder fetches a template
// and runs its hooks (composer create-project's scripts, cargo
// generate's).
func userInstall(name string, args []string) string {
	has := func(flags ...string) bool {
		for _, a := range args {
			for _, f := range flags {
				if a == f || strings.HasPrefix(a, f+"=") {
					return true
				}
			}
		}
		return false
	}
	first := ""
	if len(args) > 0 {
		first = args[0]
	}
	switch name {
	case "composer":
		if first == "global" && len(args) > 1 && (args[1] == "require" || args[1] == "update" || args[1] == "install" || args[1] == "exec") {
			return "composer global " + args[1] + ": packages and their plugins outside the workspace, run by every later composer call"
		}
		if first == "create-project" && !(has("--no-scripts") && has("--no-plugins")) {
			return "composer create-project installs a package and runs its scripts and plugins"
		}
	case "yarn":
		if first == "global" && len(args) > 1 && args[1] == "add" {
			return "yarn global add installs a package for the user, outside the workspace"
		}
	case "pip", "pip3":
		if first == "install" && has("--user") {
			return "pip install --user installs a package for the user, outside the workspace"
		}
	case "gem":
		if first == "install" && has("--user-install") {
			return "gem install --user-install installs a gem for the user, outside the workspace"
		}
	case "uv":
		if first == "tool" && len(args) > 1 && args[1] == "install" {
			return "uv tool install installs a tool for the user, outside the workspace"
		}
	case "pipx":
		if first == "install" || first == "inject" {
			return "pipx " + first + " installs a tool for the user, outside the workspace"
		}
	case "dotnet":
		if first == "tool" && len(args) > 1 && (args[1] == "install" || args[1] == "update") && has("-g", "--global", "--tool-path") {
			return "dotnet tool " + args[1] + " --global installs a tool for the user, outside the workspace"
		}
	case "cargo":
		if first == "generate" {
			return "cargo generate fetches a template and runs its hooks"
		}
	}
	return ""
}
