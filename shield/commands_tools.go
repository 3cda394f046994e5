package shield

import (
	"strings"

	"github.com/opx-dev/opx/shield/shellx"
)

// Developer tools: git, package managers, containers, clusters.

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
		} else if len(ops) > 1 && ops[0].Text == "get" && npmSecretKey(ops[1].Text) {
			// npm config get of a token prints it; of any other key
			// (registry, cache), its value only, and list masks
			// tokens ("(protected)").
			x.refPath(kRead, "~/.npmrc", false)
		} else if len(ops) == 1 && ops[0].Text == "get" {
			x.refPath(kRead, "~/.npmrc", false) // get without a key lists everything
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
	if sub == "self" && len(ops) > 0 && (ops[0].Text == "add" || ops[0].Text == "install" || ops[0].Text == "update") {
		// rules 19: pdm self add, poetry self add: a plugin installed
		// into the tool itself, judged as any package is
		sub, ops = "add", ops[1:]
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
		if sub == "run" && x.name != "pipx" {
			// uv run PROGRAM ARGS: the operands are a program of the
			// project's environment and its arguments, judged as their
			// own run (projectRunners), not packages (a URL there is the
			// program's argument: pre-commit autoupdate --repo URL).
			ops = nil
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
			switch {
			case x.name == "pip" || x.name == "pip3":
				x.refPath(kWrite, "~/.config/pip/pip.conf", false)
			case (x.name == "bundle" || x.name == "bundler") && has(opts, "--local"):
				x.refPath(kWrite, ".bundle/config", false)
			case x.name == "bundle" || x.name == "bundler":
				x.refPath(kWrite, "~/.bundle/config", false)
			case x.name == "poetry" && has(opts, "--local"):
				x.refPath(kWrite, "poetry.toml", false)
			case x.name == "poetry":
				x.refPath(kWrite, "~/.config/pypoetry/config.toml", false)
			case x.name == "composer":
				x.refPath(kWrite, "composer.json", false)
			default:
				x.m.unknown(x.name + " config " + ops[0].Text + " changes a configuration file Shield does not locate")
			}
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

// npmSecretKey reports whether an npm configuration key names a secret.
func npmSecretKey(k string) bool {
	k = strings.ToLower(k)
	return strings.Contains(k, "auth") || strings.Contains(k, "token") || strings.Contains(k, "pass") || strings.Contains(k, "cert") ||
		strings.Contains(k, "key") || strings.Contains(k, "_") || strings.HasPrefix(k, "//")
}
