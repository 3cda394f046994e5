package manifest

import (
	"strings"
)

// Env judges one environment variable set for a command.
func Env(name, value string) []Change {
	return finish(envChanges(name, value))
}

var publicGoHosts = set("github.com", "gitlab.com", "bitbucket.org", "golang.org", "google.golang.org",
	"gopkg.in", "go.googlesource.com", "k8s.io", "sigs.k8s.io", "cloud.google.com", "go.uber.org",
	"go.opentelemetry.io", "honnef.co", "gotest.tools", "go.etcd.io", "codeberg.org", "gitea.com")

// projectGoHosts are hosts of public projects' own modules (vanity
// import paths), unlike forges, where an owner's path may be private.
var projectGoHosts = set("golang.org", "google.golang.org", "gopkg.in", "go.googlesource.com", "k8s.io", "sigs.k8s.io",
	"cloud.google.com", "go.uber.org", "go.opentelemetry.io", "honnef.co", "gotest.tools", "go.etcd.io", "go.mongodb.org",
	"go.temporal.io", "go.opencensus.io", "gorm.io", "entgo.io", "connectrpc.com", "buf.build", "nhooyr.io", "modernc.org")

// publicPattern reports whether a GOPRIVATE-style pattern list covers
// everything or a whole public host.
func publicPattern(v string) bool {
	for _, p := range strings.Split(v, ",") {
		p = strings.TrimSpace(p)
		if p == "" {
			continue
		}
		host, rest, _ := strings.Cut(p, "/")
		if strings.ContainsAny(host, "*?[") {
			// a pattern covering a whole top-level domain or more
			rest := strings.TrimLeft(host, "*?[].")
			if !strings.Contains(rest, ".") || strings.ContainsAny(rest, "*?[") {
				return true
			}
		}
		if publicGoHosts[strings.ToLower(host)] && (rest == "" || rest == "*") {
			return true
		}
		if projectGoHosts[strings.ToLower(host)] {
			// rules 16: a public project's own host: every module under it
			// is public (google.golang.org/grpc), never a company's private one
			return true
		}
	}
	return false
}

func envChanges(name, value string) []Change {
	v := strings.TrimSpace(value)
	ch := func(kind string) []Change {
		return []Change{{Kind: kind, Key: clean(name), Detail: "now " + clip(value)}}
	}
	up := strings.ToUpper(name)
	switch up {
	case "GOPROXY":
		for _, p := range strings.FieldsFunc(v, func(r rune) bool { return r == ',' || r == '|' }) {
			p = strings.TrimRight(strings.TrimSpace(p), "/")
			if p != "direct" && p != "off" && p != "https://proxy.golang.org" {
				return ch(KindSource)
			}
		}
		return nil
	case "GOSUMDB":
		if v == "" || v == "sum.golang.org" || strings.HasPrefix(v, "sum.golang.org+033de0ae+") {
			return nil
		}
		return ch(KindChecksum)
	case "GONOSUMCHECK", "GOINSECURE", "GONOSUMDB_ALL":
		if v == "" || v == "0" {
			return nil
		}
		return ch(KindChecksum)
	case "GONOSUMDB", "GOPRIVATE":
		if publicPattern(v) {
			return ch(KindChecksum)
		}
		return nil
	case "GOFLAGS":
		var out []Change
		for _, f := range strings.Fields(v) {
			f = "-" + strings.TrimLeft(f, "-")
			switch {
			case f == "-insecure":
				out = append(out, ch(KindChecksum)...)
			case strings.HasPrefix(f, "-toolexec"), strings.HasPrefix(f, "-exec"):
				out = append(out, ch(KindRuns)...)
			case strings.HasPrefix(f, "-modfile"), strings.HasPrefix(f, "-overlay"), strings.HasPrefix(f, "-pgo="):
				out = append(out, ch(KindSource)...)
			}
		}
		return out
	case "GOTOOLCHAIN":
		if goodToolchain(v) {
			return nil
		}
		return ch(KindSource)
	case "GOENV", "CARGO_HOME", "PIP_CONFIG_FILE", "NPM_CONFIG_USERCONFIG", "NPM_CONFIG_GLOBALCONFIG", "BUNDLE_GEMFILE", "UV_CONFIG_FILE", "POETRY_CONFIG_DIR", "GEMRC", "YARN_RC_FILENAME":
		if v == "" || v == "off" && up == "GOENV" {
			return nil
		}
		return ch(KindSource)
	case "YARN_NPM_REGISTRY_SERVER", "YARN_REGISTRY":
		if defaultNpmRegistry(v) {
			return nil
		}
		return ch(KindSource)
	case "UV_NO_VERIFY_HASHES", "PIP_NO_VERIFY_HASHES":
		if !isFalse(v) && v != "" {
			return ch(KindChecksum)
		}
		return nil
	case "YARN_CHECKSUM_BEHAVIOR":
		// rules 21: a lockfile's checksums not enforced
		if l := strings.ToLower(v); l == "ignore" || l == "update" || l == "reset" {
			return ch(KindChecksum)
		}
		return nil
	case "YARN_ENABLE_IMMUTABLE_INSTALLS", "PNPM_FROZEN_LOCKFILE", "NPM_CONFIG_FROZEN_LOCKFILE", "UV_FROZEN", "UV_LOCKED", "POETRY_INSTALLER_NO_BINARY":
		// rules 21: an install that may rewrite the lockfile
		if up != "POETRY_INSTALLER_NO_BINARY" && isFalse(v) {
			return ch(KindChecksum)
		}
		return nil
	case "NPM_CONFIG_REGISTRY", "NPM_CONFIG_STRICT_SSL", "PNPM_REGISTRY":
		if up == "NPM_CONFIG_STRICT_SSL" {
			if isFalse(v) {
				return ch(KindChecksum)
			}
			return nil
		}
		if defaultNpmRegistry(v) {
			return nil
		}
		return ch(KindSource)
	case "YARN_ENABLE_STRICT_SSL":
		if isFalse(v) {
			return ch(KindChecksum)
		}
		return nil
	case "YARN_UNSAFE_HTTP_WHITELIST", "YARN_CA_FILE_PATH", "YARN_HTTPS_CA_FILE_PATH", "NODE_TLS_REJECT_UNAUTHORIZED", "NODE_EXTRA_CA_CERTS", "PIP_CERT", "REQUESTS_CA_BUNDLE", "SSL_CERT_FILE", "UV_INSECURE_HOST", "BUNDLE_SSL_VERIFY_MODE", "CARGO_HTTP_CHECK_REVOKE", "CARGO_HTTP_CAINFO", "GIT_SSL_NO_VERIFY":
		if up == "NODE_TLS_REJECT_UNAUTHORIZED" && v != "0" || v == "" {
			return nil
		}
		if up == "BUNDLE_SSL_VERIFY_MODE" && v != "0" {
			return nil
		}
		if up == "CARGO_HTTP_CHECK_REVOKE" && !isFalse(v) {
			return nil
		}
		return ch(KindChecksum)
	case "YARN_YARN_PATH", "YARN_PLUGINS", "LD_PRELOAD", "LD_AUDIT", "DYLD_INSERT_LIBRARIES", "RUSTC_WRAPPER", "RUSTC_WORKSPACE_WRAPPER", "RUSTC", "RUSTDOC", "CARGO_BUILD_RUSTC", "CARGO_BUILD_RUSTC_WRAPPER", "CARGO_BUILD_RUSTC_WORKSPACE_WRAPPER", "CARGO_BUILD_RUSTDOC", "PYTHONSTARTUP", "BASH_ENV", "ENV", "PERL5OPT", "RUBYOPT":
		if v == "" {
			return nil
		}
		return ch(KindRuns)
	case "NODE_OPTIONS":
		for _, f := range strings.Fields(v) {
			for _, o := range []string{"--require", "-r", "--import", "--loader", "--experimental-loader"} {
				if f == o || strings.HasPrefix(f, o+"=") {
					return ch(KindRuns)
				}
			}
		}
		return nil
	case "PIP_INDEX_URL", "UV_INDEX_URL", "UV_DEFAULT_INDEX", "PIP_INDEX", "PDM_PYPI_URL":
		if defaultPyIndex(v) || v == "" {
			return nil
		}
		return ch(KindSource)
	case "PIP_EXTRA_INDEX_URL", "UV_EXTRA_INDEX_URL", "UV_INDEX", "PIP_TRUSTED_HOST", "PIP_FIND_LINKS", "UV_FIND_LINKS", "GEM_SOURCE", "CARGO_REGISTRY_DEFAULT", "CARGO_REGISTRY_INDEX", "PIPENV_PYPI_MIRROR", "POETRY_SOURCE":
		if v == "" || up == "GEM_SOURCE" && defaultGemSource(v) {
			return nil
		}
		return ch(KindSource)
	}
	switch {
	case strings.HasPrefix(up, "NPM_CONFIG_"):
		k := strings.ReplaceAll(strings.ToLower(name[len("NPM_CONFIG_"):]), "_", "-")
		if f, ok := npmKey(k, v); ok && f.flag {
			return ch(f.kind)
		}
		return nil
	case strings.HasPrefix(up, "POETRY_REPOSITORIES_") && strings.HasSuffix(up, "_URL"),
		strings.HasPrefix(up, "CARGO_REGISTRIES_") && strings.HasSuffix(up, "_INDEX"),
		strings.HasPrefix(up, "BUNDLE_MIRROR__"), strings.HasPrefix(up, "BUNDLE_LOCAL__"),
		strings.HasPrefix(up, "UV_INDEX_") && strings.HasSuffix(up, "_URL"),
		strings.HasPrefix(up, "PDM_SOURCE"):
		if v == "" {
			return nil
		}
		return ch(KindSource)
	case strings.HasPrefix(up, "CARGO_TARGET_") && (strings.HasSuffix(up, "_RUNNER") || strings.HasSuffix(up, "_LINKER")):
		if v == "" {
			return nil
		}
		return ch(KindRuns)
	case strings.HasPrefix(up, "CARGO_SOURCE_") && (strings.HasSuffix(up, "_REPLACE_WITH") || strings.HasSuffix(up, "_REGISTRY") || strings.HasSuffix(up, "_DIRECTORY") || strings.HasSuffix(up, "_LOCAL_REGISTRY")):
		return ch(KindSource)
	case strings.HasPrefix(up, "BUNDLE_") && strings.Contains(up, "DISABLE_CHECKSUM"):
		if isFalse(v) || v == "" {
			return nil
		}
		return ch(KindChecksum)
	}
	return nil
}

func isFalse(v string) bool {
	switch strings.ToLower(strings.Trim(strings.TrimSpace(v), `"'`)) {
	case "false", "0", "no", "off":
		return true
	}
	return false
}

// goodToolchain reports whether v is one of GOTOOLCHAIN's standard forms.
func goodToolchain(v string) bool {
	base, suf, _ := strings.Cut(v, "+")
	if suf != "" && suf != "auto" && suf != "path" {
		return false
	}
	switch base {
	case "", "auto", "local", "path":
		return true
	}
	if !strings.HasPrefix(base, "go1") && !strings.HasPrefix(base, "default-go1") {
		return false
	}
	for _, r := range base {
		if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '.' || r == '-') {
			return false
		}
	}
	return true
}

func trimURL(v string) string {
	return strings.ToLower(strings.TrimRight(strings.Trim(strings.TrimSpace(v), `"'`), "/"))
}

func defaultNpmRegistry(v string) bool {
	switch trimURL(v) {
	case "", "https://registry.npmjs.org", "https://registry.yarnpkg.com", "https://registry.npmjs.com":
		return true
	}
	return false
}

func defaultPyIndex(v string) bool {
	switch trimURL(v) {
	case "https://pypi.org/simple", "https://pypi.python.org/simple", "https://pypi.org/pypi":
		return true
	}
	return false
}

func defaultGemSource(v string) bool {
	switch trimURL(v) {
	case "https://rubygems.org", "https://index.rubygems.org":
		return true
	}
	return false
}
