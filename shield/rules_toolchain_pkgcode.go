package shield

import (
	"strings"
)

// Package managers spoken through their interpreter (rules 13). In Julia
// and R the package manager is an API of the language, not a program:
// `julia --project=. -e 'using Pkg; Pkg.test()'` and `Rscript -e
// 'renv::restore()'` are the daily work `npm test` and `npm ci` are
// elsewhere. An interpreter's inline code counts as the workspace's
// toolchain when every statement of it is a call of the package
// manager's (Julia's Pkg; R's renv, pak, testthat, devtools) with a verb
// of daily work, its arguments only names, strings without URLs or
// repository references, numbers and booleans, and the workspace
// declares the ecosystem (Project.toml, renv.lock, DESCRIPTION). Anything
// else in the code (a system call, a download, Pkg.add(url=…),
// remotes::install_github) is the interpreter running code, asked as
// before.

// pkgCodeStatement is one statement of package-manager work.
var pkgCodeStatement = mustRx(`^(?:using Pkg|import Pkg|` +
	`Pkg\.(?:status|st|test|resolve|instantiate|update|up|precompile|build|gc|add|rm|pin|free|activate|develop)\((?P<a>[^()]*)\)|` +
	`(?:renv|pak|testthat|devtools|usethis)::(?:status|restore|snapshot|test_dir|test_file|test_local|test|check|document|load_all|install|pkg_install|hydrate|init|dependencies|diagnostics|lockfile_validate|activate|update|clean)\((?P<b>[^()]*)\)|` +
	// session 28: R's linters, formatters, coverage and documentation
	// tools, run on the workspace's own code
	`(?:lintr::(?:lint|lint_dir|lint_package)|styler::(?:style_file|style_dir|style_pkg)|covr::(?:package_coverage|report|file_coverage)|roxygen2::roxygeni[sz]e|rcmdcheck::rcmdcheck|devtools::(?:build|lint|spell_check))\((?P<c>[^()]*)\))$`)

// pkgPinnedVersion is "name@1.2.3" in a package manager's install call: an
// exact version, not a repository reference.
var pkgPinnedVersion = mustRx(`(["'][\w.]+)@\d[\w.-]*(["'])`)

// pkgCodeArg is what an argument may hold: names, quoted words and
// relative paths, numbers, booleans, = and commas; no URL, @, $ or
// backquote.
var pkgCodeArg = mustRx(`^[\w\s"'.,=:+/-]*$`)

// workspacePaths reports whether the paths args quote stay in the
// workspace: relative, without "..".
func workspacePaths(args string) bool {
	for _, f := range strings.FieldsFunc(args, func(r rune) bool { return r == '"' || r == '\'' || r == ',' || r == ' ' || r == '=' }) {
		if strings.Contains(f, "/") && (strings.HasPrefix(f, "/") || strings.Contains(f, "..")) {
			return false
		}
	}
	return true
}

// packageWork reports whether code is only package-manager work of
// daily life.
func packageWork(code string) bool {
	if code == "" || len(code) > 1024 {
		return false
	}
	n := 0
	for _, st := range strings.FieldsFunc(code, func(r rune) bool { return r == ';' || r == '\n' }) {
		st = strings.TrimSpace(st)
		if st == "" {
			continue
		}
		m := pkgCodeStatement.FindStringSubmatch(st)
		if m == nil {
			return false
		}
		args := pkgPinnedVersion.ReplaceAllString(m[1]+m[2]+m[3], "$1$2")
		if !pkgCodeArg.MatchString(args) || strings.Contains(args, "://") || strings.Contains(strings.ToLower(args), "url") || !workspacePaths(args) {
			return false
		}
		n++
	}
	return n > 0
}

// pkgCodeRunners are the interpreters whose package manager is an API.
var pkgCodeRunners = map[string]bool{"julia": true, "Rscript": true, "R": true}

// inlinePackageWork returns the run's interpreter when r runs an
// interpreter of pkgCodeRunners whose inline code (-e, --eval) is
// package work and whose other options only pick the project or quiet
// it; "" otherwise.
func inlinePackageWork(r *Run) string {
	if !pkgCodeRunners[r.Name] || len(r.Argv) < 3 {
		return ""
	}
	var code []string
	for i := 1; i < len(r.Argv); i++ {
		a := r.Argv[i]
		switch {
		case a == "-e" || a == "--eval" || a == "-E":
			if i+1 >= len(r.Argv) {
				return ""
			}
			code = append(code, r.Argv[i+1])
			i++
		case strings.HasPrefix(a, "--project") || strings.HasPrefix(a, "--threads") || strings.HasPrefix(a, "--startup-file") ||
			strings.HasPrefix(a, "--color") || strings.HasPrefix(a, "--compiled-modules") || a == "--vanilla" || a == "--no-save" ||
			a == "--no-restore" || a == "--quiet" || a == "-q" || a == "--slave" || a == "--no-echo":
			if v, ok := strings.CutPrefix(a, "--project="); ok && (strings.HasPrefix(v, "/") || strings.HasPrefix(v, "..") || strings.HasPrefix(v, "~")) {
				return "" // a project outside the workspace
			}
		default:
			return ""
		}
	}
	if len(code) == 0 {
		return ""
	}
	for _, c := range code {
		if !packageWork(strings.Trim(c, `"'`)) {
			return ""
		}
	}
	return r.Name
}
