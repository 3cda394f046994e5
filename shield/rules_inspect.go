package shield

import "strings"

// Any program's inspecting verbs (rules 14, session 19;
// docs/shield-rules.md "toolchain: inspect"). A command-line client the
// policy does not name (temporal, sentry-cli, bk, adb, dvc, logcli …)
// was asked about whatever it did, and the blind holdouts showed most of
// those questions were a developer looking: `temporal workflow list`,
// `sentry-cli releases list`, `adb devices -l`, `argocd app diff`. This
// matcher (an allow rule's `toolchain: inspect`) lets a program's line
// through when its subcommand is a verb that only reads or reports
// (list, show, status, describe, logs, diff, validate …), reached through
// at most two namespace words that are not verbs themselves, and the line
// holds nothing toolchainScan refuses for any program (code or a service
// named elsewhere, risky words and values, options that run code or take
// input from outside the workspace). Never matched: shells, interpreters,
// network clients and the programs the policy judges by name
// (toolchainNever), secret stores (their reads print secrets), a line
// with a word that changes something anywhere in it (`releases new
// list` is a release named list), a verb it does not know. Tier 1 still
// judges every line it allows.

// inspectVerbs only read or report.
var inspectVerbs = setOf("list", "ls", "show", "info", "status", "describe", "inspect", "outdated", "graph", "tree", "version",
	"help", "doctor", "validate", "verify", "diff", "log", "logs", "search", "explain", "query", "why", "get", "print", "stats",
	"top", "ps", "lint", "check", "whoami", "devices", "where", "which", "current", "metrics", "report", "audit", "plan", "preview",
	"render", "template", "history", "events", "view", "count", "summary", "health", "lag", "capabilities", "env-info",
	// rules 16: an image's digest looked up (crane digest, skopeo inspect's sibling)
	"digest",
	// rules 17: a cluster's membership and catalog listed (consul members, consul catalog
	// services, consul operator raft list-peers, nomad node status), a schedule's next runs
	// (systemd-analyze calendar)
	"members", "peers", "list-peers", "nodes", "services", "datacenters", "calendar", "timespan",
	// rules 18: a platform's releases listed (fly releases), a record
	// fetched by its id (stripe customers retrieve)
	"retrieve", "tail",
	// rules 18: a device's logs and state read (adb logcat, adb shell dumpsys, getprop)
	"logcat", "dumpsys", "getprop",
	// rules 20: a compiler's bare version, a key-value store's cursor
	// over its keys (redis-cli --scan), a package store's reads (nix
	// store diff-closures, path-info, why-depends)
	"numeric-version", "scan", "diff-closures", "path-info", "why-depends")

// listingNouns list when they are the line's last word (fly releases);
// before another word they are a namespace (releases new list).
var listingNouns = setOf("releases", "deployments", "regions")

// inspectChanging are words that change something, wherever they stand
// in the line (beyond toolchainRisk, which toolchainScan refuses).
var inspectChanging = setOf("new", "create", "add", "set", "unset", "update", "upgrade", "install", "uninstall", "start", "restart",
	"run", "exec", "execute", "sync", "import", "export", "write", "edit", "patch", "rename", "move", "mv", "cp", "copy",
	"enable", "disable", "scale", "cancel", "retry", "rerun", "trigger", "approve", "merge", "close", "reopen", "lock", "unlock",
	"tag", "untag", "label", "comment", "reply", "init", "generate", "gen", "build", "download", "fetch", "pull", "clone",
	"reset", "clear", "flush", "attach", "port-forward", "forward", "proxy", "tunnel", "serve", "up", "down", "open", "auth",
	"rotate", "sign", "encrypt", "decrypt", "invoke", "call", "eval", "backup", "load", "seed", "migrate", "rollback", "release",
	"produce", "consume", "replay", "resume", "pause", "suspend", "signal", "terminate", "reconcile", "refresh", "rebuild",
	"commit", "checkout", "switch", "assign", "grant", "link", "unlink", "mount", "unmount", "bind", "register", "unregister",
	"enqueue", "requeue", "resolve", "ack", "nack", "reveal", "decode", "unseal",
	// rules 18: a remote shell or a file transfer (fly ssh console, fly sftp get)
	"ssh", "sftp", "scp", "console", "shell",
	"seal", "wrap", "unwrap", "renew", "lookup", "read", "cat", "env", "printenv")

// inspectSecretNouns are namespace words of what holds credentials: even
// their listings print them in some clients (airflow connections list
// shows each connection's URI with its password).
var inspectSecretNouns = setOf("secret", "secrets", "credential", "credentials", "cred", "creds", "key", "keys", "apikey",
	"apikeys", "token", "tokens", "password", "passwords", "passwd", "connection", "connections", "conn", "conns", "cert",
	"certs", "certificate", "certificates", "env", "envs", "var", "vars", "variable", "variables", "kv", "vault", "dsn", "auth",
	"login", "session", "sessions", "cookie", "cookies", "oauth", "sso", "pat", "pats", "jwt", "private")

// inspectChangingOptions are options named by a verb that changes
// something (kafka-topics --create, --delete-records, --reset-offsets):
// the option is the verb.
var inspectChangingOptions = setOf("create", "delete", "add", "set", "unset", "update", "upgrade", "install", "uninstall", "remove",
	"apply", "execute", "exec", "run", "start", "stop", "restart", "kill", "write", "reset", "push", "upload", "publish", "alter",
	"drop", "purge", "truncate", "patch", "edit", "import", "restore", "rollback", "migrate", "deploy", "destroy", "wipe",
	"rotate", "revoke", "grant", "approve", "merge", "trigger", "retry", "rerun", "send", "post", "put", "produce", "replay",
	"seek", "commit", "move", "rename", "copy", "sync", "enable", "disable", "force")

// inspectChecks are inspecting verbs that check a guarded noun's content
// without printing it (circleci config validate).
var inspectChecks = setOf("validate", "lint", "check", "verify")

// secretStores are clients whose reads print secrets: never matched here
// (the default policy asks about them; their names-only listings have
// rules of their own).
var secretStores = setOf("op", "bw", "lpass", "pass", "gopass", "doppler", "infisical", "vault", "sops", "age", "rage", "chamber",
	"aws-vault", "security", "secret-tool", "keepassxc-cli", "kpcli", "berglas", "teller", "envchain", "gpg", "gpg2", "keyring",
	"1password", "dotenv-vault", "git-crypt", "ansible-vault", "akeyless", "conjur", "summon", "bao", "openbao", "kubeseal",
	"credstash", "ejson", "ssh-agent", "ssh-add", "gcloud", "az", "aws", "kubectl", "oc", "heroku")

// inspectRunners run the file or code their first word names (`elixir
// outdated` runs a script called outdated), or are opx itself (its
// commands are judged by name: destructive:opx-control).
var inspectRunners = setOf("elixir", "erl", "escript", "iex", "java", "groovy", "scala", "kotlin", "jshell", "clojure", "clj",
	"racket", "guile", "runghc", "runhaskell", "ghci", "ocaml", "utop", "swift", "tclsh", "wish", "csi", "luajit", "R", "raku",
	"sed", "jq", "yq", "busybox", "tcc", "gdb", "lldb", "strace", "ltrace", "valgrind", "chroot", "unshare", "nsenter", "firejail",
	"bwrap", "flock", "stdbuf", "caffeinate", "script", "expect", "opx", "make", "just", "task", "rake", "invoke", "npm", "pnpm",
	"yarn", "bun", "deno", "go", "cargo", "dotnet", "mvn", "gradle", "sbt", "mix", "tox", "nox", "mage", "earthly", "nx", "turbo",
	"lerna", "poe", "doit", "scons", "waf", "ninja")

// clientKey is the name of the command-line client run runs, or "" and
// why it is none that toolchain: inspect or local judge: a program named
// by a path or a variable, a shell, interpreter, task runner or secret
// store, a program other rules judge by name.
func clientKey(run *Run) (string, string) {
	if run == nil {
		return "", "no program"
	}
	key := ToolchainKey(run)
	if key == "" || strings.Contains(key, "/") || strings.HasPrefix(key, "$") {
		return "", "not a program by its name"
	}
	if toolchainExcluded(key) || secretStores[key] || inspectRunners[key] {
		return "", key + " is not judged by its verbs or its addresses"
	}
	return key, ""
}

// inspectingUse reports whether run is a program's inspecting verb; else
// why not.
func inspectingUse(run *Run) (bool, string) {
	key, why := clientKey(run)
	if key == "" {
		return false, why
	}
	base := key
	for _, w := range riskParts(base) {
		if toolchainRisk[w] {
			return false, "its name says " + w
		}
	}
	sc, ok, why := toolchainScan(run, key)
	if !ok {
		return false, why
	}
	// rules 18: who the client is logged in as (fly auth whoami, x auth
	// status), unless an option asks for the token itself
	if len(sc.verbs) == 2 && strings.EqualFold(sc.verbs[0], "auth") && (strings.EqualFold(sc.verbs[1], "whoami") || strings.EqualFold(sc.verbs[1], "status")) && !secretOption(sc.argv) {
		return true, ""
	}
	// Nothing that holds credentials, wherever it stands (connections
	// get X, get connections X).
	for _, w := range sc.verbs {
		for _, p := range riskParts(w) {
			if inspectSecretNouns[p] {
				return false, "its word " + clipText(w, 30) + " names what holds credentials"
			}
		}
	}
	// A flag's value is read by its dash and underscore parts: a dotted
	// name is one identifier (rules 15: --type checkout.session.completed
	// is an event's name, not a session).
	for _, w := range sc.afterFlag {
		for _, p := range strings.FieldsFunc(strings.ToLower(w), func(r rune) bool { return r == '-' || r == '_' }) {
			if inspectSecretNouns[p] {
				return false, "its word " + clipText(w, 30) + " names what holds credentials"
			}
		}
	}
	// A word right after a flag may be its value (--namespace dispatch)
	// or a subcommand (--verbose create): a changing verb there, as a
	// whole word, is refused; so is an option named by one (kafka-topics
	// --create). An option named by an inspecting verb (--describe,
	// --list) is the verb of a program that takes its verbs as options.
	flagVerb := false
	for _, w := range sc.afterFlag {
		if inspectChanging[strings.ToLower(w)] {
			return false, "its word " + clipText(w, 30) + " changes something"
		}
	}
	for _, tok := range sc.argv {
		if tok == "--" {
			break
		}
		if !strings.HasPrefix(tok, "-") || len(tok) < 3 {
			continue
		}
		name, _, _ := strings.Cut(strings.TrimLeft(tok, "-"), "=")
		name = strings.ToLower(name)
		if inspectChangingOptions[name] || inspectChangingOptions[strings.SplitN(name, "-", 2)[0]] {
			return false, "its option " + clipText(tok, 30) + " changes something"
		}
		if strings.HasPrefix(tok, "--") && inspectVerbs[name] {
			flagVerb = true
		}
		// rules 18: a Java-style single-dash verb first (jarsigner -verify,
		// keytool-like -list)
		if tok == sc.argv[0] && !strings.HasPrefix(tok, "--") && len(name) > 2 && inspectVerbs[name] {
			flagVerb = true
		}
	}
	if len(sc.verbs) == 0 {
		if flagVerb {
			return true, ""
		}
		return false, "it names no verb"
	}
	// rules 18: an oclif-style topic:command (eas update:list, firebase
	// appdistribution:testers:list): the topics name what is listed, the
	// last segment is the verb.
	if w := sc.verbs[0]; strings.Count(w, ":") >= 1 && strings.Count(w, ":") <= 3 && !strings.Contains(w, "/") {
		segs := strings.Split(strings.ToLower(w), ":")
		if v := segs[len(segs)-1]; inspectVerbs[v] && !inspectChanging[v] {
			for _, t := range segs[:len(segs)-1] {
				if t == "" || inspectSecretNouns[t] {
					return false, "its topic " + clipText(w, 30) + " is not one that only reads"
				}
			}
			return true, ""
		}
	}
	// At most two namespace words that change nothing, then the verb;
	// what follows the verb is its arguments.
	for i, w := range sc.verbs {
		lw := strings.ToLower(w)
		if inspectVerbs[lw] || listingNouns[lw] && i == len(sc.verbs)-1 {
			if i > 0 && toolchainGuarded[strings.ToLower(sc.verbs[i-1])] && !toolchainListing[lw] && !inspectChecks[lw] {
				return false, "it reads " + sc.verbs[i-1] + " beyond a listing"
			}
			return true, ""
		}
		for _, p := range riskParts(w) {
			if inspectChanging[p] {
				return false, "its word " + clipText(w, 30) + " changes something"
			}
		}
		// rules 20: a word that is a verb elsewhere (server, store) is
		// a namespace when an inspecting verb follows it (hcloud server
		// list)
		nextReads := i+1 < len(sc.verbs) && inspectVerbs[strings.ToLower(sc.verbs[i+1])]
		if i == 2 || !nounLike(lw) && !(nextReads && len(lw) <= 32 && !strings.ContainsAny(lw, "/.:=")) {
			break
		}
	}
	return false, "its verb " + clipText(sc.verbs[0], 30) + " is not one that only reads"
}

// nounLike reports whether w can be a namespace word before a verb
// (workflow, releases, debug-files): lowercase letters, digits and
// dashes, not a verb of daily work (those do things: toolchainVerbs).
func nounLike(w string) bool {
	if w == "" || len(w) > 32 || toolchainVerbs[w] {
		return false
	}
	for i := 0; i < len(w); i++ {
		c := w[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}

// loopbackAddr is a loopback address or host, with an optional port, as
// a word or a flag's value (127.0.0.1:9092, localhost:3000/api, [::1]).
var loopbackAddr = mustRx(`(?:^|[\s=/@"'])(?:localhost|127\.\d{1,3}\.\d{1,3}\.\d{1,3}|\[?::1\]?)(?::\d{1,5})?(?:[/\s"']|$)`)

// localServiceUse reports whether run is a client of a service on this
// machine (rules 14; an allow rule's `toolchain: local`): its line names
// a loopback address and nothing toolchainScan refuses for any program (a
// URL, host or address elsewhere, a production name, risky words such as
// delete or drop, options that run code or take input from outside the
// workspace), and the program is not a shell, interpreter, task runner,
// secret store or one the policy judges by name. kcat -b 127.0.0.1:9092,
// temporal workflow start --address 127.0.0.1:7233, a local dev server's
// CLI: the same reach as curl to localhost, which local-http allows.
func localServiceUse(run *Run) (bool, string) {
	key, why := clientKey(run)
	if key == "" {
		return false, why
	}
	if dbShells[key] {
		// Database clients have rules of their own (inspection-clients):
		// what they write lands in a store other programs read (a task
		// queue in Redis, a jobs table).
		return false, key + " is not judged by where it connects"
	}
	if !loopbackAddr.MatchString(run.Line) {
		return false, "it names no loopback address"
	}
	if _, ok, why := toolchainScan(run, key); !ok {
		return false, why
	}
	return true, ""
}

// secretOption reports whether an option of argv asks for a secret
// (--show-token, --print-secret, --reveal).
func secretOption(argv []string) bool {
	for _, t := range argv {
		if l := strings.ToLower(t); strings.HasPrefix(l, "-") && (strings.Contains(l, "token") || strings.Contains(l, "secret") || strings.Contains(l, "key") || strings.Contains(l, "reveal") || strings.Contains(l, "password")) {
			return true
		}
	}
	return false
}
