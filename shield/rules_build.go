package shield

import (
	"path"
	"slices"
	"strings"

	"github.com/opx-dev/opx/shield/manifest"
)

// Build and package tools' command lines (issue 27, session 14), judged by
// shape rather than per tool: a source, feed, registry or repository added
// or pointed at by a flag or subcommand with a URL that is not the
// ecosystem's own (`dotnet nuget add source URL`, `helm repo add x URL`,
// `composer config repositories.x vcs URL`, `conan remote add`, `mvn
// -DremoteRepositories=URL`), a transport made insecure or verification
// switched off by a flag or setting (`--insecure`, `--trusted-host`,
// `composer config secure-http false`, `-Dorg.gradle.dependency.verification=off`),
// a security check skipped by a flag (`-Ddependency-check.skip=true`,
// `-x dependencyCheckAnalyze`), code run from a URL (`java -jar URL`,
// `gradle --init-script URL`, `jbang URL`), a file's times forged
// (`touch -d`), and a session's hooks turned off (`export HUSKY=0`).

var (
	// sourceWord is an argument that names where code comes from, as a
	// subcommand word or in a flag's name.
	sourceWord = mustRx(`(?i)^(?:-{1,2}|-D)?[\w.-]*(?:source|sources|registry|registries|repo|repos|repository|repositories|index|mirror|mirrors|feed|feeds|channel|channels|remote|remotes|tap|plugin|plugins|init-script|find-links|from-module|url|uri|server|install|add|require|get|fetch|sync|restore|update|upgrade|init|config)[\w.-]*(?:=.*)?$`)
	// insecureFlag weakens a transport or verification.
	insecureFlag = mustRx(`(?i)^--?(?:insecure[\w-]*|allow-insecure[\w-]*|trusted-host(?:=.*)?|no-verify-ssl|no-ssl-verify|disable-tls|skip-tls-verify|insecure-skip-tls-verify|no-check-certificate|ignore-checksums?|skip-checksums?|no-verify-checksums?|skip-verify|skip-signature[\w-]*|no-gpg-?check|nogpgcheck|allow-unauthenticated|allow-untrusted|disable-content-trust(?:=true)?|unsafe[\w-]*|dependency-verification(?:=(?:off|lenient))?` +
		// rules 13: checksums and integrity turned off by another name,
		// signing's transparency log, provenance or verification off
		`|no-checksums?|disable-checksums?|no-integrity|skip-integrity|no-verify-integrity` +
		// rules 22: spack's and others' signature checks off
		`|no-check-signatures?|no-verify-signatures?|no-signature-check|skip-signature-check|no-verify-hashes|no-require-hashes` +
		`|(?:tlog-upload|transparency-log|rekor|provenance|attestations?|verify-signatures?|signature-verification|verify-provenance)=(?:false|off|0|no|none|skip))$`)
	// securitySkip is a security or dependency check skipped by a flag
	// (tests skipped for a quick build stay allowed).
	securitySkip = mustRx(`(?i)^-D[\w.-]*(?:dependency-?check|owasp|audit|snyk|trivy|gitleaks|semgrep|spotbugs|checkstyle|pmd|enforcer|sonar|license|cve|vuln)[\w.-]*\.skip(?:=true)?$`)
	securityTask = mustRx(`(?i)dependencycheck|owasp|audit|snyk|trivy|spotbugs|checkstyle|pmd|detekt|ktlint|spotless|lint|sonar|vuln|cve|scan`)
	// codeURL is a URL of code a runner would run.
	codeURL = mustRx(`(?i)^(?:https?|ftp)://\S+\.(?:jar|groovy|gradle|kts|sh|bash|zsh|fish|py|rb|pl|ps1|psm1|js|mjs|cjs|ts|php|lua|java|kt|clj|scala|sc|jsh|csx|fsx|vbs|bat|cmd|r|jl|ipynb|rmd|qmd|exs|tcl|nu|yml|yaml)(?:[?#]\S*)?$`)
)

// urlClients fetch or show URLs as their job, or are judged by other
// rules (network, git, containers, the package managers' own).
var urlClients = map[string]bool{
	"curl": true, "wget": true, "http": true, "https": true, "xh": true, "httpie": true, "aria2c": true, "git": true, "gh": true,
	"glab": true, "hub": true, "ssh": true, "scp": true, "sftp": true, "rsync": true, "ping": true, "dig": true, "nslookup": true,
	"host": true, "nc": true, "ncat": true, "telnet": true, "openssl": true, "docker": true, "podman": true, "kubectl": true,
	"open": true, "xdg-open": true, "echo": true, "printf": true, "opx": true, "lynx": true, "w3m": true, "links": true,
	"npm": true, "pnpm": true, "yarn": true, "bun": true, "pip": true, "pip3": true, "uv": true, "poetry": true, "pdm": true,
	"pipenv": true, "cargo": true, "go": true, "gem": true, "bundle": true, "npx": true, "uvx": true, "pipx": true, "deno": true,
}

// urlRunners run the code a URL operand names.
var urlRunners = map[string]bool{
	"java": true, "jbang": true, "groovy": true, "kotlin": true, "kotlinc": true, "scala": true, "php": true, "ruby": true,
	"perl": true, "node": true, "python": true, "python3": true, "bash": true, "sh": true, "zsh": true, "pwsh": true,
	"powershell": true, "ansible-playbook": true, "jshell": true, "lua": true, "Rscript": true,
}

// textTools read a file as text: a download given to one is data
// (diff <(curl …) local.txt), not code.
var textTools = setOf("cat", "tac", "diff", "cmp", "comm", "grep", "egrep", "fgrep", "rg", "sort", "uniq", "wc", "head", "tail", "less",
	"more", "jq", "yq", "sha256sum", "sha1sum", "sha512sum", "md5sum", "b3sum", "shasum", "cksum", "base64", "xxd", "od", "hexdump",
	"tee", "paste", "join", "column", "cut", "tr", "file", "stat", "vimdiff", "delta", "difft", "colordiff", "wdiff", "sdiff", "gpg",
	"gpg2", "cosign", "minisign", "signify", "ssh-keygen", "openssl", "echo", "printf", "while", "read")

// fetchedFileArg returns the word of r that is a process substitution
// of a download (<(curl -s URL), <(wget -qO- URL)), when r is not a text
// tool reading it (rules 15): a build tool, runner or interpreter given
// it runs what the host serves.
func fetchedFileArg(r *Run) string {
	if textTools[r.Name] {
		return ""
	}
	for _, a := range r.Argv[1:] {
		inner, ok := strings.CutPrefix(a, "<(")
		if !ok {
			continue
		}
		inner = strings.TrimLeft(inner, " \t")
		for _, c := range []string{"curl", "wget", "http", "https", "xh", "fetch", "aria2c", "iwr", "irm", "lwp-request", "GET"} {
			if strings.HasPrefix(inner, c+" ") {
				return a
			}
		}
	}
	return ""
}

// buildCommands is the command side of the shape rule.
func (s *Shield) buildCommands(_ *Action, f *Facts, j *judgement) {
	for i := range f.Runs {
		r := &f.Runs[i]
		if len(r.Argv) < 2 || r.Name == "" {
			continue
		}
		args := r.Argv[1:]
		if r.Name == "touch" {
			for _, a := range args {
				if a == "-d" || a == "-t" || a == "-r" || strings.HasPrefix(a, "--date") || strings.HasPrefix(a, "--reference") ||
					len(a) > 1 && a[0] == '-' && a[1] != '-' && strings.ContainsAny(a[1:], "dtr") {
					j.escalate("evasion:backdate", "%s sets a file's times to another moment than now: a change made to look older (or as old as another file)", quote(r.Line))
					return
				}
			}
			continue
		}
		if urlRunners[r.Name] {
			for k, a := range args {
				if codeURL.MatchString(a) || (a == "-jar" || a == "-cp" || a == "-classpath") && k+1 < len(args) && strings.Contains(args[k+1], "://") {
					j.escalate("remote-code:runner", "%s runs code fetched from a URL at run time (%s): what runs is whatever the host serves", quote(r.Line), clipText(a, 80))
					return
				}
			}
			continue
		}
		if a := fetchedFileArg(r); a != "" {
			j.escalate("remote-code:runner", "%s gives %s what a download returns as a file (%s): code or a build script fetched at run time", quote(r.Line), r.Name, clipText(a, 80))
			return
		}
		if !urlClients[r.Name] && !urlRunners[r.Name] && !textTools[r.Name] {
			// rules 15: any program given a URL of code to run or load
			// (dotnet script URL.csx, a runner the list does not name)
			for _, a := range args {
				if ext := strings.ToLower(path.Ext(urlBase(a))); !strings.HasPrefix(a, "-") && codeURL.MatchString(a) && ext != ".yml" && ext != ".yaml" {
					j.escalate("remote-code:runner", "%s runs or loads code from a URL (%s): what runs is whatever the host serves", quote(r.Line), clipText(a, 80))
					return
				}
			}
		}
		if urlClients[r.Name] && packageManager(r.Name) || r.Name == "uvx" || r.Name == "pipx" || r.Name == "npx" {
			// rules 15: the package managers' own transport switches
			// (uv pip install --allow-insecure-host, cargo --insecure)
			for _, a := range args {
				if a == "--" {
					break
				}
				if strings.HasPrefix(a, "-") && insecureFlag.MatchString(a) {
					j.escalate("supply-chain:source", "%s weakens how %s fetches code (%s): a transport or its verification is turned off", quote(r.Line), r.Name, a)
					return
				}
			}
		}
		if urlClients[r.Name] || !worthJudging(args) {
			continue
		}
		if (r.Name == "pre-commit" || r.Name == "prek") && len(args) > 0 && args[0] == "autoupdate" && !slices.ContainsFunc(args, insecureFlag.MatchString) {
			// rules 19: autoupdate --repo URL picks which of the
			// configuration's own repositories to bump; it adds none.
			continue
		}
		named := false
		for k, a := range args {
			flag := strings.HasPrefix(a, "-")
			switch {
			case !flag:
			case insecureFlag.MatchString(a) && !localDatabaseClient(r):
				j.escalate("supply-chain:source", "%s weakens how %s fetches code (%s): a transport or its verification is turned off", quote(r.Line), r.Name, a)
				return
			case securitySkip.MatchString(a):
				j.escalate("evasion:checks-off", "%s skips a security or dependency check (%s)", quote(r.Line), a)
				return
			case (a == "-x" || a == "--exclude-task") && k+1 < len(args) && securityTask.MatchString(args[k+1]):
				j.escalate("evasion:checks-off", "%s leaves out a check task (%s %s)", quote(r.Line), a, args[k+1])
				return
			case strings.HasPrefix(a, "--init-script") || a == "-I" && k+1 < len(args) && strings.Contains(args[k+1], "://"):
				if strings.Contains(a, "://") || k+1 < len(args) && strings.Contains(args[k+1], "://") {
					j.escalate("remote-code:runner", "%s runs a build script fetched from a URL (%s)", quote(r.Line), a)
					return
				}
			}
			if key, v, ok := strings.Cut(strings.TrimLeft(a, "-"), "="); ok && flag && !strings.Contains(key, "/") {
				if kind := manifest.WeakSetting(strings.TrimPrefix(key, "D"), v); kind != "" {
					s.supplyVerdict(Supply{Kind: kind, Key: key, Detail: "set to " + v, By: r.Name}, j)
					return
				}
			} else if k+1 < len(args) && !strings.HasPrefix(a, "-") && (slicesContains(args[:k], "config") || slicesContains(args[:k], "set") || slicesContains(args[:k], "--set")) {
				if kind := manifest.WeakSetting(a, args[k+1]); kind != "" {
					s.supplyVerdict(Supply{Kind: kind, Key: a, Detail: "set to " + args[k+1], By: r.Name}, j)
					return
				}
			}
			if !named && sourceWord.MatchString(a) {
				named = true
			}
			if flag && sourceFlagName.MatchString(a) {
				v, _ := cutValue(a, args, k)
				if strings.ContainsAny(v, "$`") {
					j.escalate("supply-chain:source", "%s points %s at a source computed when it runs (%s): what it names cannot be judged", quote(r.Line), r.Name, v)
					return
				}
			}
		}
		if !named || r.Name == "az" && len(args) > 0 && (args[0] == "repos" || args[0] == "boards" || args[0] == "pipelines" || args[0] == "devops") {
			// rules 29: Azure DevOps' own verbs (az repos pr create --org
			// URL --repository R) name the forge they talk to, not where
			// the workspace's code comes from
			continue
		}
		for _, a := range args {
			if origins, plain := manifest.ForeignOrigins(a); len(origins) > 0 {
				how := "from"
				if plain {
					how = "over plain http from"
				}
				j.escalate("supply-chain:source", "%s points %s at code %s %s, which is not the ecosystem's own registry", quote(r.Line), r.Name, how, origins[0])
				return
			}
			if p, ok := outsideSource(s, a); ok {
				j.escalate("supply-chain:source", "%s points %s at a source outside the workspace (%s)", quote(r.Line), r.Name, p)
				return
			}
		}
	}
}

var sourceFlagName = mustRx(`(?i)source|registry|repo|index|feed|mirror|find-links|plugin-dir`)

// worthJudging reports whether a command's arguments hold anything the
// rule judges (a flag, a URL-like word, a variable, an absolute path, a
// setting): most lines hold none, and are spared the expressions.
func worthJudging(args []string) bool {
	for _, a := range args {
		if a == "" {
			continue
		}
		switch a[0] {
		case '-', '/', '~', '.':
			return true
		}
		if strings.Contains(a, "://") || strings.ContainsAny(a, "@$=") || a == "config" || a == "set" {
			return true
		}
	}
	return false
}

// outsideSource reports whether a flag value names a local directory
// outside the workspace as a source (--source=/opt/feed, --add-source
// ~/pkgs): a feed anyone with that directory controls.
func outsideSource(s *Shield, a string) (string, bool) {
	k, v, ok := strings.Cut(a, "=")
	if !ok || !strings.HasPrefix(k, "-") || !sourceFlagName.MatchString(k) {
		return "", false
	}
	if !strings.HasPrefix(v, "/") && !strings.HasPrefix(v, "~") && !strings.HasPrefix(v, "..") {
		return "", false
	}
	p := s.ResolvePath(v)
	if s.inWorkspace(p) || path.Clean(p) == "/dev/null" {
		return "", false
	}
	return v, true
}

// cutValue is a flag's value: after "=", else the next argument.
func cutValue(a string, args []string, k int) (string, bool) {
	if _, v, ok := strings.Cut(a, "="); ok {
		return v, true
	}
	if k+1 < len(args) {
		return args[k+1], true
	}
	return "", false
}

func slicesContains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

// localDatabaseClient reports a database's client aimed at this machine
// (cockroach sql --insecure --host=localhost:26257): its --insecure is
// a local connection without TLS, not how code is fetched (rules 29).
func localDatabaseClient(r *Run) bool {
	if r.Name != "cockroach" || len(r.Argv) < 2 || r.Argv[1] != "sql" {
		return false
	}
	for i, a := range r.Argv {
		v, ok := strings.CutPrefix(a, "--host=")
		if !ok && a == "--host" && i+1 < len(r.Argv) {
			v, ok = r.Argv[i+1], true
		}
		if ok {
			h, _, _ := strings.Cut(v, ":")
			return h == "localhost" || h == "127.0.0.1"
		}
	}
	return false
}
