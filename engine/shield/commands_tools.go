package shield

import (
	"strings"

	"github.com/opx-dev/opx/engine/shield/shellx"
)

// Developer tools: git, package managers, containers, clusters.

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
		strings.HasSuffix(k, ".command") || strings.HasSuffix(k, ".cmd") || strings.HasSuffix(k, ".program")
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

// gitConfigText notes a config value that runs later.
func (x *call) gitConfigText(key, value string) bool {
	if !gitRunsLater(key) {
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
	switch {
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

// pkgRegistry is the default registry of each package manager.
var pkgRegistry = map[string]string{
	"npm": "registry.npmjs.org", "npx": "registry.npmjs.org", "pnpm": "registry.npmjs.org", "pnpx": "registry.npmjs.org",
	"yarn": "registry.yarnpkg.com", "bun": "registry.npmjs.org", "bunx": "registry.npmjs.org",
	"pip": "pypi.org", "pip3": "pypi.org", "pipx": "pypi.org", "uv": "pypi.org", "poetry": "pypi.org", "pdm": "pypi.org", "pipenv": "pypi.org",
	"gem": "rubygems.org", "bundle": "rubygems.org", "bundler": "rubygems.org", "composer": "repo.packagist.org",
	"cargo": "crates.io", "go": "proxy.golang.org", "conda": "conda.anaconda.org", "mamba": "conda.anaconda.org",
	"brew": "formulae.brew.sh", "mvn": "repo.maven.apache.org", "gradle": "plugins.gradle.org", "dotnet": "api.nuget.org", "nuget": "api.nuget.org",
	"deno": "jsr.io",
}

var jsSpec = newSpec("-c --call -p --package --registry --prefix -C --cwd --dir --filter -w --workspace --cache --userconfig --globalconfig --otp --tag --access --scope")

// jsH reads npm, yarn, pnpm, bun and npx.
func jsH(x *call) {
	opts, ops := jsSpec.parse(x.args)
	if d, ok := val(opts, "--prefix", "-C", "--cwd", "--dir"); ok {
		x.cd(d)
	}
	host := pkgRegistry[x.name]
	if r, ok := val(opts, "--registry"); ok {
		host = hostOf(r.Text)
	}
	sub := ""
	if len(ops) > 0 {
		sub, ops = ops[0].Text, ops[1:]
	}
	if x.name == "npx" || x.name == "pnpx" || x.name == "bunx" {
		x.request(Request{Host: host, Method: "GET"})
		x.npmExec(opts, append([]shellx.Word{{Text: sub}}, ops...), sub != "")
		return
	}
	if x.name == "yarn" && sub == "" {
		sub = "install"
	}
	global := has(opts, "-g", "--global", "--location=global")
	switch sub {
	case "install", "i", "add", "ci", "update", "up", "upgrade", "install-test", "it", "dedupe", "outdated", "view", "info", "show", "search", "fetch", "prune", "audit", "create", "init", "dlx", "exec", "x":
		if (sub == "init" || sub == "create") && len(ops) == 0 {
			x.refPath(kWrite, "package.json", false)
			return
		}
		if sub == "exec" || sub == "x" || sub == "dlx" {
			if x.name == "npm" || x.name == "pnpm" {
				x.request(Request{Host: host, Method: "GET"})
			}
			x.npmExec(opts, ops, true)
			return
		}
		x.runsHere()
		k := x.request(Request{Host: host, Method: "GET"})
		if sub == "audit" {
			x.m.f.Requests[k].Method = "POST"
			x.m.f.Requests[k].Data = true
		}
		for _, w := range ops {
			if h, ok := pkgSource(w.Text); ok {
				kk := x.request(Request{Host: h, Method: "GET"})
				x.computed(kk, w)
				x.remoteCode(h)
			} else if looksLikePath(w.Text) && !strings.HasPrefix(w.Text, "@") {
				x.ref(kRead, w, true)
			}
		}
		switch {
		case global:
			x.refPath(kWrite, "/usr/local/lib/node_modules", true)
		case sub == "install" || sub == "i" || sub == "add" || sub == "ci" || sub == "update" || sub == "up" || sub == "upgrade" || sub == "dedupe" || sub == "prune":
			x.refPath(kWrite, "node_modules", true)
		}
	case "publish":
		k := x.request(Request{Host: host, Method: "PUT", Data: true})
		if p, ok := x.abs("."); ok {
			x.m.f.Requests[k].Files = []string{p}
		}
		x.refPath(kRead, ".", true)
	case "login", "adduser", "token", "owner", "unpublish", "deprecate", "dist-tag", "access", "team", "org":
		x.request(Request{Host: host, Method: "PUT", Data: true})
		if sub == "login" || sub == "adduser" {
			x.refPath(kWrite, "~/.npmrc", false)
		}
	case "config", "set":
		if len(ops) > 0 && (ops[0].Text == "set" || sub == "set" || ops[0].Text == "delete" || ops[0].Text == "edit") {
			x.refPath(kWrite, "~/.npmrc", false)
		} else if len(ops) > 0 && (ops[0].Text == "list" || ops[0].Text == "get" || ops[0].Text == "ls") {
			x.refPath(kRead, "~/.npmrc", false)
		}
	}
}

// npmExec judges what npx and npm exec run: -c/--call CMD is a shell
// line; the operands (after any --) are a command, judged as one when its
// program is a plain program (a package's bin that happens to share a
// system program's name is judged as that program).
func (x *call) npmExec(opts []opt, ops []shellx.Word, hasOps bool) {
	for _, w := range vals(opts, "-c", "--call") {
		x.payload(w, x.name+" -c")
	}
	if !hasOps || len(ops) == 0 || ops[0].Text == "" {
		return
	}
	if len(ops) > 0 && ops[0].Text == "--" {
		ops = ops[1:]
	}
	if len(ops) == 0 {
		return
	}
	if table[progName(ops[0].Text)] != nil {
		x.nested(ops, x.name+" exec", nil, true)
	}
}

// pkgSource returns the host of a package given by URL (git+https://...,
// https://.../x.tgz, github:user/repo).
func pkgSource(t string) (string, bool) {
	switch {
	case strings.Contains(t, "://"):
		return hostOf(strings.TrimPrefix(t, "git+")), true
	case strings.HasPrefix(t, "github:"):
		return "github.com", true
	case strings.HasPrefix(t, "git@"):
		h, _, ok := remoteSpec(t)
		return h, ok
	}
	if k := strings.Index(t, "@ "); k >= 0 { // pip's "name @ URL" arrives split
		return "", false
	}
	return "", false
}

var pipSpec = newSpec("-i --index-url --extra-index-url -f --find-links -r --requirement -c --constraint -e --editable -t --target -d --dest --root --prefix --src --trusted-host --proxy --cert --client-cert --python --platform --progress-bar --cache-dir --log --config-settings -C")

// pipH reads pip, pip3, pipx, uv pip, poetry, gem, bundle, composer.
func pipH(x *call) {
	args := x.args
	if (x.name == "uv" || x.name == "python" || strings.HasPrefix(x.name, "python")) && len(args) > 0 && args[0].Text == "pip" {
		args = args[1:]
	}
	opts, ops := pipSpec.parse(args)
	sub := ""
	if len(ops) > 0 {
		sub, ops = ops[0].Text, ops[1:]
	}
	host := pkgRegistry[x.name]
	if host == "" {
		host = "pypi.org"
	}
	switch sub {
	case "install", "add", "download", "wheel", "sync", "lock", "update", "upgrade", "inject", "run", "tool", "require":
		x.runsHere()
		for _, w := range vals(opts, "-r", "--requirement", "-c", "--constraint") {
			x.ref(kRead, w, false)
		}
		for _, w := range vals(opts, "-e", "--editable") {
			if h, ok := pkgSource(w.Text); ok {
				x.request(Request{Host: h, Method: "GET"})
				x.remoteCode(h)
			} else {
				x.ref(kRead, w, true)
			}
		}
		idx := vals(opts, "-i", "--index-url", "--extra-index-url", "-f", "--find-links")
		if len(idx) == 0 || has(opts, "--extra-index-url") {
			x.request(Request{Host: host, Method: "GET"})
		}
		for _, w := range idx {
			if strings.Contains(w.Text, "://") {
				h := hostOf(w.Text)
				k := x.request(Request{Host: h, Method: "GET"})
				x.computed(k, w)
				if h != host && h != "files.pythonhosted.org" && h != "localhost" && h != "127.0.0.1" {
					x.remoteCode(h)
				}
			} else {
				x.ref(kRead, w, true)
			}
		}
		for _, w := range ops {
			if h, ok := pkgSource(w.Text); ok {
				k := x.request(Request{Host: h, Method: "GET"})
				x.computed(k, w)
				x.remoteCode(h)
			} else if looksLikePath(w.Text) {
				x.ref(kRead, w, true)
			}
		}
		for _, w := range vals(opts, "-t", "--target", "-d", "--dest", "--root", "--prefix") {
			x.ref(kWrite, w, true)
		}
	case "publish", "upload", "push":
		k := x.request(Request{Host: host, Method: "POST", Data: true})
		for _, w := range ops {
			x.ref(kRead, w, false)
			if p, ok := x.abs(w.Text); ok && !w.Dynamic {
				x.m.f.Requests[k].Files = append(x.m.f.Requests[k].Files, p)
			}
		}
	case "config":
		if len(ops) > 0 && (ops[0].Text == "set" || ops[0].Text == "edit" || ops[0].Text == "unset") {
			x.refPath(kWrite, "~/.config/pip/pip.conf", false)
		}
	}
}

// goH reads the go command: module downloads are GETs to the module
// proxy (GOPROXY is not consulted: Shield is pure); build, test, vet
// and generate run workspace code (Runs, for the tiers).
func goH(x *call) {
	if len(x.args) == 0 {
		return
	}
	sub, rest := x.args[0].Text, x.args[1:]
	opts, ops := cachedSpec(2, "-o -C -run -bench -tags -ldflags -gcflags -p -timeout -count -cpu -coverprofile -exec -mod -modfile -overlay -pkgdir -toolexec -vet -fuzz -fuzztime -benchtime -parallel -outputdir -memprofile -cpuprofile -blockprofile -mutexprofile -trace -covermode -coverpkg -asmflags -buildmode -compiler -installsuffix -o -shuffle -list -skip").parse(rest)
	if d, ok := val(opts, "-C"); ok {
		x.cd(d)
	}
	for _, w := range vals(opts, "-o", "-coverprofile", "-cpuprofile", "-memprofile", "-trace", "-blockprofile", "-mutexprofile") {
		x.ref(kWrite, w, false)
	}
	if w, ok := val(opts, "-toolexec", "-exec"); ok {
		x.payload(w, "go "+sub+" -exec")
	}
	switch sub {
	case "get", "install", "run":
		remote := false
		for _, w := range ops {
			if strings.Contains(w.Text, "@") || sub == "get" && !strings.HasPrefix(w.Text, ".") {
				remote = true
			}
		}
		if remote || sub == "get" {
			x.request(Request{Host: pkgRegistry["go"], Method: "GET"})
		}
	case "mod":
		if len(ops) > 0 {
			switch ops[0].Text {
			case "download", "tidy", "vendor", "graph", "why", "verify":
				x.request(Request{Host: pkgRegistry["go"], Method: "GET"})
			}
			if ops[0].Text == "tidy" || ops[0].Text == "edit" || ops[0].Text == "init" || ops[0].Text == "vendor" {
				x.refPath(kWrite, "go.mod", false)
			}
		}
	case "fmt", "fix":
		if len(ops) == 0 {
			x.refPath(kWrite, ".", true)
		}
		for _, w := range ops {
			x.ref(kWrite, w, true)
		}
	case "env":
		if has(opts, "-w", "-u") {
			x.refPath(kWrite, "~/.config/go/env", false)
		}
	case "clean":
		if has(opts, "-modcache") {
			x.refPath(kDelete, "~/go/pkg/mod", true)
		}
	}
}

// cargoH reads cargo and rustup.
func cargoH(x *call) {
	opts, ops := cachedSpec(0, "--manifest-path -p --package --target --target-dir --features -j --jobs --bin --example --test --bench --index --registry --git --branch --tag --rev --path --root -Z --config").parse(x.args)
	if len(ops) == 0 {
		return
	}
	host := pkgRegistry["cargo"]
	if x.name == "rustup" {
		host = "static.rust-lang.org"
	}
	if g, ok := val(opts, "--git", "--index"); ok {
		k := x.request(Request{Host: hostOf(g.Text), Method: "GET"})
		x.computed(k, g)
	}
	switch ops[0].Text {
	case "install", "add", "fetch", "update", "build", "b", "check", "c", "test", "t", "run", "r", "bench", "doc", "vendor", "generate-lockfile", "search", "toolchain", "target", "component", "self", "default":
		x.request(Request{Host: host, Method: "GET"})
	case "publish", "login", "owner", "yank":
		x.request(Request{Host: host, Method: "PUT", Data: true})
		if ops[0].Text == "publish" {
			x.m.f.Requests[len(x.m.f.Requests)-1].Files = []string{x.cwd}
		}
	case "fmt":
		x.refPath(kWrite, ".", true)
	case "clippy", "fix":
		if has(opts, "--fix") || ops[0].Text == "fix" {
			x.refPath(kWrite, ".", true)
		}
	}
}

// registryOf is the registry host of a container image reference.
func registryOf(image string) string {
	if k := strings.IndexByte(image, '/'); k > 0 {
		h := image[:k]
		if strings.ContainsAny(h, ".:") || h == "localhost" {
			return hostOf(h)
		}
	}
	return "registry-1.docker.io"
}

var dockerRunSpec = newSpec("-v --volume --mount -e --env --env-file -p --publish --name -w --workdir -u --user --network --net " +
	"--entrypoint -l --label --label-file --add-host --cap-add --cap-drop --device --dns --platform --pid --ipc --uts --userns " +
	"--security-opt --restart --memory -m --cpus --log-driver --log-opt --hostname -h --tmpfs --ulimit --gpus --cidfile --volumes-from " +
	"--health-cmd --stop-signal --pull --runtime --group-add --shm-size --sysctl --cgroupns --expose --mac-address --ip --link --storage-opt -a --attach")

// dockerH reads docker, podman and nerdctl.
func dockerH(x *call) {
	args := x.args
	i := 0
	for ; i < len(args) && strings.HasPrefix(args[i].Text, "-"); i++ {
		switch t := args[i].Text; t {
		case "-H", "--host", "-c", "--context", "--config", "-l", "--log-level", "--tlscacert", "--tlscert", "--tlskey":
			if i+1 < len(args) {
				i++
				if t == "-H" || t == "--host" {
					x.dockerHost(args[i].Text)
				}
			}
		default:
			if v, ok := strings.CutPrefix(t, "--host="); ok {
				x.dockerHost(v)
			}
		}
	}
	if i >= len(args) {
		return
	}
	sub, rest := args[i].Text, args[i+1:]
	if sub == "container" || sub == "image" {
		if len(rest) == 0 {
			return
		}
		sub, rest = rest[0].Text, rest[1:]
	}
	switch sub {
	case "compose":
		x.compose(rest)
	case "pull", "push":
		_, ops := cachedSpec(0, "--platform -a").parse(rest)
		for _, w := range ops {
			if sub == "push" {
				x.request(Request{Host: registryOf(w.Text), Method: "PUT", Data: true})
			} else {
				x.request(Request{Host: registryOf(w.Text), Method: "GET"})
			}
		}
	case "login":
		_, ops := cachedSpec(0, "-u --username -p --password").parse(rest)
		host := "registry-1.docker.io"
		if len(ops) > 0 {
			host = hostOf(ops[0].Text)
		}
		k := x.request(Request{Host: host, Method: "POST", Data: true})
		x.fromStdin(k)
		x.refPath(kWrite, "~/.docker/config.json", false)
	case "run", "create":
		x.dockerRun(rest)
	case "build", "buildx":
		if sub == "buildx" && len(rest) > 0 {
			rest = rest[1:]
		}
		opts, ops := cachedSpec(0, "-f --file -t --tag --build-arg --target --platform --secret --ssh --cache-from --cache-to -o --output --progress --label --network --iidfile --build-context").parse(rest)
		for _, w := range vals(opts, "-f", "--file") {
			x.ref(kRead, w, false)
		}
		for _, w := range ops {
			if strings.Contains(w.Text, "://") {
				x.request(Request{Host: hostOf(w.Text), Method: "GET"})
				continue
			}
			x.ref(kRead, w, true)
		}
		for _, s := range vals(opts, "--secret") {
			for _, part := range strings.Split(s.Text, ",") {
				if p, ok := strings.CutPrefix(part, "src="); ok {
					x.ref(kRead, word(p), false)
				}
			}
		}
		x.request(Request{Host: "registry-1.docker.io", Method: "GET"})
		if has(opts, "--push") {
			x.request(Request{Method: "PUT", Data: true})
		}
	case "cp":
		_, ops := cachedSpec(0, "").parse(rest)
		if len(ops) != 2 {
			return
		}
		src, dst := ops[0], ops[1]
		if _, _, remote := remoteSpec(src.Text); !remote {
			x.ref(kRead, src, true)
		}
		if _, _, remote := remoteSpec(dst.Text); !remote {
			x.ref(kWrite, dst, true)
		}
	case "save", "export":
		opts, _ := cachedSpec(0, "-o --output").parse(rest)
		for _, w := range vals(opts, "-o", "--output") {
			x.ref(kWrite, w, false)
		}
	case "load", "import":
		opts, ops := cachedSpec(0, "-i --input").parse(rest)
		for _, w := range append(vals(opts, "-i", "--input"), ops...) {
			if strings.Contains(w.Text, "://") {
				x.request(Request{Host: hostOf(w.Text), Method: "GET"})
				continue
			}
			x.ref(kRead, w, false)
		}
	}
}

func (x *call) dockerHost(h string) {
	if strings.HasPrefix(h, "unix://") {
		x.ref(kWrite, word(strings.TrimPrefix(h, "unix://")), false)
		return
	}
	if strings.HasPrefix(h, "ssh://") || strings.HasPrefix(h, "tcp://") {
		x.request(Request{Host: hostOf(h), Data: true})
	}
}

// dockerRun reads docker run: the image (pulled if missing), the host
// paths mounted (read, and written unless read-only, Tree), and the host
// privileges that make the container reach the whole host (Unknown).
func (x *call) dockerRun(rest []shellx.Word) {
	opts, ops := dockerRunSpec.parse(rest)
	if len(ops) > 0 {
		x.request(Request{Host: registryOf(ops[0].Text), Method: "GET"})
	}
	for _, o := range opts {
		switch o.name {
		case "-v", "--volume":
			if !o.has {
				continue
			}
			parts := strings.Split(o.val.Text, ":")
			if len(parts) < 2 || !(strings.HasPrefix(parts[0], "/") || strings.HasPrefix(parts[0], ".") || strings.HasPrefix(parts[0], "~") || strings.HasPrefix(parts[0], "$")) {
				continue // a named volume
			}
			w := shellx.Word{Text: parts[0], Dynamic: o.val.Dynamic}
			x.hostMount(w, len(parts) > 2 && strings.Contains(parts[2], "ro"))
		case "--mount":
			var src string
			bind, ro := false, false
			for _, kv := range strings.Split(o.val.Text, ",") {
				k, v, _ := strings.Cut(kv, "=")
				switch k {
				case "type":
					bind = v == "bind"
				case "source", "src":
					src = v
				case "readonly", "ro":
					ro = v == "" || v == "true" || v == "1"
				}
			}
			if bind && src != "" {
				x.hostMount(shellx.Word{Text: src, Dynamic: o.val.Dynamic}, ro)
			}
		case "--env-file":
			x.ref(kRead, o.val, false)
		case "--privileged":
			x.m.unknown(x.name + " run --privileged: the container can reach the whole host")
		case "--pid", "--net", "--network", "--ipc", "--uts", "--userns", "--cgroupns":
			if o.val.Text == "host" {
				x.m.unknown(x.name + " run " + o.name + "=host: the container shares the host's namespace")
			}
		case "--cap-add":
			if c := strings.ToUpper(o.val.Text); c == "ALL" || c == "SYS_ADMIN" || c == "CAP_SYS_ADMIN" || c == "SYS_PTRACE" || c == "SYS_MODULE" || c == "DAC_READ_SEARCH" {
				x.m.unknown(x.name + " run --cap-add " + o.val.Text + ": the container can reach the host")
			}
		case "--device":
			x.ref(kWrite, shellx.Word{Text: strings.SplitN(o.val.Text, ":", 2)[0], Dynamic: o.val.Dynamic}, false)
		case "--security-opt":
			if strings.Contains(o.val.Text, "unconfined") || strings.Contains(o.val.Text, "disable") {
				x.m.unknown(x.name + " run --security-opt " + o.val.Text + ": the container is not confined")
			}
		}
	}
}

// hostMount adds a host path a container mounts.
func (x *call) hostMount(w shellx.Word, ro bool) {
	x.ref(kRead, w, true)
	if !ro {
		x.ref(kWrite, w, true)
	}
	if p, ok := x.abs(w.Text); ok && (p == "/var/run/docker.sock" || p == "/run/docker.sock") {
		x.m.unknown(x.name + " mounts the docker socket: the container can reach the whole host")
	}
}

// compose reads docker compose: it builds and starts the services its
// file declares (Runs; the file is judged when written), pulling images.
func (x *call) compose(rest []shellx.Word) {
	opts, ops := cachedSpec(0, "-f --file -p --project-name --project-directory --env-file --profile --ansi --progress").parse(rest)
	for _, w := range vals(opts, "-f", "--file", "--env-file") {
		x.ref(kRead, w, false)
	}
	if len(ops) == 0 {
		return
	}
	switch ops[0].Text {
	case "up", "pull", "build", "run", "create", "start":
		x.request(Request{Host: "registry-1.docker.io", Method: "GET"})
	case "push":
		x.request(Request{Method: "PUT", Data: true})
	}
}

var kubeSpec = newSpec("-n --namespace --context --cluster --kubeconfig -s --server --user --token -f --filename -o --output -l --selector -c --container --as --as-group --request-timeout -k --kustomize --field-selector --sort-by --template --image --type")

// kubeH reads kubectl, oc and helm: requests to the cluster (Host from
// --server, else ""), carrying data for what changes it.
func kubeH(x *call) {
	opts, ops := kubeSpec.parse(x.args)
	host := ""
	if s, ok := val(opts, "-s", "--server"); ok {
		host = hostOf(s.Text)
	}
	for _, w := range vals(opts, "-f", "--filename", "-k", "--kustomize") {
		if strings.Contains(w.Text, "://") {
			x.request(Request{Host: hostOf(w.Text), Method: "GET"})
			continue
		}
		if w.Text != "-" {
			x.ref(kRead, w, true)
		}
	}
	if len(ops) == 0 {
		return
	}
	verb := ops[0].Text
	switch verb {
	case "get", "describe", "logs", "top", "explain", "version", "api-resources", "api-versions", "cluster-info", "status", "list", "ls", "history", "search", "show", "template", "diff", "wait", "events", "auth":
		x.request(Request{Host: host, Method: "GET"})
	case "config":
		if len(ops) > 1 && ops[1].Text == "view" {
			for _, w := range x.args {
				if w.Text == "--raw" || w.Text == "--flatten" {
					x.refPath(kRead, "~/.kube/config", false)
				}
			}
		} else if len(ops) > 1 && ops[1].Text != "get-contexts" && ops[1].Text != "current-context" {
			x.refPath(kWrite, "~/.kube/config", false)
		}
	case "repo":
		if len(ops) > 2 && ops[1].Text == "add" {
			x.request(Request{Host: hostOf(ops[3%len(ops)].Text), Method: "GET"})
		}
	case "cp":
		k := x.request(Request{Host: host, Data: true})
		for _, w := range ops[1:] {
			if _, _, remote := remoteSpec(w.Text); !remote {
				x.ref(kRead, w, true)
				if p, ok := x.abs(w.Text); ok {
					x.m.f.Requests[k].Files = append(x.m.f.Requests[k].Files, p)
				}
			}
		}
	case "port-forward":
		x.request(Request{Host: host, Data: true})
		x.listener("localhost", shellx.Word{Dynamic: true})
	default:
		k := x.request(Request{Host: host, Data: true})
		if x.c.PipeIn >= 0 {
			x.fromStdin(k)
		}
	}
}

// sysPkgH reads apt, apt-get, dnf, yum, apk, zypper, pacman, snap:
// installs fetch from the distribution's mirrors and change /usr.
func sysPkgH(x *call) {
	_, ops := cachedSpec(0, "-o -c -t --option --config-file --target-release --repo --enablerepo --disablerepo --root --installroot -X --repository").parse(x.args)
	mirror := map[string]string{"apt": "deb.debian.org", "apt-get": "deb.debian.org", "aptitude": "deb.debian.org", "dnf": "mirrors.fedoraproject.org", "yum": "mirrors.fedoraproject.org", "apk": "dl-cdn.alpinelinux.org", "zypper": "download.opensuse.org", "pacman": "geo.mirror.pkgbuild.com", "snap": "api.snapcraft.io"}[x.name]
	sub := ""
	if len(ops) > 0 {
		sub = ops[0].Text
	}
	if x.name == "pacman" {
		for _, w := range x.args {
			if strings.HasPrefix(w.Text, "-S") || strings.HasPrefix(w.Text, "-U") {
				sub = "install"
			}
			if strings.HasPrefix(w.Text, "-R") {
				sub = "remove"
			}
		}
	}
	switch sub {
	case "install", "add", "upgrade", "dist-upgrade", "full-upgrade", "reinstall", "update", "refresh", "up", "dup", "in", "source", "download", "build-dep":
		x.request(Request{Host: mirror, Method: "GET"})
		for _, w := range ops[1:] {
			if strings.Contains(w.Text, "://") {
				x.request(Request{Host: hostOf(w.Text), Method: "GET"})
			} else if looksLikePath(w.Text) {
				x.ref(kRead, w, false)
			}
		}
		if sub != "update" && sub != "refresh" && sub != "source" && sub != "download" {
			x.refPath(kWrite, "/usr", true)
		}
	case "remove", "purge", "autoremove", "del", "erase", "rm", "uninstall":
		x.refPath(kWrite, "/usr", true)
	}
}

// aptKeyH reads apt-key, add-apt-repository and update-ca-certificates:
// what the system trusts changes.
func trustH(x *call) {
	for _, w := range x.args {
		if strings.Contains(w.Text, "://") {
			k := x.request(Request{Host: hostOf(w.Text), Method: "GET"})
			x.computed(k, w)
		}
	}
	x.refPath(kWrite, "/etc/apt", true)
	if x.name == "update-ca-certificates" || x.name == "trust" {
		x.refPath(kWrite, "/etc/ssl/certs", true)
	}
}
