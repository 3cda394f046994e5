package shield

import (
	"net/url"
	"path"
	"strings"
)

// The workspace's own toolchain (issue 27, ninth pass, rules 12;
// docs/shield-rules.md "policy: toolchain: workspace"). A program the
// workspace itself declares it uses — its manifests and build files name
// it (west.yml, a conanfile, platformio.ini, a Makefile recipe, a
// package.json script, a CI step, .tool-versions, a project file that
// says which engine opens it), or it is a program file of the workspace
// run by its path — running a verb of daily work (build, test, check,
// list, show, fetch what the manifest pins, flash the board on the desk)
// is the project's work, not a question. The policy's allow rule with
// `toolchain: workspace` allows exactly that:
//
//   - the program is declared: the engine looked for it in the
//     workspace's declaring files when the call was proposed and recorded
//     where it found it (Action.Toolchain), so a replay judges the record;
//   - it is not a shell, an interpreter, a network client or a tool that
//     acts on a remote service (clusters, clouds, hosting, forges, secret
//     stores): those run whatever they are given, or act elsewhere, and
//     are judged by the policy's own rules (a remote-service tool counts
//     only against a loopback address it names);
//   - its first word is a verb of daily work (or a namespace noun and
//     one): a verb the grammar does not know (an extension just
//     installed, forall, obliterate, submit, config writes) is asked;
//   - no word of the line, flag or value, means leaving the machine or
//     destroying elsewhere (publish, upload, deploy, push, submit,
//     delete, purge, stop), a credential (login, token, password,
//     secret, trust), an irreversible or whole-device act (burn, dump,
//     readout, a device picked by serial number), production (prod,
//     live, golden) or a global install; no URL but loopback, no
//     address flag but loopback, no option emptied (--lockfile=''), no
//     source of code named by flag (--remote, --registry, --index-url).
//
// Tier 1 judges every line the rule allows, as it judges any other.

// ToolchainKey is the name under which a workspace declares the program
// r runs: its base name ("west", "idf.py"); "git-lfs" for git's LFS
// extension; "$VAR" for a program named by a variable ("$UNITY_PATH");
// the path as written for a workspace program run by a relative path
// ("firmware/scripts/flash.sh"). "" when it has none (and for a path
// beginning "repo:", which would read as a repository's key).
func ToolchainKey(r *Run) string {
	if len(r.Argv) == 0 {
		return ""
	}
	a0 := strings.Trim(r.Argv[0], `"'`)
	switch {
	case r.Name == "git" && len(r.Argv) > 1 && r.Argv[1] == "lfs":
		return "git-lfs"
	case strings.HasPrefix(a0, "$"):
		v := strings.TrimPrefix(a0, "$")
		v = strings.TrimSuffix(strings.TrimPrefix(v, "{"), "}")
		if v != "" && isIdent(v) {
			return "$" + v
		}
		return ""
	case strings.HasPrefix(a0, "/") || strings.HasPrefix(a0, "~"):
		return ""
	case strings.Contains(a0, "/"):
		p := path.Clean(a0)
		if strings.HasPrefix(p, "../") || p == ".." || strings.ContainsAny(p, "$`*?[") || strings.HasPrefix(p, "repo:") {
			return ""
		}
		return p
	}
	if r.Name == "" || strings.ContainsAny(r.Name, "$`=") {
		return ""
	}
	return r.Name
}

func isIdent(s string) bool {
	for i, c := range s {
		if !(c == '_' || c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || i > 0 && c >= '0' && c <= '9') {
			return false
		}
	}
	return s != ""
}

// ToolchainKeys are the toolchain keys of the programs line runs (in the
// directory cwd, as CommandFactsIn), each once, and the keys of the
// repositories gh and glab are sent to with --repo ("repo:HOST/PATH",
// "repo:HOST/OWNER/*": rules_forge_repo.go).
func (s *Shield) ToolchainKeys(line, cwd string) []string {
	f := s.safeCommandFacts(line, cwd)
	var out []string
	for i := range f.Runs {
		if k := ToolchainKey(&f.Runs[i]); k != "" && !containsStr(out, k) && !toolchainExcluded(k) {
			out = append(out, k)
		}
		if k := inlinePackageWork(&f.Runs[i]); k != "" && !containsStr(out, k) {
			out = append(out, k) // rules 13: julia -e 'using Pkg; Pkg.test()'
		}
		if pkg, _, _, ok := runnerPackage(&f.Runs[i]); ok && !containsStr(out, pkg) {
			out = append(out, pkg)
		}
		for _, k := range forgeRepoKeys(&f.Runs[i], line) {
			if !containsStr(out, k) {
				out = append(out, k) // rules 26: gh issue comment 1 --repo acme/app
			}
		}
	}
	return out
}

func containsStr(l []string, s string) bool {
	for _, x := range l {
		if x == s {
			return true
		}
	}
	return false
}

// toolchainNever are programs a workspace's declaring them does not make
// daily work: shells and interpreters run whatever they are given,
// network clients and privilege tools act beyond the workspace, and the
// policy's own rules judge version control and containers.
var toolchainNever = setOf("sh", "bash", "zsh", "dash", "ksh", "fish", "pwsh", "powershell", "cmd", "python", "python2", "python3",
	"node", "deno", "bun", "lua", "luajit", "perl", "ruby", "php", "Rscript", "julia", "osascript", "tclsh", "wish", "expect", "awk", "gawk",
	"env", "xargs", "sudo", "su", "doas", "eval", "exec", "nohup", "time", "timeout", "nice", "watch", "parallel", "find",
	"curl", "wget", "ssh", "scp", "sftp", "rsync", "nc", "ncat", "netcat", "socat", "telnet", "ftp", "rclone", "s3cmd",
	"git", "hg", "svn", "docker", "podman", "kubectl", "gh", "glab", "crontab", "systemctl", "launchctl", "rm", "dd", "mkfs",
	"npx", "pnpx", "bunx", "uvx", "pipx", "dlx",
	// The shell's own words (shellWords).
	"cd", "pushd", "popd", "export", "set", "unset", "source", ".", "alias", "true", "false", "echo", "printf", "test", "[",
	"if", "then", "else", "fi", "for", "while", "do", "done", "case", "esac", "function", "return", "exit", "local", "read")

// shellWords are the shell's own words of toolchainNever: a runner's
// "run test" runs its task named test, not the builtin.
var shellWords = setOf("cd", "pushd", "popd", "export", "set", "unset", "source", ".", "alias", "true", "false", "echo", "printf",
	"test", "[", "if", "then", "else", "fi", "for", "while", "do", "done", "case", "esac", "function", "return", "exit", "local", "read", "time", "watch", "find")

// toolchainRemote are tools whose verbs act on a remote service: they
// count as the workspace's toolchain only against a loopback address
// the line names.
var toolchainRemote = setOf("helm", "helmfile", "terraform", "tofu", "terragrunt", "pulumi", "nomad", "consul", "vault", "boundary",
	"waypoint", "aws", "gcloud", "az", "ansible", "ansible-playbook", "flyctl", "fly", "vercel", "netlify", "heroku", "firebase",
	"doctl", "eksctl", "oc", "kubectx", "argocd", "flux", "skaffold", "tilt", "railway", "render",
	"steamcmd", "p4v", "mc", "gsutil", "bq", "cf", "okteto", "serverless", "sls", "cdk", "sam", "copilot",
	"packer", "cdktf", "eb", "chalice", "zappa", "modal", "ibmcloud", "oci", "linode-cli", "hcloud", "scw", "vultr-cli", "upcloud",
	"databricks", "snow", "snowsql", "dokku", "caprover", "garden",
	// Database clients: what they run acts on the database they reach.
	"psql", "pgcli", "mysql", "mariadb", "mycli", "mongosh", "mongo", "redis-cli", "valkey-cli", "sqlcmd", "clickhouse-client",
	"cqlsh", "usql", "influx", "cockroach")

// toolchainExcluded reports whether key's program is never the
// workspace's toolchain in this sense.
func toolchainExcluded(key string) bool {
	base := path.Base(key)
	if toolchainNever[base] {
		return true
	}
	for _, p := range []string{"python", "pip"} {
		if strings.HasPrefix(base, p) && strings.Trim(base[len(p):], "0123456789.") == "" {
			return true
		}
	}
	return false
}

// toolchainVerbs are verbs of daily work: build, test, check, read,
// fetch what the manifests pin, clean outputs, and work a board on the
// desk (flash, erase, monitor).
var toolchainVerbs = setOf("build", "b", "compile", "make", "rebuild", "test", "tests", "t", "check", "lint", "fmt", "format", "run",
	"dev", "watch", "bench", "benchmark", "coverage", "cov", "doc", "docs", "generate", "gen", "codegen", "list", "ls", "show",
	"info", "status", "describe", "inspect", "outdated", "graph", "tree", "deps", "dependencies", "version", "help", "doctor",
	"validate", "verify", "diff", "log", "logs", "search", "explain", "query", "why", "clean", "fullclean", "install", "i",
	"update", "sync", "pull", "fetch", "download", "get", "lock", "create", "migrate", "detect", "set", "monitor", "flash", "erase",
	"recover", "program", "debug", "debugserver", "attach", "menuconfig", "guiconfig", "opened", "changes", "where", "have",
	"files", "fstat", "print", "twister", "size", "analyze", "analyse", "audit", "report", "preview", "plan", "render",
	"template", "fix", "tidy", "getpub", "vet", "sim", "simulate", "emulate", "reset", "boot", "typecheck", "typegen", "serve", "start",
	"bundle", "package", "pack", "prepare", "configure", "setup", "path", "home", "which",
	"stats", "annotate", "blame", "filelog", "fixes", "labels", "clients", "counters", "dirs", "sizes", "fsck",
	"pointer", "reconfigure", "all", "flags", "cmake", "ninja", "reload", "routes", "ps", "top", "wait", "server", "up", "affected", "seed", "upgrade", "revision",
	// rules 13: pipelines reproduced, environments resolved, fat jars, notebooks and tracking UIs served locally
	"repro", "reproduce", "assembly", "concretize", "bootstrap", "lab", "notebook", "ui", "metrics", "params", "plots", "dag", "current")

// sourceDirWords are directory names a linter or checker takes as its
// first argument without a "./" (pyright src, tsc apps): arguments, not
// verbs.
var sourceDirWords = setOf("src", "lib", "app", "apps", "packages", "tests", "test", "spec", "specs", "services", "web", "api", "cmd",
	"pkg", "internal", "scripts", "tools", "libs", "modules", "components", "frontend", "backend", "server", "client", "core")

// labelName is the target name of a build label (//pkg:name, @repo//:x,
// :name), or "".
func labelName(tok string) string {
	if !strings.HasPrefix(tok, "//") && !strings.HasPrefix(tok, "@") && !strings.HasPrefix(tok, ":") {
		return ""
	}
	if i := strings.LastIndexByte(tok, ':'); i >= 0 {
		return tok[i+1:]
	}
	return path.Base(tok)
}

// toolchainNouns are namespace words a verb follows ("conan graph
// info", "pio device monitor", "west sdk install").
var toolchainNouns = setOf("pub", "flake", "mod", "pkg", "package", "packages", "lock", "lockfile", "graph", "device", "devices", "sdk",
	"target", "targets", "dependencies", "deps", "dependency", "job", "jobs", "project", "projects", "workspace", "env",
	"environment", "cache", "toolchain", "toolchains", "component", "components", "board", "boards", "test", "tests", "node",
	"nodes", "alloc", "allocs", "namespace", "platform", "platforms", "lib", "libs", "library", "module", "modules", "app",
	"apps", "image", "images", "flash", "monitor", "system", "task", "tasks", "tool", "tools", "cmake", "size", "idf",
	"partition-table", "app-flash", "bootloader", "efuse", "db", "schema", "migrations", "assets", "asset")

// toolchainGuarded are namespace nouns whose verbs change where code
// comes from, who may do what, or what holds a credential: only a
// listing verb follows them.
var toolchainGuarded = setOf("config", "configuration", "remote", "remotes", "registry", "registries", "source", "sources", "mirror",
	"mirrors", "auth", "account", "accounts", "user", "users", "token", "tokens", "key", "keys", "secret", "secrets",
	"credential", "credentials", "login", "acl", "policy", "policies", "permission", "permissions", "trust", "hook", "hooks",
	"plugin", "plugins", "extension", "extensions", "var", "vars", "variable", "variables", "kv", "snapshot", "operator",
	"self", "ext", "profile", "profiles")

// toolchainListing are the verbs a guarded noun may take.
var toolchainListing = setOf("list", "ls", "home", "path", "detect", "status")

// toolchainRisk are words (of a verb, a flag or a value, split at - _ .
// and case) whose meaning is not daily work: leaving the machine,
// destroying elsewhere, credentials, irreversible or whole-device acts,
// production, global installs, turned-off verification.
var toolchainRisk = setOf("publish", "upload", "deploy", "push", "submit", "ship", "promote", "release-live", "delete", "remove",
	"rm", "del", "obliterate", "purge", "destroy", "drop", "wipe", "prune", "expire", "revoke", "stop", "kill", "terminate",
	"restore", "login", "logout", "token", "tokens", "password", "passwd", "secret", "secrets", "credential", "credentials",
	"trust", "getpriv", "burn", "efuses", "readcode", "readram", "readuicr", "readout", "dump", "snr", "serialno",
	"serialnumber", "prod", "production", "golden", "global", "g", "force", "insecure", "noverify", "unsafe",
	"trustedhost", "allowunsigned", "eraseall", "masserase", "lockdown", "apply", "rollout", "rewrite", "revert", "triggers",
	"admin", "su", "setlive", "share", "send", "post", "put", "sudo", "gc", "vacuum")

// toolchainFlagRisk are the words of toolchainRisk an option's name is
// judged by (a test runner's --stop-on-failure is not a stop).
var toolchainFlagRisk = setOf("publish", "upload", "deploy", "push", "submit", "delete", "remove", "purge", "destroy", "drop",
	"wipe", "prune", "login", "token", "password", "secret", "credential", "credentials", "trust", "getpriv", "burn",
	"readcode", "readram", "readuicr", "readout", "dump", "snr", "serialno", "serialnumber", "prod", "production", "golden",
	"force", "insecure", "noverify", "unsafe", "trustedhost", "allowunsigned", "eraseall", "masserase", "setlive", "override")

// toolchainInstallVerbs install packages: with -g or --global, outside
// the workspace.
var toolchainInstallVerbs = setOf("install", "i", "add", "update", "upgrade", "link", "uninstall", "remove", "sync", "get")

// toolchainInputFlags give a program the file it runs or is configured
// by: from outside the workspace, not the project's.
var toolchainInputFlags = setOf("f", "file", "justfile", "makefile", "taskfile", "config", "config-file", "c", "script", "init",
	"init-file", "rcfile", "rc", "settings", "load", "require", "r", "plugin", "plugins", "preset-file", "buildfile", "b")

// inputFlag reports whether an option (its name) gives a program the
// file it runs or is configured by: toolchainInputFlags, or a name with
// a part saying script, file, config, command, init, rc, load, plugin,
// module, require or include, and none saying output (out, output,
// dest, log, report, result).
func inputFlag(name string) bool {
	lname := strings.ToLower(name)
	if toolchainInputFlags[lname] {
		return true
	}
	in := false
	for _, p := range riskParts(name) {
		switch p {
		case "out", "output", "dest", "destination", "log", "logs", "report", "reports", "result", "results", "dir", "cache", "tmp", "temp":
			return false
		case "script", "file", "config", "cfg", "conf", "cmd", "command", "commander", "init", "rc", "load", "plugin", "module",
			"require", "include", "preset", "profile":
			in = true
		}
	}
	return in
}

// outsidePath reports whether a path value lies outside the workspace
// as written: absolute (but /dev/null and the like) or under a home.
func outsidePath(v string) bool {
	if strings.HasPrefix(v, "~") || strings.HasPrefix(v, "$HOME") || strings.HasPrefix(v, "${HOME}") {
		return true
	}
	return strings.HasPrefix(v, "/") && !strings.HasPrefix(v, "/dev/")
}

// loaderVar reports whether an assignment before a program changes what
// program or code it runs (PATH, LD_PRELOAD, NODE_OPTIONS …).
func loaderVar(name string) bool {
	switch name {
	case "PATH", "NODE_OPTIONS", "NODE_PATH", "PYTHONPATH", "PYTHONSTARTUP", "PYTHONHOME", "PERL5OPT", "PERL5LIB", "RUBYOPT",
		"RUBYLIB", "BASH_ENV", "ENV", "JAVA_TOOL_OPTIONS", "_JAVA_OPTIONS", "GIT_SSH_COMMAND", "GIT_EXEC_PATH", "CC", "CXX",
		"LDFLAGS", "CFLAGS", "CGO_LDFLAGS", "RUSTC_WRAPPER", "RUSTC", "CARGO_BUILD_RUSTC_WRAPPER", "ELIXIR_ERL_OPTIONS", "ERL_FLAGS":
		return true
	}
	return strings.HasPrefix(name, "LD_") || strings.HasPrefix(name, "DYLD_")
}

// toolchainCodeFlags give a program code to run on its command line.
var toolchainCodeFlags = setOf("e", "eval", "exec", "execute", "expr", "expression", "eval-command")

// toolchainRunFlags give a program another program to run.
var toolchainRunFlags = setOf("command", "run", "exec-command", "shell-command", "wrapper")

// remoteRef reports whether tok names code by a reference to elsewhere:
// a scheme (github:owner/repo, git+https:…, tarball:…) or a registry
// package's output (nixpkgs#hello; ".#x", a local flake's, is not).
func remoteRef(tok string) bool {
	if i := strings.IndexByte(tok, ':'); i > 0 {
		switch strings.ToLower(tok[:i]) {
		case "github", "gitlab", "sourcehut", "git", "git+https", "git+ssh", "git+http", "git+file", "hg", "hg+https",
			"tarball", "flake", "registry", "npm", "pypi", "oci", "docker", "ssh", "sftp", "s3", "gs", "gcs":
			return true
		}
	}
	if i := strings.IndexByte(tok, '#'); i > 0 {
		pre := tok[:i]
		if pre != "." && !strings.HasPrefix(pre, "./") && !strings.HasPrefix(pre, "/") && !strings.HasPrefix(pre, "path:") && !strings.Contains(pre, "/") {
			return true
		}
	}
	return false
}

// toolchainSourceFlags name where code or a service is: their value
// must be loopback.
var toolchainSourceFlags = setOf("remote", "registry", "index", "index-url", "extra-index-url", "mirror", "repo", "repository",
	"repo-url", "endpoint", "address", "addr", "http-addr", "grpc-addr", "host", "server", "url", "source", "api-url", "base-url",
	"proxy", "from", "origin")

// toolchainVCS are version-control tools: their reverts and cleans
// destroy uncommitted work, daily only as a preview (-n, --dry-run).
var toolchainVCS = setOf("p4", "git-lfs", "fossil", "jj", "sl", "bzr", "cvs", "darcs", "pijul")

func setOf(words ...string) map[string]bool {
	m := make(map[string]bool, len(words))
	for _, w := range words {
		m[w] = true
	}
	return m
}

// toolScan is what toolchainScan read of a program's line: its words
// that are not flag values (verbs), the bare words right after a flag
// (maybe its value), and what its flags and values say.
type toolScan struct {
	argv      []string
	verbs     []string
	afterFlag []string
	remote    bool // the program acts on a remote service (toolchainRemote)
	vcs       bool
	loop      bool // the line names a loopback address
	dry       bool
	global    bool
}

// toolchainScan reads r, the program key, for what no daily or
// inspecting use may hold whatever its verb: code or a service named
// elsewhere, risky words and values, options that run programs or code
// or take input from outside the workspace. ok false says why not.
func toolchainScan(r *Run, key string) (sc toolScan, ok bool, why string) {
	if key == "" || toolchainExcluded(key) {
		return sc, false, "not a toolchain program"
	}
	if r.Via != "" && literalVia(r.Via) {
		return sc, false, "found in a payload"
	}
	for _, w := range riskParts(path.Base(key)) {
		if toolchainRisk[w] {
			return sc, false, "its name says " + w
		}
	}
	line := r.Line
	if len(line) > maxPolicyLine {
		return sc, false, "too long"
	}
	// Assignments before the program (NOMAD_ADDR=…, MIX_ENV=prod).
	loop := false
	for _, tok := range strings.Fields(line) {
		name, val, ok := strings.Cut(tok, "=")
		if !ok || !isIdent(name) {
			break
		}
		val = strings.Trim(val, `"'`)
		if w, bad := riskyValue(val); bad {
			return sc, false, w
		}
		if loaderVar(name) {
			return sc, false, "its assignment " + clipText(tok, 40) + " changes what program or code runs"
		}
		if isLoopbackURL(val) {
			loop = true
		}
	}
	if ok, why, lp := urlsLoopback(line); !ok {
		return sc, false, why
	} else if lp {
		loop = true
	}
	argv := r.Argv[1:]
	if key == "git-lfs" {
		argv = r.Argv[2:]
	}
	remote := toolchainRemote[path.Base(key)]
	vcs := toolchainVCS[path.Base(key)]
	dry, global := false, false
	var verbs []string     // the words that are not flag values
	var afterFlag []string // the words right after a flag (maybe its value)
	prevFlag := false
	for i, tok := range argv {
		if tok == "--" {
			// What follows goes to another program (cmake's -D…): flags
			// and values only.
			for _, t := range argv[i+1:] {
				if w, bad := riskyToken(t); bad {
					return sc, false, w
				}
			}
			break
		}
		if remoteRef(strings.Trim(tok, `"'`)) {
			return sc, false, "it names code from elsewhere: " + clipText(tok, 60)
		}
		if strings.HasPrefix(tok, "-") && len(tok) > 1 && tok != "-" {
			name, val, hasVal := strings.Cut(strings.TrimLeft(tok, "-"), "=")
			lname := strings.ToLower(name)
			if toolchainRunFlags[lname] {
				return sc, false, "its option " + clipText(tok, 40) + " runs another program"
			}
			if toolchainCodeFlags[lname] {
				// -e CODE (mix run -e '…', elixir's, ruby's): a value that is
				// not a bare name (pio's -e ENV is) is code run from the line.
				v := val
				if !hasVal && i+1 < len(argv) {
					v = argv[i+1]
				}
				if v != "" && !wordLike(v) {
					return sc, false, "its option " + clipText(tok, 40) + " runs code given on the line"
				}
			}
			if lname == "n" || lname == "dry-run" || lname == "dryrun" || lname == "preview" || lname == "check" {
				dry = true
			}
			if lname == "g" || lname == "global" || lname == "user" || lname == "system" {
				global = true
			}
			for _, w := range riskParts(name) {
				if toolchainFlagRisk[w] {
					return sc, false, "its option " + clipText(tok, 40) + " says " + w
				}
			}
			if hasVal {
				v := strings.Trim(val, `"'`)
				if v == "" {
					return sc, false, "its option " + clipText(tok, 40) + " is emptied"
				}
				if w, bad := riskyValue(v); bad {
					return sc, false, w
				}
				if inputFlag(name) && outsidePath(v) {
					return sc, false, "its option " + clipText(tok, 40) + " takes what it runs from outside the workspace"
				}
				if toolchainSourceFlags[lname] {
					if !isLoopbackURL(v) && !loopback(hostOnly(v)) {
						return sc, false, "its option " + clipText(tok, 40) + " names where code or a service is"
					}
					loop = true
				}
				prevFlag = false
			} else {
				prevFlag = true
				if inputFlag(name) && i+1 < len(argv) && outsidePath(strings.Trim(argv[i+1], `"'`)) {
					return sc, false, "its option " + clipText(tok, 40) + " takes what it runs from outside the workspace"
				}
				if toolchainSourceFlags[lname] && strings.HasPrefix(tok, "--") && i+1 < len(argv) {
					v := strings.Trim(argv[i+1], `"'`)
					if !isLoopbackURL(v) && !loopback(hostOnly(v)) {
						return sc, false, "its option " + tok + " names where code or a service is"
					}
					loop = true
				}
			}
			continue
		}
		if w, bad := riskyValue(strings.Trim(tok, `"'`)); bad {
			return sc, false, w
		}
		if name := labelName(tok); name != "" {
			// A build target run by its label (//deploy:image_push): its
			// name says what it does.
			if w, bad := riskyValue(name); bad {
				return sc, false, w
			}
		}
		if !wordLike(tok) || sourceDirWords[tok] && !toolchainVerbs[tok] && !toolchainNouns[tok] {
			prevFlag = false
			continue
		}
		if prevFlag {
			afterFlag = append(afterFlag, tok)
		} else {
			verbs = append(verbs, tok)
		}
		prevFlag = false
	}
	return toolScan{argv: argv, verbs: verbs, afterFlag: afterFlag, remote: remote, vcs: vcs, loop: loop, dry: dry, global: global}, true, ""
}

// toolchainDaily reports whether r, a program the workspace declares
// (key), runs a verb of daily work; else why not.
func toolchainDaily(r *Run, key string) (bool, string) {
	sc, ok, why := toolchainScan(r, key)
	if !ok {
		return false, why
	}
	argv, verbs, afterFlag, remote, vcs, loop, dry, global := sc.argv, sc.verbs, sc.afterFlag, sc.remote, sc.vcs, sc.loop, sc.dry, sc.global
	if remote && !loop {
		return false, "it acts on a remote service and names no loopback address"
	}
	if len(verbs) == 0 && global {
		return false, "it installs outside the workspace (a global or user install)"
	}
	if len(verbs) == 0 {
		// Flags and their values only (openocd -f …, "$UNITY_PATH"
		// -batchmode …): a bare lowercase word after a flag may be a
		// subcommand the grammar does not know.
		for _, w := range afterFlag {
			lw := strings.ToLower(w)
			if lw == w && strings.Trim(w, "abcdefghijklmnopqrstuvwxyz") == "" && !toolchainVerbs[w] && !toolchainNouns[w] {
				return false, "its word " + clipText(w, 30) + " may be a subcommand Shield does not know"
			}
		}
		return true, ""
	}
	v0 := strings.ToLower(verbs[0])
	if ns := strings.FieldsFunc(v0, func(c rune) bool { return c == '.' || c == ':' }); len(ns) > 1 {
		// A namespaced task (mix ecto.migrate, rake db:migrate, nx
		// web:build): its verb is its last part or, for a generator, an
		// earlier one (phx.gen.context).
		verb := ""
		for k := len(ns) - 1; k >= 0 && verb == ""; k-- {
			if p := strings.FieldsFunc(ns[k], func(c rune) bool { return c == '-' || c == '_' }); len(p) > 0 && toolchainVerbs[p[0]] {
				verb = p[0]
			}
		}
		lastVerb := toolchainVerbs[strings.FieldsFunc(ns[len(ns)-1], func(c rune) bool { return c == '-' || c == '_' })[0]]
		// rules 15: or the verb first and its scope after (a Taskfile's
		// or a package script's test:php, lint:fix, build:web)
		firstVerb := toolchainVerbs[ns[0]] && len(ns) == 2 && nounLike(ns[1]) && !toolchainRisk[ns[1]]
		if verb == "" || !lastVerb && !firstVerb && verb != "gen" && verb != "generate" {
			return false, "its verb " + clipText(v0, 30) + " is not one of daily work"
		}
		if firstVerb && !lastVerb {
			verb = ns[0]
		}
		if toolchainInstallVerbs[verb] && (ns[0] == "archive" || ns[0] == "escript" || ns[0] == "local" || ns[0] == "global") {
			return false, "it installs outside the workspace (" + clipText(v0, 30) + ")"
		}
		v0 = verb
		verbs = verbs[:1]
	}
	parts := strings.FieldsFunc(v0, func(c rune) bool { return c == '-' || c == '_' })
	if len(parts) > 1 {
		// A compound verb (update-dependencies, set-target, erase_flash):
		// every part a verb or a noun, the first a verb.
		if !toolchainVerbs[parts[0]] {
			return false, "its verb " + clipText(v0, 30) + " is not one of daily work"
		}
		for _, p := range parts[1:] {
			if !toolchainVerbs[p] && !toolchainNouns[p] {
				return false, "its verb " + clipText(v0, 30) + " is not one of daily work"
			}
		}
		v0 = parts[0]
	} else if toolchainGuarded[v0] {
		if len(verbs) < 2 || !toolchainListing[strings.ToLower(verbs[1])] {
			return false, "it changes " + v0 + " settings"
		}
		return true, ""
	} else if !toolchainVerbs[v0] {
		if !toolchainNouns[v0] {
			return false, "its verb " + clipText(v0, 30) + " is not one of daily work"
		}
		if len(verbs) > 1 {
			v1 := strings.ToLower(verbs[1])
			if !toolchainVerbs[v1] {
				return false, "its verb " + clipText(v0+" "+v1, 40) + " is not one of daily work"
			}
			if v1 == "run" && !loop {
				// A job, a stack, a service run is submitted to a
				// service: daily only against this machine.
				return false, v0 + " run submits to a service, and no loopback address is named"
			}
			v0 = v1
		}
	}
	if v0 == "run" {
		// A target of another repository run (bazel run @repo//:x).
		for _, w := range argv {
			if strings.HasPrefix(w, "@") && len(w) > 1 && w[1] != '/' {
				return false, "it runs a target of another repository: " + clipText(w, 60)
			}
		}
	}
	if global && toolchainInstallVerbs[v0] {
		return false, "it installs outside the workspace (a global or user install)"
	}
	if (v0 == "run" || v0 == "exec") && len(verbs)+len(afterFlag) > 0 {
		// A runner's run of another program (hatch run sh -c …).
		next := ""
		for _, w := range argv {
			if !strings.HasPrefix(w, "-") && w != verbs[0] && wordLike(w) {
				next = w
				break
			}
		}
		if next != "" && toolchainNever[path.Base(next)] && !shellWords[next] {
			return false, v0 + " runs " + next + ", which the toolchain does not make daily work"
		}
	}
	if vcs && (v0 == "clean" || v0 == "migrate" || v0 == "reset" || v0 == "checkout" || v0 == "resolve" || v0 == "move" || v0 == "rename") && !dry {
		return false, "a version-control " + v0 + " discards work unless previewed"
	}
	if v0 == "set" {
		for _, w := range argv {
			if strings.Contains(w, "=") && !strings.HasPrefix(w, "-") {
				return false, "it sets a value"
			}
		}
	}
	return true, ""
}

// wordLike reports whether tok is a bare word (a verb, a name:
// "build", "set-target", "deps.update", "db:migrate") rather than a
// path, a number, a file name or a quoted script.
func wordLike(tok string) bool {
	if tok == "" || !(tok[0] >= 'a' && tok[0] <= 'z' || tok[0] >= 'A' && tok[0] <= 'Z') {
		return false
	}
	for i := 0; i < len(tok); i++ {
		c := tok[i]
		if !(isAlnum(c) || c == '_' || c == '-' || c == '+' || c == ':' || c == '.') {
			return false
		}
	}
	if i := strings.LastIndexByte(tok, '.'); i >= 0 && fileExts[strings.ToLower(tok[i+1:])] {
		return false
	}
	return true
}

// fileExts are extensions that make a dotted word a file name.
var fileExts = setOf("py", "js", "mjs", "cjs", "ts", "tsx", "jsx", "json", "yml", "yaml", "toml", "hcl", "cfg", "conf", "ini",
	"txt", "md", "sh", "bash", "ps1", "bat", "cmd", "ex", "exs", "erl", "c", "h", "cc", "cpp", "hpp", "rs", "go", "java",
	"kt", "kts", "rb", "lua", "hex", "bin", "elf", "img", "pem", "der", "key", "crt", "xml", "html", "csv", "lock", "nix",
	"bzl", "bazel", "zip", "gz", "tgz", "tar", "whl", "jar", "log", "sql", "db", "sqlite", "sqlite3", "proto", "cs", "uproject",
	"uplugin", "jlink", "overlay", "dts", "ld", "mk", "cmake", "gradle", "swift", "m", "dart", "vue", "svelte", "css", "scss")

// riskyToken judges a token after "--" (flags for another program).
func riskyToken(t string) (string, bool) {
	name, val, _ := strings.Cut(strings.TrimLeft(t, "-"), "=")
	for _, w := range riskParts(name) {
		if toolchainFlagRisk[w] && w != "g" {
			return "its option " + clipText(t, 40) + " says " + w, true
		}
	}
	return riskyValue(strings.Trim(val, `"'`))
}

// riskyValue judges a value or an argument: its words (a path's are
// names, not meanings, and are skipped) and any URL in it.
func riskyValue(v string) (string, bool) {
	if v == "" {
		return "", false
	}
	if strings.Contains(v, "://") {
		if !isLoopbackURL(v) {
			return "it names " + clipText(v, 60), true
		}
		return "", false
	}
	parts := strings.Fields(v)
	if len(parts) == 1 && strings.ContainsAny(v, "/\\") {
		return "", false // a path: its words are names
	}
	for _, part := range parts {
		if a := addressIn(part); a != "" {
			return "its value names the host " + clipText(a, 60), true
		}
		if strings.ContainsAny(part, "/\\") {
			continue
		}
		for _, w := range riskParts(part) {
			if toolchainRisk[w] && w != "g" {
				return "its word " + clipText(part, 40) + " says " + w, true
			}
		}
	}
	return "", false
}

// riskParts splits a word at - _ . : ; and case changes, lowercased,
// and adds the whole word lowercased with its separators dropped.
func riskParts(s string) []string {
	if len(s) > 200 {
		s = s[:200]
	}
	var out []string
	var cur strings.Builder
	flush := func() {
		if cur.Len() > 0 {
			out = append(out, strings.ToLower(cur.String()))
			cur.Reset()
		}
	}
	prevLower := false
	for _, c := range s {
		switch {
		case c == '-' || c == '_' || c == '.' || c == ':' || c == ';' || c == ',' || c == '+' || c == '=' || c == '#' || c == '@':
			flush()
			prevLower = false
		case c >= 'A' && c <= 'Z':
			if prevLower {
				flush()
			}
			cur.WriteRune(c)
			prevLower = false
		default:
			cur.WriteRune(c)
			prevLower = c >= 'a' && c <= 'z'
		}
	}
	flush()
	if len(out) > 1 {
		whole := strings.ToLower(strings.Map(func(c rune) rune {
			if c == '-' || c == '_' || c == '.' || c == ':' || c == ';' || c == ',' || c == '+' || c == '=' || c == '#' || c == '@' {
				return -1
			}
			return c
		}, s))
		out = append(out, whole)
	}
	return out
}

// urlsLoopback reports whether every URL in line is this machine's
// (and whether there was one).
func urlsLoopback(line string) (ok bool, why string, any bool) {
	rest := line
	for n := 0; n < 64; n++ {
		i := strings.Index(rest, "://")
		if i < 0 {
			break
		}
		j := i
		for j > 0 && (isAlnum(rest[j-1]) || rest[j-1] == '+' || rest[j-1] == '-' || rest[j-1] == '.') {
			j--
		}
		k := i + 3
		for k < len(rest) && !strings.ContainsRune(" \t\n'\"`;|&)<>", rune(rest[k])) {
			k++
		}
		u := rest[j:k]
		if !isLoopbackURL(u) {
			return false, "it names " + clipText(u, 60), false
		}
		any = true
		rest = rest[k:]
	}
	if strings.Contains(line, "git@") {
		return false, "it names a remote repository", false
	}
	return true, "", any
}

func isAlnum(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// isLoopbackURL reports whether v is a URL to this machine.
func isLoopbackURL(v string) bool {
	if !strings.Contains(v, "://") {
		return false
	}
	u, err := url.Parse(v)
	if err != nil {
		return false
	}
	return loopback(u.Hostname())
}

// hostOnly is the host of "host:port" or "host".
func hostOnly(v string) string {
	if h, _, ok := strings.Cut(v, ":"); ok && !strings.Contains(v, "[") {
		return h
	}
	return v
}

// declaredBy finds key's declaration in a.Toolchain ("key=file"): the
// file that declares it, or "".
func declaredBy(a *Action, key string) string {
	for _, t := range a.Toolchain {
		if k, file, ok := strings.Cut(t, "="); ok && k == key {
			return file
		}
	}
	return ""
}

// workspaceToolchain reports whether run is a daily use of a program
// the workspace declares (a.Toolchain).
func workspaceToolchain(a *Action, run *Run) bool {
	if len(a.Toolchain) == 0 || run == nil {
		return false
	}
	if declaredRunner(a, run) {
		return true
	}
	if k := inlinePackageWork(run); k != "" {
		return declaredBy(a, k) != ""
	}
	key := ToolchainKey(run)
	if key == "" || declaredBy(a, key) == "" {
		return false
	}
	ok, _ := toolchainDaily(run, key)
	return ok
}

// shellSetupRe is a version or environment manager's shell setup whose
// output a line evaluates (the default policy's shell-setup).
var shellSetupRe = mustRx(`^\$\((?:opam env(?: --switch=[\w.-]+)?|direnv export (?:bash|zsh|fish)|mise (?:env|activate)(?: (?:bash|zsh|fish))?|nix print-dev-env|rbenv init -|nodenv init -|pyenv init (?:-|--path)|fnm env(?: --use-on-cd)?|brew shellenv|ssh-agent -s)\)$`)

// shellSetup reports whether the Unknown u is the program computed from
// a shell setup's output (eval "$(opam env)"): known to be the setup.
func shellSetup(u string) bool {
	w, ok := strings.CutPrefix(u, programComputed)
	return ok && shellSetupRe.MatchString(strings.Trim(w, `"'`))
}

// declaredVariableProgram reports whether the Unknown u is a program
// named by a variable ("the program's name is computed at run time:
// $X") that a.Toolchain declares.
func declaredVariableProgram(a *Action, u string) bool {
	w, ok := strings.CutPrefix(u, programComputed)
	if !ok {
		return false
	}
	k := ToolchainKey(&Run{Argv: []string{w}})
	return strings.HasPrefix(k, "$") && declaredBy(a, k) != ""
}

// settingsOnly reports whether argv runs a tool's settings noun with a
// listing or reading verb (conan profile detect, npm config list, pnpm
// config get registry): the tool's own settings read, not the project's
// build files run (rules 12, k27h: flow:changed-then-run does not ask
// about it). A settings write (composer config scripts.x 'cmd') is not.
func settingsOnly(argv []string) bool {
	var words []string
	for _, a := range argv[1:] {
		if a == "--list" || a == "-l" {
			words = append(words, "list")
			continue
		}
		if !strings.HasPrefix(a, "-") {
			words = append(words, a)
		}
	}
	if len(words) < 2 || !toolchainGuarded[words[0]] {
		return false
	}
	switch words[1] {
	case "list", "ls", "get", "show", "detect", "home", "path", "status":
		return len(words) <= 3
	}
	return false
}

// runnerPackage reads a package runner's line (npx, pnpx, bunx, bun x,
// npm exec, pnpm dlx|exec, yarn dlx|exec, uvx, uv tool run, pipx run):
// the package it runs (its registry name, scope kept), the version on
// the line ("" for none), and the run of the package's own command. ok
// is false for another line, or one that names the package's source
// (--package, --from, --spec, a URL or a path).
func runnerPackage(r *Run) (pkg, version string, inner Run, ok bool) {
	if len(r.Argv) < 2 {
		return "", "", Run{}, false
	}
	args := r.Argv[1:]
	python := false
	switch r.Name {
	case "npx", "pnpx", "bunx":
	case "uvx":
		python = true
	case "bun":
		if args[0] != "x" {
			return "", "", Run{}, false
		}
		args = args[1:]
	case "npm", "pnpm", "yarn":
		if args[0] != "exec" && args[0] != "x" && args[0] != "dlx" {
			return "", "", Run{}, false
		}
		args = args[1:]
	case "pipx":
		if args[0] != "run" {
			return "", "", Run{}, false
		}
		args, python = args[1:], true
	case "uv":
		if len(args) < 2 || args[0] != "tool" || args[1] != "run" {
			return "", "", Run{}, false
		}
		args, python = args[2:], true
	default:
		return "", "", Run{}, false
	}
	for k, a := range args {
		switch {
		case a == "--":
			continue
		case a == "-p" || a == "--package" || strings.HasPrefix(a, "--package=") || a == "--from" || strings.HasPrefix(a, "--from=") ||
			a == "--spec" || strings.HasPrefix(a, "--spec=") || a == "--with" || strings.HasPrefix(a, "--with=") || a == "-c" || a == "--call":
			return "", "", Run{}, false
		case strings.HasPrefix(a, "-"):
			continue
		}
		spec := a
		if strings.ContainsAny(spec, ":/\\") && !(strings.HasPrefix(spec, "@") && strings.Count(spec, "/") == 1 && !strings.Contains(spec, ":")) {
			return "", "", Run{}, false // a URL, a path, a git or github: reference
		}
		name, ver := spec, ""
		if python {
			if n, v, ok := strings.Cut(spec, "=="); ok {
				name, ver = n, v
			} else if n, v, ok := strings.Cut(spec, "@"); ok {
				name, ver = n, v
			}
		} else if i := strings.LastIndexByte(spec, '@'); i > 0 {
			name, ver = spec[:i], spec[i+1:]
		}
		if name == "" {
			return "", "", Run{}, false
		}
		bin := name
		if i := strings.LastIndexByte(bin, '/'); i >= 0 {
			bin = bin[i+1:]
		}
		argv := append([]string{bin}, args[k+1:]...)
		return name, ver, Run{Name: bin, Argv: argv, Line: strings.Join(argv, " "), Via: r.Via}, true
	}
	return "", "", Run{}, false
}

// exactVersion is a version that names one release (1.2.3, 3.4.2-rc.1).
var exactVersion = mustRx(`^v?\d+\.\d+\.\d+(?:[-+][\w.]+)?$`)

// declaredRunner reports whether r runs, through a package runner, a
// package the workspace declares (a.Toolchain), at no version or an
// exact one, with a verb of daily work: the workspace's own tool, not
// code fetched at run time (rules 12, k27h).
func declaredRunner(a *Action, r *Run) bool {
	pkg, ver, inner, ok := runnerPackage(r)
	if !ok || (ver != "" && !exactVersion.MatchString(ver)) || declaredBy(a, pkg) == "" {
		return false
	}
	daily, _ := toolchainDaily(&inner, pkg)
	if !daily {
		// rules 18: a declared client's inspecting verb (npx wrangler
		// whoami, bunx wrangler tail)
		daily, _ = inspectingUse(&inner)
	}
	return daily
}

// addressIn returns the remote address a word names, or "": user@host
// with a dotted host, or an IPv4 address other than loopback (a value
// that names somewhere else leaves the machine, whatever the words
// around it; rules 13).
func addressIn(w string) string {
	w = strings.Trim(w, `"'()[]{},;`)
	if i := strings.LastIndexByte(w, '@'); i > 0 && i < len(w)-1 {
		host := w[i+1:]
		if j := strings.IndexAny(host, ":/"); j >= 0 {
			host = host[:j]
		}
		if strings.Contains(host, ".") && !strings.HasPrefix(host, "127.") && host != "localhost" && !strings.ContainsAny(host, "$`{") &&
			// rules 18: a host name or an IPv4 address (release:app@3.14.0+412 is neither)
			(hostLike(strings.ToLower(host)) || strings.Count(host, ".") == 3 && strings.Trim(host, "0123456789.") == "") {
			return w
		}
	}
	for _, f := range strings.FieldsFunc(w, func(c rune) bool { return !(c == '.' || c >= '0' && c <= '9') }) {
		if strings.Count(f, ".") == 3 && !strings.HasPrefix(f, "127.") && f != "0.0.0.0" {
			ok := true
			for _, n := range strings.Split(f, ".") {
				if n == "" || len(n) > 3 || n > "255" && len(n) == 3 {
					ok = false
				}
			}
			if ok {
				return f
			}
		}
	}
	return ""
}
