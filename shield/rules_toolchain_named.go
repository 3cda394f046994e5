package shield

import (
	"path"
	"strings"
)

// A tool's own file names it (rules 13). Beyond the project files
// toolchainByFile knows, most tools keep their configuration in a file or
// directory named after themselves: dvc.yaml and .dvc/, spack.yaml,
// slither.config.json, hardhat.config.ts, .eslintrc.json, cabal.project.
// (A "<Tool>file" is not read so: Gemfile is bundler's, Pipfile pipenv's,
// Earthfile earthly's; the table names those.) Such a name declares the program in every stack, the ones
// no table lists yet included; what the program may then do is still the
// policy's `toolchain: workspace` grammar (a verb of daily work, nothing
// leaving the machine) and tier 1's.

// namedFormats are the extensions of a configuration file named after
// its tool (<tool>.yaml).
var namedFormats = setOf(".yaml", ".yml", ".toml", ".json", ".jsonc", ".json5", ".ini", ".cfg", ".conf", ".hcl", ".project")

// notToolNames are stems that name what a file holds, not a tool: a
// file called config.yaml or values.yaml declares no program "config".
var notToolNames = setOf("config", "configuration", "settings", "package", "packages", "values", "secrets", "secret", "credentials",
	"app", "application", "data", "schema", "test", "tests", "main", "index", "default", "defaults", "local", "dev", "development",
	"prod", "production", "staging", "manifest", "project", "workspace", "env", "environment", "params", "metrics", "docker-compose",
	"compose", "tsconfig", "jsconfig", "launch", "tasks", "extensions", "requirements", "constraints", "lock", "version", "versions",
	"build", "deploy", "release", "ci", "cd", "pipeline", "renovate", "dependabot", "codecov", "components", "models", "model",
	"openapi", "swagger", "api", "example", "sample", "template", "policy", "rules", "users", "fixtures", "seed", "messages")

// NamedTool is the program the workspace entry rel (a file, or a
// directory if dir) declares by its name: "<tool>.yaml" (and the other
// namedFormats), "<tool>.config.js|ts|…", ".<tool>rc[.ext]", ".<tool>"
// for a directory; "" when its name declares none (a
// stem that names contents, not a tool; a tool that is never the
// workspace's toolchain; anything in vendored or generated trees).
func NamedTool(rel string, dir bool) string {
	if vendoredPath(rel) {
		return ""
	}
	base := path.Base(rel)
	var stem string
	switch {
	case dir:
		stem, _ = strings.CutPrefix(base, ".")
		if stem == base {
			return "" // a plain directory (src, docs) names no tool
		}
	case strings.HasPrefix(base, ".") && strings.Contains(base, "rc"):
		s := strings.TrimPrefix(base, ".")
		if i := strings.IndexByte(s, '.'); i >= 0 {
			s = s[:i]
		}
		stem, _ = strings.CutSuffix(s, "rc")
		if stem == s {
			return ""
		}
	case strings.Contains(base, ".config."):
		stem = base[:strings.Index(base, ".config.")]
	default:
		ext := path.Ext(base)
		if !namedFormats[ext] {
			return ""
		}
		stem = strings.TrimSuffix(base, ext)
	}
	if len(stem) < 2 || len(stem) > 24 || notToolNames[strings.ToLower(stem)] || toolchainExcluded(stem) || !validProgram(stem) ||
		strings.ContainsAny(stem, ".+") || stem != strings.ToLower(stem) && !dir {
		return ""
	}
	return stem
}
