package shield

import (
	"strings"

	"github.com/opx-dev/opx/shield/shellx"
)

// Project runners (rules 15, session 20; docs/shield-rules.md "Rules 15").
// `uv run python -c "…exec(urlopen(…))"` ran code fetched at run time, and
// was allowed: the rules that judge what python -c does saw only uv. A
// project runner runs a program in the project's environment (uv run,
// poetry run, pipenv run, pdm run, rye run, bundle exec, pnpm exec, conda
// run) or with secrets it injects (op run, doppler run, infisical run,
// aws-vault exec, dotenv, sops exec-env): the program it runs is a Run of
// its own, judged by every rule as if it stood alone, and the runner
// keeps its Run and its own judgement (uv run --with PKG fetches PKG).
//
// The policy: deny and verify rules see the inner program as its own
// line (`uv run npm publish` is a publish); the allow list is satisfied
// by the runner's line for the program a project runner runs in the
// project's environment (`uv run alembic upgrade head` is allowed where
// uv is: the program is the project's own), while a secret injector's
// inner program must be allowed itself.

// projectRunner reads a runner's arguments and returns the argv of the
// program it runs, or nil when the line runs none (uv sync, poetry add).
type projectRunner func(x *call, args []shellx.Word) []shellx.Word

// projectRunners are the runners by program name.
var projectRunners map[string]projectRunner

// projectEnvRunners run a program from the project's own environment: an
// inner program's allow is the runner's (policyRuns).
var projectEnvRunners = setOf("uv", "poetry", "pipenv", "pdm", "rye", "bundle", "pnpm", "conda", "mamba", "micromamba", "pixi",
	// rules 16: the project's development container (devcontainer exec,
	// ddev exec): the program runs in the container the project defines
	"devcontainer", "ddev")

func init() {
	projectRunners = map[string]projectRunner{
		"uv": runnerVerb("run", "--with --with-editable --with-requirements --python -p --package --directory --project --group --only-group "+
			"--no-group --extra --env-file --index --default-index --index-url -i --extra-index-url --find-links -f --refresh-package "+
			"--reinstall-package --upgrade-package -P --config-file --cache-dir --color --resolution --prerelease --exclude-newer "+
			"--index-strategy --keyring-provider --link-mode --python-preference --config-setting -C --no-binary-package "+
			"--no-build-package --allow-insecure-host", ""),
		"poetry":     runnerVerb("run", "-C --directory -P --project", ""),
		"pipenv":     runnerVerb("run", "", ""),
		"pdm":        runnerVerb("run", "-p --project -g --global", ""),
		"rye":        runnerVerb("run", "--pyproject", ""),
		"pixi":       runnerVerb("run", "-e --environment --manifest-path", ""),
		"bundle":     runnerVerb("exec", "--gemfile", ""),
		"carton":     runnerVerb("exec", "", "--"), // rules 29: Perl's bundler (carton exec -- prove -lr t)
		"pnpm":       runnerVerb("exec", "--filter -F -C --dir --workspace-dir --reporter --loglevel --filter-prod", ""),
		"conda":      runnerVerb("run", "-n --name -p --prefix --cwd", ""),
		"mamba":      runnerVerb("run", "-n --name -p --prefix --cwd", ""),
		"micromamba": runnerVerb("run", "-n --name -p --prefix --cwd", ""),
		"op":         runnerVerb("run", "--env-file --account --cache", "--"),
		"doppler":    runnerVerb("run", "-p --project -c --config --token --scope --name-transformer --mount --mount-format --fallback --command", "--"),
		"infisical":  runnerVerb("run", "--env --path --projectId --token --tags --domain --command", "--"),
		"aws-vault":  runnerVerb("exec", "--duration -d --region --mfa-token -t --prompt --server-port --lazy", "--", 1),
		"devcontainer": runnerVerb("exec", "--workspace-folder --container-id --id-label --config --docker-path --docker-compose-path "+
			"--remote-env --log-level --log-format --terminal-columns --terminal-rows --default-user-env-probe --override-config "+
			"--user-data-folder --container-data-folder --container-system-data-folder", ""),
		"ddev":   runnerVerb("exec", "-s --service -d --dir", ""),
		"dotenv": runnerDotenv,
		"sops":   runnerSops,
	}
}

// runnerVerb reads RUNNER [global options] VERB [options] [mark] PROGRAM
// ARGS: with verb first among the operands, the program is the first
// operand after it (after skip operands: aws-vault exec PROFILE), or the
// words after mark when the line has it.
func runnerVerb(verb, valued, mark string, skip ...int) projectRunner {
	return func(x *call, args []shellx.Word) []shellx.Word {
		sp := cachedSpec(1, valued)
		// global options before the verb (pnpm --filter web exec …)
		k := 0
		for k < len(args) && strings.HasPrefix(args[k].Text, "-") && args[k].Text != "--" {
			name, _, eq := strings.Cut(args[k].Text, "=")
			k++
			if !eq && sp.valued[name] && k < len(args) {
				k++
			}
		}
		if k >= len(args) || args[k].Text != verb {
			return nil
		}
		rest := args[k+1:]
		if mark != "" {
			for i, w := range rest {
				if w.Text == mark {
					return rest[i+1:]
				}
			}
		}
		opts, ops := sp.parse(rest)
		if c, ok := val(opts, "--command"); ok {
			x.payload(c, strings.TrimSpace(verb+" --command"))
			return nil
		}
		if len(skip) > 0 && len(ops) > skip[0] {
			ops = ops[skip[0]:]
		}
		return skipAssigns(ops)
	}
}

// runnerDotenv reads dotenv-cli: dotenv [-e FILE]… [--] PROGRAM ARGS.
func runnerDotenv(x *call, args []shellx.Word) []shellx.Word {
	_, ops := cachedSpec(1, "-e -v -c").parse(args)
	return ops
}

// runnerSops reads sops exec-env FILE 'LINE' and sops exec-file FILE
// 'LINE': the line runs with the decrypted secrets.
func runnerSops(x *call, args []shellx.Word) []shellx.Word {
	_, ops := cachedSpec(1, "--filename --output-type --input-type").parse(args)
	if len(ops) >= 3 && (ops[0].Text == "exec-env" || ops[0].Text == "exec-file") {
		x.payload(ops[2], "sops "+ops[0].Text)
	}
	return nil
}

// projectEnvRun reports whether a run was found inside a project
// runner's run of the project's environment (its Via ends with one).
func projectEnvRun(r *Run) bool {
	last := r.Via
	if k := strings.LastIndex(last, " > "); k >= 0 {
		last = last[k+3:]
	}
	return projectEnvRunners[last]
}
