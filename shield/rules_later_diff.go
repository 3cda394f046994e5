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
func quietLaterEdit(added, old string) bool {
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
				continue
			}
			if knownCheck.MatchString(l) && !laterLoud.MatchString(l) {
				continue
			}
			return false
		}
		k = strings.Trim(k, `"'`)
		keys[k] = true
		if laterGuardKey.MatchString(k) {
			return false
		}
		switch {
		case k == "uses" || k == "repo" || sourceRef.MatchString(v):
			src, ref, _ := strings.Cut(v, "@")
			if src == "" || !strings.Contains(strings.ToLower(old), src) || k == "uses" && !pinnedRef.MatchString(ref) {
				return false
			}
			continue
		case k == "rev":
			if !pinnedRef.MatchString(v) {
				return false
			}
			continue
		case laterExecKeys[k]:
			if v == "|" || v == ">" || v == "|-" || v == ">-" || knownCheck.MatchString(v) && !laterLoud.MatchString(v) {
				continue
			}
			return false
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
		if k == "" && !laterData.MatchString(l) || k != "" && (!keys[k] || laterExecKeys[k] && k != "uses" && k != "repo") {
			return false
		}
	}
	return true
}

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
