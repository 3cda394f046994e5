package shield

import (
	"strings"
)

// A workspace file that runs later (CI, hook managers, editor settings and
// tasks), edited: judged by its diff (issue 27, pass 6; docs/shield-rules.md
// "runs-later:*"). An edit that only changes settings (a timeout, a ruler,
// a cache path), moves a pinned source to another version of the same
// source (an action's commit, a hook repository's rev), or adds a step or
// task running a known check, test, lint or build tool adds nothing that
// runs later the agent could plant: it passes. A new origin (a URL, an
// action or hook repository the file did not name), a command that
// fetches, executes or sends, or a key that starts something on its own
// (a hook, runOn, an interpreter or shell path) keeps the escalation. A new
// file, a write of a whole file, a command's write: still asked.

// laterLoud is text in an added line that fetches, executes or sends, or
// starts something on its own.
var laterLoud = mustRx(`(?i)://|\b(curl|wget|iwr|irm|invoke-webrequest|invoke-restmethod|iex|invoke-expression|nc|ncat|socat|telnet|ssh|scp|rsync|sftp|ftp|bash|sh|zsh|dash|pwsh|powershell|cmd|eval|exec|source|base64|xxd|openssl|gpg|printenv|env|set|export|sudo|su|chmod|chown|docker|kubectl|aws|gcloud|az|gh|git|npx|pnpx|bunx|uvx|pipx|dlx)\b|\$\(|` + "`" + `|\$\{\{\s*(secrets|github\.token|env)|/dev/(tcp|udp)|\bhooks?\b|runOn|folderOpen|postCreate|postStart|postAttach|onCreate|updateContent|preLaunchTask|\bpython\d*\s+-c|\bnode\s+-e|\bperl\s+-e|\bruby\s+-e|>>?\s*[~/$]|\|\s*\w`)

// laterExecKeys are keys whose value is a command or what runs one.
var laterExecKeys = map[string]bool{"run": true, "command": true, "script": true, "before_script": true, "after_script": true,
	"entry": true, "cmd": true, "shell": true, "program": true, "args": true, "image": true, "container": true, "services": true,
	"uses": true, "repo": true, "language": true, "additional_dependencies": true, "steps": false}

// knownCheck is a command line that runs a known check, test, lint,
// format or build tool on the project.
var knownCheck = mustRx(`^(\./)?((poetry|uv|pipenv|pdm|hatch|rye)\s+run\s+|bundle\s+exec\s+|pnpm\s+exec\s+)?(cargo\s+(test|clippy|fmt|check|build|nextest|doc|deny|audit|machete)|go\s+(test|vet|build)|golangci-lint|staticcheck|gofmt|(npm|pnpm|yarn|bun)\s+(test|ci|install\s+--frozen-lockfile|run\s+[\w:-]*(lint|test|check|build|format|fmt|typecheck|types)[\w:-]*)|eslint|prettier|tsc|vitest|jest|biome|stylelint|pytest|python\d*\s+-m\s+(pytest|mypy|ruff|unittest)|ruff|black|isort|mypy|pyright|flake8|pylint|tox|nox|make\s+(lint|test|check|build|fmt|format|vet)[\w-]*|gradlew?\s+[\w:-]*(test|check|build|lint|detekt|ktlint|spotless)[\w:-]*|mvnw?\s+(-[\w.=-]+\s+)*(test|verify|package|checkstyle:check|spotless:check)|bundle\s+exec\s+(rspec|rubocop|rake\s+(test|spec))|rspec|rubocop|shellcheck|hadolint|actionlint|yamllint|markdownlint|dotnet\s+(test|build|format)|swift\s+(test|build)|mix\s+(test|format|credo)|pre-commit\s+run|terraform\s+(fmt|validate)|tflint|helm\s+lint)(\s|$)`)

// laterData is a line of data only: quoted strings, numbers, brackets,
// a path (with a slash: a cache or artifact path), or a mapping's key.
var laterData = mustRx(`^[\s\[\]{},]*(("[^"]*"|'[^']*'|-?\d[\d.]*|true|false|null)[\s,\[\]{}]*)*$|^(-\s+)?\.?[\w][\w./*-]*/[\w./*-]*$|^[\w.-]+:$`)

// quietLaterEdit reports whether an edit of a file that runs later adds
// only settings, a same-source version move, or a known check, and
// removes nothing but the values it replaces.
func (s *Shield) quietLaterEdit(added, old string) bool {
	if old == "" {
		return false
	}
	for l := range strings.SplitSeq(clipRaw(added, maxAppsecText), "\n") {
		if t := strings.TrimSpace(l); t != "" && commentLine(t) && !strings.Contains(old, t) {
			return false // a comment added: text for whoever reads the file next
		}
	}
	plus, minus := diffLines(added, old)
	keys := map[string]bool{}
	var runs []string // the commands the change adds (rules 17)
	for _, l := range plus {
		l = strings.TrimSpace(strings.TrimPrefix(l, "- "))
		if i := strings.Index(l, " #"); i > 0 {
			l = strings.TrimSpace(l[:i])
		}
		if strings.HasSuffix(l, ":") && laterGuardKey.MatchString(strings.TrimSuffix(l, ":")) {
			return false
		}
		k, v := kv(l)
		if k == "" {
			if laterData.MatchString(l) {
				if strings.HasSuffix(l, ":") {
					keys[strings.ToLower(strings.Trim(strings.TrimSuffix(l, ":"), `"'`))] = true // a key whose value follows
				}
				continue
			}
			if sourceRef.MatchString(l) && s.quietSource(strings.ToLower(l), old) {
				continue // an action's reference alone (an edit of its ref)
			}
			if s.quietCommand(l, extends(minus, l)) {
				runs = append(runs, l)
				continue
			}
			return false
		}
		k = strings.Trim(k, `"'`)
		keys[k] = true
		if k == "if" && quietCondition[rawValue(l)] {
			continue // a step run whatever came before (an upload of reports)
		}
		if laterGuardKey.MatchString(k) {
			return false
		}
		switch {
		case k == "uses" || k == "repo" || sourceRef.MatchString(v):
			if k == "repo" {
				src, ref, _ := strings.Cut(v, "@")
				if src == "" || !strings.Contains(strings.ToLower(old), src) || strings.Contains(src, "@") && !pinnedRef.MatchString(ref) {
					return false
				}
				continue
			}
			if !s.quietSource(v, old) {
				return false
			}
			continue
		case k == "rev":
			if !pinnedRef.MatchString(v) {
				return false
			}
			continue
		case k == "image" && !strings.Contains(v, "$") && (officialImage(v) || imageDigest.MatchString(v)):
			continue // an official image, a known publisher's registry, or any image by digest
		case laterExecKeys[k]:
			if v == "|" || v == ">" || v == "|-" || v == ">-" {
				continue
			}
			if raw := rawValue(l); s.quietCommand(raw, extends(minus, raw)) {
				runs = append(runs, raw)
				continue
			}
			return false
		}
		if (k == "path" || k == "paths") && relPathValue.MatchString(v) {
			continue // where a step reads or writes in the checkout (an artifact, a cache)
		}
		if laterLoud.MatchString(l) || execSetting.MatchString(k) {
			return false
		}
	}
	// What is removed must be a value the change replaces, never a step,
	// a job, a hook or a command.
	for _, l := range minus {
		l = strings.TrimSpace(strings.TrimPrefix(l, "- "))
		if strings.HasSuffix(l, ":") {
			return false // a block removed (a trigger, a job, a step's map)
		}
		k, _ := kv(l)
		k = strings.Trim(k, `"'`)
		if k == "" && sourceRef.MatchString(l) {
			continue // an action's reference, replaced (its new one judged above)
		}
		if laterExecKeys[k] && k != "uses" && k != "repo" || k == "" && !laterData.MatchString(l) {
			if extended(runs, rawValue(l), l) {
				continue // a command the change extends (a flag added), the new one judged
			}
			return false
		}
		if k != "" && !keys[k] {
			return false
		}
	}
	return true
}

// quietCondition are step conditions that run a step whatever came
// before (or as by default), never one that turns a step off (failure()
// runs a check only once something else failed).
var quietCondition = map[string]bool{"always()": true, "success()": true, "!cancelled()": true,
	"${{ always() }}": true, "${{ !cancelled() }}": true, "${{ success() }}": true}

// rawValue is a key: value line's value as written (kv lower-cases it).
func rawValue(l string) string {
	_, v, ok := strings.Cut(strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(l), "- ")), ":")
	if !ok {
		return strings.TrimSpace(l)
	}
	return strings.Trim(strings.TrimSpace(v), `"'`)
}

// extended reports whether one of the commands a change adds begins with
// the command it removes (the same command, an option added).
func extended(runs []string, removedVal, removedLine string) bool {
	for _, r := range runs {
		if removedVal != "" && strings.HasPrefix(r, removedVal) || strings.HasPrefix(r, strings.TrimSpace(strings.TrimPrefix(removedLine, "- "))) {
			return true
		}
	}
	return false
}

// quietCommand reports whether a command a CI step or hook adds runs a
// known check without what fetches, executes, sends or starts on its own
// (laterLoud), or what makes a check pass whatever it finds
// (checkNeutered). A command that extends one the change removes (an
// option added: --concurrency=4) may also be any line the policy allows
// and tier 1 finds nothing in (cleanLine) that runs a tool, not a
// program of the workspace or an interpreter given a file (rules 17).
func (s *Shield) quietCommand(line string, extendsRemoved bool) bool {
	if line == "" || laterLoud.MatchString(line) || checkNeutered.MatchString(line) {
		return false
	}
	if knownCheck.MatchString(line) {
		return true
	}
	if !extendsRemoved {
		return false
	}
	clean, f := s.cleanLineFacts(line)
	if !clean {
		return false
	}
	// Outside the sandbox, with the runner's token, the policy's leave
	// to run the project's own scripts does not hold.
	for _, r := range f.Runs {
		if strings.ContainsAny(r.Name, "/.") || ciInterpreters[r.Name] || len(r.Argv) > 0 && strings.Contains(r.Argv[0], "/") {
			return false
		}
	}
	return true
}

// checkNeutered is what makes a check or a hook pass whatever it finds:
// an exit or return, a trailing true, options that turn failures off or
// skip what is checked.
var checkNeutered = mustRx(`(?i)\b(exit|return)\b|;\s*(true|:)\s*$|--exit-zero|--no-verify|--max-warnings|--pass-?with-?no-?tests|--ignore|--skip|--exclude|--deselect|\s-k\s|--no-fail|--allow-fail|--force|--continue-on-error|\|\|`)

// extends reports whether cmd begins with a command line the change
// removes (the same command, an option added).
func extends(minus []string, cmd string) bool {
	for _, m := range minus {
		if v := rawValue(m); v != "" && v != cmd && strings.HasPrefix(cmd, v) {
			return true
		}
	}
	return false
}

// ciInterpreters run the file or code they are given.
var ciInterpreters = map[string]bool{"python": true, "python3": true, "node": true, "ruby": true, "perl": true, "php": true,
	"bash": true, "sh": true, "zsh": true, "pwsh": true, "powershell": true, "deno": true, "bun": true, "tsx": true, "ts-node": true,
	"java": true, "lua": true, "Rscript": true, "julia": true, "groovy": true, "osascript": true}

// quietSource reports whether an action's reference (owner/name[/path]@ref,
// lower case) is one the file already named at another pinned ref, or
// one from a publisher of build tooling pinned by commit (GitHub's own
// actions by a version tag too); never a script runner's action.
func (s *Shield) quietSource(v, old string) bool {
	src, ref, ok := strings.Cut(v, "@")
	if !ok || src == "" || !pinnedRef.MatchString(ref) || strings.HasPrefix(src, "docker:") || strings.HasPrefix(src, "./") {
		return false
	}
	if strings.Contains(strings.ToLower(old), src+"@") {
		return true // the same source at another version (a commit moved to a tag: supply-chain:pin-moved)
	}
	owner, _, _ := strings.Cut(src, "/")
	if strings.Contains(src, "script") {
		return false // actions/github-script runs the code its input holds
	}
	if owner == "actions" || owner == "github" {
		return true
	}
	return actionPublishers[owner] && fullCommit.MatchString(ref)
}

// relPathValue is a relative path inside the checkout: no parent, home,
// root or variable.
var relPathValue = mustRx(`^[\w][\w./*@+-]*$`)

// imageDigest is an image reference pinned by digest.
var imageDigest = mustRx(`@sha256:[0-9a-f]{64}$`)

// fullCommit is a commit's full hash.
var fullCommit = mustRx(`^[0-9a-f]{40}$`)

// actionPublishers are owners who publish the setup, cache and upload
// actions of their own tools (a reference by commit to one of theirs is
// the tool's vendor's code, as pinned as a reference can be).
var actionPublishers = map[string]bool{"actions": true, "github": true, "docker": true, "hashicorp": true, "gradle": true,
	"aws-actions": true, "azure": true, "google-github-actions": true, "golangci": true, "astral-sh": true, "pnpm": true,
	"oven-sh": true, "denoland": true, "dtolnay": true, "swatinem": true, "ruby": true, "shivammathur": true, "codecov": true,
	"sigstore": true, "slsa-framework": true, "ossf": true, "step-security": true, "jetbrains": true, "microsoft": true,
	"cloudflare": true, "pypa": true, "goreleaser": true, "anchore": true, "aquasecurity": true, "erlef": true,
	"subosito": true, "bufbuild": true, "dart-lang": true, "haskell-actions": true, "julia-actions": true,
	"r-lib": true, "conda-incubator": true, "mamba-org": true, "jdx": true, "taiki-e": true, "rust-lang": true,
	"nixbuild": true, "cachix": true, "determinatesystems": true, "helm": true, "firebaseextended": true,
	"supabase": true, "pulumi": true, "terraform-linters": true, "super-linter": true, "reviewdog": true}

// sourceRef is a value naming a source at a ref (owner/name@ref: an
// action, an orb, a reusable workflow).
var sourceRef = mustRx(`^[\w.-]+/[\w./-]+@\S+$`)

// pinnedRef is a version tag or a commit: not a moving branch.
var pinnedRef = mustRx(`(?i)^(v?\d[\w.+-]*|[0-9a-f]{40})$`)

// laterGuardKey are keys of what triggers a workflow, what its token may
// do, which environment guards it, and when it runs.
var laterGuardKey = mustRx(`(?i)^(on|if|permissions?|contents|secrets?|environment|schedule|cron|workflow_run|pull_request_target|repository_dispatch|runs-on|id-token|actions|packages|deployments|security-events|statuses|checks|pull-requests|issues|attestations|only|except|rules|when|workflow|trigger|branches|tags|paths-ignore)$|fail|error|skip|ignore|exclude|disable|strict|verify|check`)

// execSetting is a setting's key naming a program, a path to one, or
// what starts with it.
var execSetting = mustRx(`(?i)path|command|executable|exec|shell|terminal|interpreter|args|env|launch|hook|cmd|binary|server|url|uri|endpoint|proxy|registry|index|source|task|script|program|runtime|automation|trust|approve|auto|allow|permission|confirm|yolo|mcp|agent|chat|secret|token|password|apikey|api_key|api-key|private`)

// textOf returns the text an action adds to p and the text it removes.
func textOf(f *Facts, p string) (added, old string) {
	src := "content:" + p
	for _, t := range f.Texts {
		if t.Source == src {
			added += t.Body + "\n"
		}
	}
	for _, t := range f.Removed {
		if t.Source == src {
			old += t.Body + "\n"
		}
	}
	return added, old
}
