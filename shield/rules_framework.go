package shield

import (
	"path"
	"strings"
)

// Framework command lines (rules 11, issue 27 pass 8). Application
// frameworks put their database, secrets and release chores behind one
// CLI each (rails, artisan, manage.py, dotnet ef, prisma, fastlane...),
// reached through a runner (bundle exec, php, poetry run, npx). The rules
// judge such a line by its verb, whatever the stack: frameworkSecrets
// (credential-print) by verbs that print decrypted secrets or
// configuration, frameworkDestruction (destructive:database, :signing,
// :release) by verbs that wipe a database, revoke signing assets or halt
// a release.

// frameworkCall is a framework CLI's call: its tool (lower case, a base
// name: "rails", "artisan", "manage.py", "dotnet-ef", "fastlane") and
// its arguments after it.
type frameworkCall struct {
	tool string
	args []string
}

// runnerScripts are scripts a language runtime runs that are framework
// CLIs: php artisan, python manage.py, php bin/console, node ace.
var runnerScripts = map[string]string{"artisan": "artisan", "manage.py": "manage.py", "console": "console", "ace": "ace", "rails": "rails", "rake": "rake"}

// frameworkOf unwraps a run to the framework CLI it calls: through bundle
// exec, poetry/pipenv/uv/pdm run, npx/bunx/pnpm exec/dlx, sail, php and
// python running a CLI script, dotnet's tools. ok is false when the run
// calls no tool past its runners.
func frameworkOf(r *Run) (frameworkCall, bool) {
	if len(r.Argv) == 0 {
		return frameworkCall{}, false
	}
	name := strings.ToLower(path.Base(r.Argv[0]))
	args := r.Argv[1:]
	for range 4 {
		switch name {
		case "bundle", "bundler":
			if len(args) > 1 && args[0] == "exec" {
				name, args = strings.ToLower(path.Base(args[1])), args[2:]
				continue
			}
		case "poetry", "pipenv", "uv", "pdm", "rye", "hatch", "pnpm", "yarn", "mix":
			if name == "pnpm" || name == "yarn" {
				// rules 15: the workspace selectors before the verb
				// (pnpm --filter web prisma …, yarn workspace api knex …)
				args = skipWorkspaceSelectors(name, args)
			}
			if len(args) > 1 && (args[0] == "run" || args[0] == "exec" || args[0] == "dlx") && name != "mix" {
				name, args = strings.ToLower(path.Base(args[1])), args[2:]
				continue
			}
			// Rules 14: pnpm and yarn run a package's binary named as
			// their first word (pnpm prisma migrate reset, yarn knex …):
			// a tool the framework rules know is that tool.
			if (name == "pnpm" || name == "yarn") && len(args) > 0 && frameworkTool(args[0]) {
				name, args = args[0], args[1:]
				continue
			}
		case "npx", "bunx", "pnpx":
			for len(args) > 0 && strings.HasPrefix(args[0], "-") {
				args = args[1:]
			}
			if len(args) > 0 {
				name, args = strings.ToLower(path.Base(args[0])), args[1:]
				continue
			}
		case "sail", "php", "python", "python3", "node", "ruby", "bun", "deno":
			if len(args) > 0 {
				if t, ok := runnerScripts[strings.ToLower(path.Base(args[0]))]; ok {
					name, args = t, args[1:]
					continue
				}
			}
		case "sqlpackage":
			return frameworkCall{"sqlpackage", args}, true
		case "dotnet":
			if len(args) > 0 && args[0] == "sqlpackage" {
				return frameworkCall{"sqlpackage", args[1:]}, true
			}
			if len(args) > 0 && (args[0] == "ef" || args[0] == "user-secrets") {
				return frameworkCall{"dotnet-" + args[0], args[1:]}, true
			}
			if len(args) > 2 && args[0] == "tool" && args[1] == "run" {
				return frameworkCall{"dotnet-" + strings.TrimPrefix(args[2], "dotnet-"), args[3:]}, true
			}
		}
		break
	}
	if strings.HasSuffix(name, ".py") && name != "manage.py" {
		return frameworkCall{}, false
	}
	return frameworkCall{name, args}, true
}

// skipWorkspaceSelectors drops pnpm's and yarn's options that choose the
// workspace package a command runs in (--filter X, -F X, -C DIR, -r,
// yarn workspace NAME), and the flags before the verb.
func skipWorkspaceSelectors(name string, args []string) []string {
	for len(args) > 0 {
		a := args[0]
		switch {
		case a == "--filter" || a == "-F" || a == "-C" || a == "--dir" || a == "--filter-prod" || a == "--workspace-dir":
			if len(args) < 2 {
				return nil
			}
			args = args[2:]
		case name == "yarn" && a == "workspace" && len(args) > 2:
			args = args[2:]
		case strings.HasPrefix(a, "-") && a != "--":
			args = args[1:]
		default:
			return args
		}
	}
	return args
}

// frameworkTool reports whether the framework rules know name (a
// database, secret or release verb of it): a package manager's implicit
// run of it is that tool.
func frameworkTool(name string) bool {
	_, a := dbWipeVerbs[name]
	_, b := dbProdOnlyVerbs[name]
	_, c := printVerbs[name]
	return a || b || c
}

// positional returns the call's arguments that are not options (a
// --flag=value or a bare --flag, and the value of a few flags known to
// take one, are skipped) and not VAR=value assignments.
func (c frameworkCall) positional() []string {
	var out []string
	for k := 0; k < len(c.args); k++ {
		x := c.args[k]
		switch {
		case strings.HasPrefix(x, "-"):
			if (x == "--env" || x == "-e" || x == "--connection" || x == "--context" || x == "--project" || x == "--database" || x == "--settings") && k+1 < len(c.args) {
				k++
			}
		case strings.Contains(x, "=") && !strings.Contains(x, "("):
		default:
			out = append(out, x)
		}
	}
	return out
}

// verb is the call's positional arguments joined by spaces, lower case:
// "db:drop", "migrate reset", "database drop", "match nuke".
func (c frameworkCall) verb(n int) string {
	p := c.positional()
	if len(p) > n {
		p = p[:n]
	}
	return strings.ToLower(strings.Join(p, " "))
}

// has reports whether the call has the option o (--o or --o=value).
func (c frameworkCall) has(o string) bool {
	for _, x := range c.args {
		if x == o || strings.HasPrefix(x, o+"=") {
			return true
		}
	}
	return false
}

// envValueRe finds an environment named on a line: RAILS_ENV=x,
// APP_ENV=x, --env=x, -e x, --environment x, ASPNETCORE_ENVIRONMENT=x.
var envValueRe = mustRx(`(?i)(?:\b[A-Z]*_?ENV(?:IRONMENT)?=|--env(?:ironment)?[= ]|\s-e\s+|--target[= ]|--stage[= ])["']?([\w.-]{1,40})`)

// prodNameRe is a name that says production: prod, production, prd, live
// as a word or an identifier's part ($BILLING_PROD_CONN, prod-db).
var prodNameRe = mustRx(`(?i)(?:^|[^a-z])(?:prod|production|prd)(?:[^a-z]|$)`)

// lineEnv says what environment a line names: "prod", "dev" (development,
// test, local, CI), or "".
func lineEnv(line string) string {
	dev := false
	for _, m := range envValueRe.FindAllStringSubmatch(line, 8) {
		switch v := strings.ToLower(m[1]); {
		case v == "dev" || v == "development" || v == "test" || v == "testing" || v == "local" || v == "ci" || strings.HasPrefix(v, "dev_") || strings.HasPrefix(v, "test_"):
			dev = true
		case prodNameRe.MatchString(v) || v == "live":
			return "prod"
		}
	}
	if prodNameRe.MatchString(line) {
		return "prod"
	}
	if dev {
		return "dev"
	}
	return ""
}
