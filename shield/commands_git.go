package shield

import (
	"strings"

	"github.com/opx-dev/opx/shield/shellx"
)

// git: its subcommands, options that run programs (-c core.sshCommand) and remotes.

var gitSpec = newSpec("-C -c --git-dir --work-tree --namespace --config-env --super-prefix --exec-path")

// gitRunsLater are config keys whose value is run later, outside any
// sandbox, or says where such programs live.
func gitRunsLater(key string) bool {
	k := strings.ToLower(key)
	switch k {
	case "core.hookspath", "core.sshcommand", "core.pager", "core.editor", "core.fsmonitor", "core.askpass",
		"credential.helper", "sequence.editor", "gpg.program", "gpg.ssh.program", "diff.external", "uploadpack.packobjectshook",
		"core.gitproxy", "init.templatedir":
		return true
	}
	return strings.HasPrefix(k, "alias.") || strings.HasPrefix(k, "filter.") || strings.HasPrefix(k, "diff.") && strings.HasSuffix(k, ".textconv") ||
		strings.HasPrefix(k, "merge.") && strings.HasSuffix(k, ".driver") || strings.HasPrefix(k, "credential.") && strings.HasSuffix(k, ".helper") ||
		strings.HasSuffix(k, ".command") || strings.HasSuffix(k, ".cmd") || strings.HasSuffix(k, ".program") ||
		// session 28: a command's pager (pager.log), the programs a remote
		// runs for fetch and push (run here for a local remote), and a
		// remote helper git-remote-<vcs> found on PATH
		strings.HasPrefix(k, "pager.") || k == "interactive.difffilter" ||
		strings.HasPrefix(k, "remote.") && (strings.HasSuffix(k, ".uploadpack") || strings.HasSuffix(k, ".receivepack") || strings.HasSuffix(k, ".vcs"))
}

// gitRemoteURL returns the remote a config key names the URL of
// (remote.<name>.url, remote.<name>.pushurl): set, it redirects where
// that remote fetches from and pushes to, as `git remote set-url` does
// (session 28).
func gitRemoteURL(key string) (string, bool) {
	k := strings.ToLower(key)
	if !strings.HasPrefix(k, "remote.") || !strings.HasSuffix(k, ".url") && !strings.HasSuffix(k, ".pushurl") {
		return "", false
	}
	name := key[len("remote."):strings.LastIndexByte(key, '.')]
	return name, name != ""
}

// gitRunsNow judges a -c setting this git invocation may run: an alias
// or helper with "!", or a program setting (core.sshCommand, core.pager).
func (x *call) gitRunsNow(key, value string) {
	k := strings.ToLower(key)
	switch {
	case strings.HasPrefix(value, "!"):
		x.payload(word(value[1:]), "git -c "+key)
	case k == "core.hookspath":
		x.ref(kRead, word(value), true)
	case strings.HasPrefix(k, "alias.") || strings.HasPrefix(k, "credential.") || k == "init.templatedir":
	default:
		x.payload(word(value), "git -c "+key)
	}
}

// plainGitAlias reports whether an alias's value only names git's own
// subcommand and options (alias.lg = "log --oneline --graph"): it runs
// no program and changes no setting (rules 15). A shell alias ("!…"), a
// config override (-c, --config-env), an exec or pack program, a hook
// skipped are not plain.
func plainGitAlias(key, value string) bool {
	if !strings.HasPrefix(strings.ToLower(key), "alias.") {
		return false
	}
	v := strings.TrimSpace(value)
	if v == "" || strings.HasPrefix(v, "!") || strings.ContainsAny(v, "$`;|&<>(){}\\") {
		return false
	}
	for _, w := range strings.Fields(v) {
		switch {
		case w == "-c" || strings.HasPrefix(w, "--config") || strings.HasPrefix(w, "--exec") || w == "-x" ||
			strings.HasPrefix(w, "--upload-pack") || strings.HasPrefix(w, "--receive-pack") || w == "--no-verify" || w == "-n" ||
			strings.HasPrefix(w, "--git-dir") || strings.HasPrefix(w, "--work-tree") || strings.HasPrefix(w, "--ext-diff") ||
			strings.HasPrefix(w, "--textconv") || strings.HasPrefix(w, "--tool") || w == "difftool" || w == "mergetool" ||
			w == "filter-branch" || w == "--force" || w == "-f" || strings.HasPrefix(w, "--hard"):
			return false
		}
	}
	return true
}

// gitConfigText notes a config value that runs later.
func (x *call) gitConfigText(key, value string) bool {
	if !gitRunsLater(key) || plainGitAlias(key, value) {
		return false
	}
	x.m.f.Texts = append(x.m.f.Texts, Text{Source: "git config " + key, Body: value})
	if strings.HasPrefix(strings.ToLower(key), "alias.") && strings.HasPrefix(value, "!") {
		x.payload(word(value[1:]), "git alias")
	}
	return true
}

func gitH(x *call) {
	args := x.args
	i := 0
	for ; i < len(args); i++ {
		t := args[i].Text
		if !strings.HasPrefix(t, "-") {
			break
		}
		name, v, eq := strings.Cut(t, "=")
		switch name {
		case "-C", "-c", "--git-dir", "--work-tree", "--namespace", "--config-env", "--exec-path":
			w := shellx.Word{Text: v, Dynamic: args[i].Dynamic}
			if !eq {
				if i+1 >= len(args) {
					return
				}
				i++
				w = args[i]
			}
			switch name {
			case "-C":
				x.cd(w)
			case "-c":
				k, val, _ := strings.Cut(w.Text, "=")
				if x.gitConfigText(k, val) {
					x.gitRunsNow(k, val)
				}
			}
		}
	}
	if i >= len(args) {
		return
	}
	sub, rest := args[i].Text, args[i+1:]
	x.gitRunsCommands(sub, rest)
	switch sub {
	case "clone":
		opts, ops := cachedSpec(0, "-b --branch -o --origin -c --config --depth --reference -u --upload-pack --template --separate-git-dir -j --jobs --filter --shallow-since --shallow-exclude --server-option --bundle-uri").parse(rest)
		for _, c := range vals(opts, "-c", "--config") {
			k, v, _ := strings.Cut(c.Text, "=")
			x.gitConfigText(k, v)
		}
		if u, ok := val(opts, "-u", "--upload-pack"); ok {
			x.payload(u, "git clone --upload-pack")
		}
		if t, ok := val(opts, "--template"); ok {
			x.ref(kRead, t, true)
		}
		if len(ops) == 0 {
			return
		}
		x.gitRemote(ops[0], "GET", false)
		if len(ops) > 1 {
			x.ref(kWrite, ops[1], true)
			x.fetch(ops[1].Text, true)
		} else if !ops[0].Dynamic {
			d := strings.TrimSuffix(urlBase(strings.TrimRight(ops[0].Text, "/")), ".git")
			if d == "index.html" {
				d = "."
			}
			x.refPath(kWrite, d, true)
			x.fetch(d, true)
		}
	case "fetch", "pull", "ls-remote", "remote", "submodule":
		_, ops := cachedSpec(0, "--upload-pack --depth --deepen --shallow-since --refmap -j --jobs -o --server-option --recurse-submodules-default").parse(rest)
		switch sub {
		case "remote":
			if len(ops) >= 3 && (ops[0].Text == "add" || ops[0].Text == "set-url") {
				x.gitRemote(ops[2], "", false)
				if x.m.remotes == nil {
					x.m.remotes = map[string]string{}
				}
				x.m.remotes[ops[1].Text] = hostOf(ops[2].Text)
				if _, _, ok := remoteSpec(ops[2].Text); ok && !strings.Contains(ops[2].Text, "://") {
					h, _, _ := remoteSpec(ops[2].Text)
					x.m.remotes[ops[1].Text] = h
				}
			} else if len(ops) >= 1 && ops[0].Text == "update" {
				x.request(Request{Method: "GET"})
			}
			return
		case "submodule":
			if len(ops) >= 2 && ops[0].Text == "add" {
				x.gitRemote(ops[1], "GET", false)
			} else if len(ops) >= 1 && (ops[0].Text == "update" || ops[0].Text == "sync" || ops[0].Text == "init") {
				x.request(Request{Method: "GET"})
			}
			x.refPath(kWrite, ".", true)
			return
		}
		if len(ops) > 0 {
			x.gitRemote(ops[0], "GET", false)
		} else {
			x.request(Request{Method: "GET"})
		}
		if sub == "pull" {
			x.refPath(kWrite, ".", true)
		}
	case "push":
		_, ops := cachedSpec(0, "-o --push-option --repo --receive-pack --exec --signed --force-with-lease").parse(rest)
		if len(ops) > 0 {
			x.gitRemote(ops[0], "PUSH", true)
		} else {
			x.request(Request{Method: "PUSH", Data: true})
		}
	case "clean":
		opts, ops := cachedSpec(0, "-e --exclude").parse(rest)
		if !has(opts, "-f", "--force") || has(opts, "-n", "--dry-run") {
			return
		}
		if len(ops) == 0 {
			x.refPath(kDelete, ".", true)
		}
		for _, w := range ops {
			x.ref(kDelete, w, true)
		}
	case "reset":
		opts, _ := cachedSpec(0, "").parse(rest)
		if has(opts, "--hard", "--merge", "--keep") {
			x.refPath(kWrite, ".", true)
		}
	case "checkout", "switch", "restore", "stash", "merge", "rebase", "cherry-pick", "revert", "am", "apply", "checkout-index", "worktree", "mv":
		if sub == "stash" && len(rest) > 0 {
			switch rest[0].Text {
			case "list", "show":
				return
			}
		}
		if sub == "apply" && has(cachedSpec(0, "").parse2(rest), "--check", "--stat", "--numstat") {
			return
		}
		if sub == "checkout" || sub == "restore" {
			// The paths after "--" (restore: its operands) are what
			// changes; else the whole working tree may.
			var paths []shellx.Word
			for k, w := range rest {
				if w.Text == "--" {
					paths = rest[k+1:]
					break
				}
			}
			if paths == nil && sub == "restore" {
				_, paths = cachedSpec(0, "-s --source --pathspec-from-file").parse(rest)
			}
			if len(paths) > 0 {
				for _, w := range paths {
					x.ref(kWrite, w, true)
				}
				return
			}
		}
		x.refPath(kWrite, ".", true)
	case "rm":
		opts, ops := cachedSpec(0, "").parse(rest)
		if has(opts, "--cached", "-n", "--dry-run") {
			return
		}
		for _, w := range ops {
			x.ref(kDelete, w, has(opts, "-r"))
		}
	case "config":
		x.gitConfig(rest)
	case "archive", "format-patch", "bundle", "diff":
		opts, ops := cachedSpec(0, "-o --output --output-directory --format --prefix --remote --exec").parse(rest)
		for _, w := range vals(opts, "-o", "--output", "--output-directory") {
			x.ref(kWrite, w, sub == "format-patch")
		}
		if r, ok := val(opts, "--remote"); ok {
			x.gitRemote(r, "GET", false)
		}
		if sub == "bundle" && len(ops) > 1 && ops[0].Text == "create" {
			x.ref(kWrite, ops[1], false)
		}
		if sub == "diff" {
			x.refPath(kRead, ".", false)
			// --no-index (implied when a path lies outside the
			// repository) compares any two files: operands that
			// look like paths are read.
			noIndex := has(opts, "--no-index")
			for _, w := range ops {
				if noIndex || looksLikePath(w.Text) || w.Dynamic {
					x.ref(kRead, w, noIndex)
				}
			}
		}
	case "send-email":
		_, ops := cachedSpec(0, "--to --cc --bcc --from --smtp-server --subject --in-reply-to").parse(rest)
		k := x.request(Request{Method: "", Data: true})
		for _, w := range ops {
			x.ref(kRead, w, false)
			if p, ok := x.abs(w.Text); ok {
				x.m.f.Requests[k].Files = append(x.m.f.Requests[k].Files, p)
			}
		}
	case "credential", "credential-store", "credential-cache":
		x.refPath(kRead, "~/.git-credentials", false)
	case "daemon", "instaweb":
		x.listener("", word("."))
	case "status", "log", "show", "blame", "grep", "ls-files", "shortlog", "describe", "rev-parse", "branch", "tag", "add", "commit", "init":
		// Reads of the repository; the bookkeeping in .git is not a
		// Write (it runs nothing later).
		x.refPath(kRead, ".", false)
	}
}

// gitRunOpts are the options of git subcommands whose value is a command
// git runs (through the shell): grep -O, rebase --exec, difftool
// --extcmd, filter-branch's filters, fetch --upload-pack, push
// --receive-pack.
var gitRunOpts = map[string][]string{
	"grep":          {"-O", "--open-files-in-pager"},
	"rebase":        {"-x", "--exec"},
	"difftool":      {"-x", "--extcmd"},
	"mergetool":     {"--tool-cmd"},
	"filter-branch": {"--env-filter", "--tree-filter", "--index-filter", "--parent-filter", "--msg-filter", "--commit-filter", "--tag-name-filter"},
	"fetch":         {"--upload-pack"},
	"pull":          {"--upload-pack"},
	"ls-remote":     {"--upload-pack"},
	"push":          {"--receive-pack", "--exec"},
	"archive":       {"--exec"},
	"send-email":    {"--smtp-server"},
}

// gitRunsCommands judges the commands a git subcommand runs: the values
// of gitRunOpts, bisect run CMD..., submodule foreach CMD. What follows
// the options is not looked at past "--".
func (x *call) gitRunsCommands(sub string, rest []shellx.Word) {
	names := gitRunOpts[sub]
	for k := 0; k < len(rest); k++ {
		t := rest[k].Text
		if t == "--" {
			break
		}
		for _, n := range names {
			var cmd shellx.Word
			switch {
			case t == n && len(n) > 2 && k+1 < len(rest) && n != "--open-files-in-pager":
				cmd = rest[k+1]
				k++
			case strings.HasPrefix(t, n+"="):
				cmd = shellx.Word{Text: t[len(n)+1:], Dynamic: rest[k].Dynamic}
			case len(n) == 2 && t == n && k+1 < len(rest) && sub != "grep":
				cmd = rest[k+1]
				k++
			case len(n) == 2 && strings.HasPrefix(t, n) && len(t) > 2:
				cmd = shellx.Word{Text: t[2:], Dynamic: rest[k].Dynamic}
			default:
				continue
			}
			if sub == "send-email" && !strings.HasPrefix(cmd.Text, "/") && !cmd.Dynamic {
				continue // a host name, not a program
			}
			x.payload(cmd, "git "+sub+" "+n)
		}
	}
	switch sub {
	case "bisect":
		if len(rest) > 1 && rest[0].Text == "run" {
			x.nested(rest[1:], "git bisect run", nil, true)
		}
	case "submodule":
		for k := 0; k < len(rest); k++ {
			if rest[k].Text != "foreach" {
				continue
			}
			cmd := rest[k+1:]
			for len(cmd) > 0 && strings.HasPrefix(cmd[0].Text, "--") {
				cmd = cmd[1:]
			}
			if len(cmd) == 1 {
				x.payload(cmd[0], "git submodule foreach")
			} else if len(cmd) > 1 {
				x.nested(cmd, "git submodule foreach", nil, true)
			}
			break
		}
	}
}

// parse2 returns only the options.
func (sp *spec) parse2(args []shellx.Word) []opt {
	o, _ := sp.parse(args)
	return o
}

// gitRemote adds the request to a remote: a URL or scp-like address
// names its host, a remote name (origin) or path has Host "".
func (x *call) gitRemote(w shellx.Word, method string, data bool) {
	t := w.Text
	host := ""
	if cmd, ok := strings.CutPrefix(t, "ext::"); ok {
		// The ext transport runs a command ("% " is a space).
		x.payload(shellx.Word{Text: strings.ReplaceAll(cmd, "% ", " "), Dynamic: w.Dynamic}, "git ext::")
		return
	}
	switch {
	case strings.Contains(t, "://"):
		if strings.HasPrefix(t, "file://") {
			x.ref(kRead, shellx.Word{Text: strings.TrimPrefix(t, "file://"), Dynamic: w.Dynamic}, true)
			return
		}
		host = hostOf(t)
	default:
		if h, ok := x.m.remotes[t]; ok {
			host = h
		} else if h, _, ok := remoteSpec(t); ok {
			host = h
		} else if strings.HasPrefix(t, "/") || strings.HasPrefix(t, ".") || strings.HasPrefix(t, "~") {
			x.ref(kRead, w, true)
			return
		}
	}
	k := x.request(Request{Host: host, Method: method, Data: data})
	x.computed(k, w)
}

// gitConfig reads git config: a setting writes the config file it names
// (--global: ~/.gitconfig; --system: /etc/gitconfig; --file F; else the
// repository's, which is a Write only for keys that run later).
func (x *call) gitConfig(rest []shellx.Word) {
	opts, ops := cachedSpec(0, "-f --file --blob --type --default --comment").parse(rest)
	if has(opts, "-l", "--list", "--get", "--get-all", "--get-regexp", "--get-urlmatch", "--show-origin", "--show-scope") || len(ops) < 2 && !has(opts, "--unset", "--unset-all", "-e", "--edit", "--remove-section", "--rename-section") {
		return
	}
	if len(ops) > 0 && (ops[0].Text == "get" || ops[0].Text == "list") {
		return
	}
	if len(ops) > 0 && (ops[0].Text == "set" || ops[0].Text == "unset") {
		ops = ops[1:]
	}
	key, value := "", ""
	if len(ops) > 0 {
		key = ops[0].Text
	}
	if len(ops) > 1 {
		value = ops[1].Text
	}
	later := x.gitConfigText(key, value)
	if name, ok := gitRemoteURL(key); ok && value != "" && !has(opts, "--unset", "--unset-all") {
		// the same as git remote set-url NAME VALUE: a connection to
		// where the remote now points, remembered for the line's
		// fetches and pushes
		x.gitRemote(ops[1], "", false)
		if x.m.remotes == nil {
			x.m.remotes = map[string]string{}
		}
		x.m.remotes[name] = hostOf(value)
		if h, _, ok := remoteSpec(value); ok && !strings.Contains(value, "://") {
			x.m.remotes[name] = h
		}
	}
	switch {
	case has(opts, "--global") && !later && preferenceKey(key) && !has(opts, "-e", "--edit", "--unset-all", "--remove-section", "--rename-section"):
		// rules 18: a user's preference (pull.rebase, init.defaultBranch,
		// commit.gpgsign …): nothing runs or is fetched differently
	case has(opts, "--global"):
		x.refPath(kWrite, "~/.gitconfig", false)
	case has(opts, "--system"):
		x.refPath(kWrite, "/etc/gitconfig", false)
	case has(opts, "-f", "--file"):
		f, _ := val(opts, "-f", "--file")
		x.ref(kWrite, f, false)
	case later || has(opts, "-e", "--edit"):
		x.refPath(kWrite, ".git/config", false)
	}
}

// gitPreferences are git settings that change how the user's own work
// looks or flows and never name a program, a URL, a credential helper or
// a hook (rules 18): a global one is not a write outside the workspace.
var gitPreferences = setOf("pull.rebase", "pull.ff", "init.defaultbranch", "push.autosetupremote", "push.default",
	"push.followtags", "fetch.prune", "fetch.prunetags", "rebase.autostash", "rebase.autosquash", "rebase.updaterefs",
	"rerere.enabled", "commit.gpgsign", "tag.gpgsign", "gpg.format", "user.signingkey",
	"color.ui", "merge.conflictstyle", "diff.algorithm", "diff.colormoved", "core.autocrlf", "core.eol",
	"help.autocorrect", "branch.sort", "tag.sort", "column.ui", "log.date", "status.showuntrackedfiles", "commit.verbose",
	"core.ignorecase", "advice.detachedhead", "merge.ff", "submodule.recurse")

// preferenceKey reports whether key is one of gitPreferences.
func preferenceKey(key string) bool { return gitPreferences[strings.ToLower(key)] }

// pkgRegistry is the default registry of each package manager.
