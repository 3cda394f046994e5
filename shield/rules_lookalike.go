package shield

import (
	"path"
	"strings"
)

// Look-alike and known-bad packages (`supply-chain:lookalike`,
// `supply-chain:known-bad`, escalate): a dependency added, by an install
// command or a manifest written, whose name is a small edit away from a
// popular package of its ecosystem (a typosquat: raect-dom, requets), a
// separator or digit-for-letter variant of one, or holds characters
// outside ASCII (a homoglyph); or a name and version on the short list of
// known-compromised releases. The lists are small on purpose and
// documented in docs/shield-rules.md: they catch the everyday squat of
// the packages most depended on, not every squat.

// popular are, per ecosystem, packages among the most depended on (and
// their legitimate near neighbours, so that preact is not taken for a
// squat of react).
var popular = map[string][]string{
	"npm": {"react", "react-dom", "preact", "express", "lodash", "axios", "vue", "typescript", "webpack", "vite", "vitest", "jest", "eslint",
		"prettier", "next", "moment", "chalk", "commander", "debug", "dotenv", "uuid", "request", "async", "underscore", "jquery", "redux",
		"react-redux", "react-router", "react-router-dom", "mongoose", "mongodb", "socket.io", "body-parser", "cors", "nodemon", "yargs",
		"classnames", "bluebird", "rxjs", "tslib", "babel-core", "@babel/core", "cross-env", "rimraf", "glob", "minimist", "semver", "ws",
		"node-fetch", "graphql", "styled-components", "tailwindcss", "postcss", "autoprefixer", "electron", "esbuild", "rollup", "zod",
		"event-stream", "colors", "faker", "ua-parser-js", "node-ipc", "coa", "rc", "angular", "svelte", "nuxt", "koa", "fastify",
		"mocha", "chai", "sinon", "typeorm", "sequelize", "prisma", "knex", "pg", "mysql", "mysql2", "redis", "ioredis", "sharp",
		"puppeteer", "playwright", "cheerio", "date-fns", "dayjs", "immer", "mobx", "nanoid", "qs", "form-data", "inquirer", "ora"},
	"pypi": {"requests", "numpy", "pandas", "django", "flask", "fastapi", "urllib3", "setuptools", "boto3", "botocore", "pyyaml", "six",
		"python-dateutil", "certifi", "idna", "charset-normalizer", "cryptography", "pytest", "click", "jinja2", "markupsafe", "attrs",
		"pydantic", "sqlalchemy", "scipy", "matplotlib", "pillow", "beautifulsoup4", "lxml", "psycopg2", "psycopg2-binary", "redis",
		"celery", "tensorflow", "torch", "scikit-learn", "opencv-python", "selenium", "colorama", "tqdm", "rich", "httpx", "aiohttp",
		"uvicorn", "gunicorn", "black", "ruff", "mypy", "flake8", "pylint", "isort", "openai", "anthropic", "jsonschema", "paramiko",
		"pymongo", "docutils", "wheel", "pip", "virtualenv", "packaging", "typing-extensions", "protobuf", "grpcio", "pyjwt", "bcrypt"},
	"crates": {"serde", "serde_json", "tokio", "rand", "clap", "anyhow", "thiserror", "log", "regex", "reqwest", "chrono", "futures",
		"syn", "quote", "proc-macro2", "lazy_static", "once_cell", "hyper", "axum", "tracing", "bytes", "itertools", "libc", "base64",
		"uuid", "rust_decimal", "time", "url", "env_logger", "sqlx", "diesel", "actix-web", "warp", "rayon", "crossbeam", "parking_lot"},
	"go": {"github.com/gin-gonic/gin", "github.com/gorilla/mux", "github.com/spf13/cobra", "github.com/spf13/viper", "github.com/sirupsen/logrus",
		"github.com/stretchr/testify", "github.com/google/uuid", "github.com/pkg/errors", "github.com/golang/protobuf", "google.golang.org/grpc",
		"go.uber.org/zap", "github.com/go-redis/redis", "github.com/redis/go-redis", "github.com/lib/pq", "github.com/jackc/pgx",
		"github.com/labstack/echo", "github.com/gofiber/fiber", "github.com/go-sql-driver/mysql", "github.com/aws/aws-sdk-go",
		"github.com/prometheus/client_golang", "github.com/golang-jwt/jwt", "gopkg.in/yaml.v3", "github.com/boltdb/bolt", "go.etcd.io/bbolt"},
	"rubygems": {"rails", "rake", "bundler", "rack", "nokogiri", "devise", "puma", "sidekiq", "rspec", "rest-client", "httparty",
		"faraday", "json", "activesupport", "activerecord", "pg", "mysql2", "redis", "sinatra", "rubocop", "pry", "thor", "aws-sdk"},
}

// knownBad are releases known to have been compromised or published as
// malware: ecosystem -> name -> versions ("" for every version).
var knownBad = map[string]map[string][]string{
	"npm": {"event-stream": {"3.3.6"}, "flatmap-stream": {""}, "ua-parser-js": {"0.7.29", "0.8.0", "1.0.0"}, "node-ipc": {"10.1.1", "10.1.2", "10.1.3"},
		"crossenv": {""}, "cross-env.js": {""}, "coa": {"2.0.3", "2.0.4", "2.1.1", "2.1.3", "3.0.1", "3.1.3"}, "rc": {"1.2.9", "1.3.9", "2.3.9"},
		"colors": {"1.4.1", "1.4.2", "1.4.44-liberty-2"}, "faker": {"6.6.6"}, "eslint-scope": {"3.7.2"}, "peacenotwar": {""},
		"discord.dll": {""}, "jquery.js": {""}, "mongose": {""}, "babelcli": {""}, "nodesass": {""}, "http-proxy.js": {""}},
	"pypi": {"python3-dateutil": {""}, "jeIlyfish": {""}, "colourama": {""}, "python-sqlite": {""}, "ctx": {"0.2.2", "0.2.6"},
		"urlib3": {""}, "request": {""}, "djanga": {""}, "setup-tools": {""}, "acqusition": {""}, "apidev-coop": {""}},
	"crates": {"rustdecimal": {""}, "faster_log": {""}, "async_println": {""}},
	"rubygems": {"rest-client": {"1.6.10", "1.6.11", "1.6.12", "1.6.13"}, "strong_password": {"0.0.7"}, "bootstrap-sass": {"3.2.0.3"},
		"atlas-client": {""}},
	"go": {"github.com/boltdb-go/bolt": {""}},
}

// pkgRef is a dependency a command or a manifest adds.
type pkgRef struct{ eco, name, version, by string }

var (
	pkgJSONDepRe = mustRx(`"((?:@[\w.-]+/)?[^"\s/@]+)"\s*:\s*"([~^>=<]*\s*[\w.*+-]*)"`)
	reqLineRe    = mustRx(`(?m)^\s*([A-Za-z0-9][A-Za-z0-9._-]*)\s*(?:\[[^\]]*\])?\s*(?:(?:==|>=|~=|<=|!=|>|<)\s*([\w.*+-]+))?`)
	cargoDepRe   = mustRx(`(?m)^\s*([A-Za-z0-9_-]+)\s*=\s*(?:"([^"]*)"|\{[^}\n]*?version\s*=\s*"([^"]*)")`)
	gemLineRe    = mustRx(`(?m)^\s*gem\s+["']([\w.-]+)["'](?:\s*,\s*["'][~>=<\s]*([\w.]+)["'])?`)
	goRequireRe  = mustRx(`(?m)^\s*(?:require\s+)?([a-z0-9.-]+\.[a-z]{2,}/[\w./-]+)\s+(v[\w.+-]+)`)
)

// installedPackages are the packages f's commands and manifest writes add.
func installedPackages(f *Facts) []pkgRef {
	var out []pkgRef
	for i := range f.Runs {
		out = append(out, installArgs(f.Runs[i].Argv)...)
	}
	for _, t := range f.Texts {
		p, ok := strings.CutPrefix(t.Source, "content:")
		if !ok {
			continue
		}
		body := clip(t.Body, maxTextJudged)
		base := path.Base(p)
		switch {
		case base == "package.json":
			for _, m := range pkgJSONDepRe.FindAllStringSubmatch(body, 200) {
				if m[1] != "name" && m[1] != "version" && !strings.Contains(m[2], " ") {
					out = append(out, pkgRef{"npm", m[1], strings.TrimLeft(m[2], "~^=<> "), base})
				}
			}
		case strings.HasPrefix(base, "requirements") && strings.HasSuffix(base, ".txt"):
			for _, m := range reqLineRe.FindAllStringSubmatch(body, 200) {
				out = append(out, pkgRef{"pypi", m[1], m[2], base})
			}
		case base == "Cargo.toml":
			for _, m := range cargoDepRe.FindAllStringSubmatch(body, 200) {
				switch m[1] {
				case "name", "version", "edition", "authors", "license", "description", "resolver", "members", "path", "rust-version", "readme", "repository", "homepage", "build", "publish", "default", "features":
					continue
				}
				out = append(out, pkgRef{"crates", m[1], m[2] + m[3], base})
			}
		case base == "Gemfile":
			for _, m := range gemLineRe.FindAllStringSubmatch(body, 200) {
				out = append(out, pkgRef{"rubygems", m[1], m[2], base})
			}
		case base == "go.mod":
			for _, m := range goRequireRe.FindAllStringSubmatch(body, 400) {
				out = append(out, pkgRef{"go", m[1], m[2], base})
			}
		}
	}
	return out
}

// installArgs are the packages an install command names.
func installArgs(argv []string) []pkgRef {
	if len(argv) < 3 {
		return nil
	}
	name, sub := path.Base(argv[0]), argv[1]
	rest := argv[2:]
	eco := ""
	switch name {
	case "npm", "pnpm", "yarn", "bun":
		if sub == "add" || sub == "install" || sub == "i" || sub == "in" || sub == "ins" {
			eco = "npm"
		}
	case "pip", "pip3", "pipx":
		if sub == "install" {
			eco = "pypi"
		}
	case "uv":
		if sub == "add" {
			eco = "pypi"
		} else if sub == "pip" && len(rest) > 0 && rest[0] == "install" {
			eco, rest = "pypi", rest[1:]
		}
	case "poetry", "pdm", "pipenv":
		if sub == "add" || sub == "install" {
			eco = "pypi"
		}
	case "cargo":
		if sub == "add" || sub == "install" || sub == "binstall" {
			eco = "crates"
		}
	case "go":
		if sub == "get" || sub == "install" {
			eco = "go"
		}
	case "gem":
		if sub == "install" {
			eco = "rubygems"
		}
	case "bundle":
		if sub == "add" {
			eco = "rubygems"
		}
	}
	if eco == "" {
		return nil
	}
	var out []pkgRef
	skip := false
	for k, a := range rest {
		if skip {
			skip = false
			continue
		}
		if (a == "-v" || a == "--version") && eco == "rubygems" && len(out) > 0 && k+1 < len(rest) {
			out[len(out)-1].version = rest[k+1] // gem install NAME -v VERSION
		}
		if strings.HasPrefix(a, "-") {
			switch a {
			case "-r", "--requirement", "-c", "--constraint", "-e", "--editable", "-i", "--index-url", "--extra-index-url", "-v", "--version", "--group", "-G", "--filter", "-w", "--workspace", "--target", "--prefix", "--registry":
				skip = true
			}
			continue
		}
		if strings.ContainsAny(a, "/\\") && eco != "go" || strings.HasPrefix(a, ".") || strings.Contains(a, "://") || strings.HasSuffix(a, ".whl") || strings.HasSuffix(a, ".tgz") {
			continue // a path, a URL or an archive: not a registry name
		}
		n, v := splitPkgVersion(eco, a)
		out = append(out, pkgRef{eco, n, v, name + " " + sub})
	}
	return out
}

// splitPkgVersion splits "name@1.2.3", "name==1.2", "name@v1" into name
// and version.
func splitPkgVersion(eco, a string) (string, string) {
	switch eco {
	case "pypi":
		if k := strings.IndexAny(a, "=<>~!["); k > 0 {
			return a[:k], strings.TrimLeft(a[k:], "=<>~!")
		}
	case "npm", "go", "crates":
		if k := strings.LastIndexByte(a, '@'); k > 0 {
			return a[:k], a[k+1:]
		}
	}
	return a, ""
}

// lookalikePackages is `supply-chain:lookalike` and
// `supply-chain:known-bad` (escalate).
func (s *Shield) lookalikePackages(_ *Action, f *Facts, j *judgement) {
	for _, p := range installedPackages(f) {
		if why := knownBadRelease(p); why != "" {
			j.escalate("supply-chain:known-bad", "%s adds %s, %s", p.by, p.name, why)
			return
		}
		if of := lookalikeOf(p.eco, p.name); of != "" {
			j.escalate("supply-chain:lookalike", "%s adds %s, which looks like the popular %s package %s (a typosquat?)", p.by, p.name, p.eco, of)
			return
		}
	}
}

// knownBadRelease says why p is a known-compromised release, or "".
func knownBadRelease(p pkgRef) string {
	vs, ok := knownBad[p.eco][p.name]
	if !ok {
		vs, ok = knownBad[p.eco][strings.ToLower(p.name)]
	}
	if !ok {
		return ""
	}
	for _, v := range vs {
		if v == "" {
			return "a package published as malware"
		}
		if p.version == v {
			return "version " + v + ", a release known to have been compromised"
		}
	}
	return ""
}

// lookalikeOf returns the popular package name looks like, or "".
func lookalikeOf(eco, name string) string {
	for _, r := range name {
		if r > 0x7e {
			return "(a name with characters outside ASCII: a homoglyph)"
		}
	}
	list := popular[eco]
	low := strings.ToLower(name)
	for _, q := range list {
		if q == low || eco == "pypi" && pyNorm(q) == pyNorm(low) {
			return "" // the package itself
		}
	}
	key := squatKey(eco, low)
	for _, q := range list {
		if eco == "go" {
			// A Go path: the same repository under another owner or a
			// near spelling of the owner or repository.
			if len(low) >= 12 && editDistance(low, q, 2) == 1 {
				return q
			}
			continue
		}
		if squatKey(eco, q) == key {
			return q // a separator or digit-for-letter variant
		}
		d := editDistance(low, q, 2)
		if d == 1 && len(q) >= 5 || d == 2 && len(q) >= 9 {
			return q
		}
	}
	return ""
}

// pyNorm is PyPI's name normalization (PEP 503): -, _ and . are one.
func pyNorm(n string) string {
	return strings.NewReplacer("_", "-", ".", "-").Replace(strings.ToLower(n))
}

// squatKey folds what a squat varies without an edit a reader sees:
// separators, and digits for the letters they resemble.
func squatKey(eco, n string) string {
	n = strings.NewReplacer("-", "", "_", "", ".", "", "0", "o", "1", "l", "3", "e", "5", "s", "rn", "m", "vv", "w").Replace(n)
	return n
}

// editDistance is the optimal string alignment distance of a and b
// (insertions, deletions, substitutions, adjacent transpositions), or
// max+1 once it exceeds max.
func editDistance(a, b string, max int) int {
	if d := len(a) - len(b); d > max || -d > max {
		return max + 1
	}
	if len(a) > 64 || len(b) > 64 {
		return max + 1
	}
	var rows [3][65]int
	for jx := 0; jx <= len(b); jx++ {
		rows[0][jx] = jx
	}
	for i := 1; i <= len(a); i++ {
		prev2, prev, cur := &rows[(i+1)%3], &rows[(i+2)%3], &rows[i%3] // rows i-2, i-1, i
		cur[0] = i
		best := i
		for jx := 1; jx <= len(b); jx++ {
			cost := 1
			if a[i-1] == b[jx-1] {
				cost = 0
			}
			v := min(prev[jx]+1, cur[jx-1]+1, prev[jx-1]+cost)
			if i > 1 && jx > 1 && a[i-1] == b[jx-2] && a[i-2] == b[jx-1] {
				v = min(v, prev2[jx-2]+1)
			}
			cur[jx] = v
			best = min(best, v)
		}
		if best > max {
			return max + 1
		}
	}
	return rows[len(a)%3][len(b)]
}
