package shield

import "testing"

func TestNamedTool(t *testing.T) {
	for _, c := range []struct {
		rel  string
		dir  bool
		want string
	}{
		{"ml/dvc.yaml", false, "dvc"},
		{"ml/.dvc", true, "dvc"},
		{"hpc/spack/spack.yaml", false, "spack"},
		{"contracts/slither.config.json", false, "slither"},
		{"contracts/hardhat.config.ts", false, "hardhat"},
		{"web/.eslintrc.json", false, "eslint"},
		{".prettierrc", false, "prettier"},
		{"services/pricing/cabal.project", false, "cabal"},
		{"Gemfile", false, ""},
		{"Pipfile", false, ""},
		// contents, not tools
		{"config.yaml", false, ""},
		{"deploy/values.yaml", false, ""},
		{"package.json", false, ""},
		{"tsconfig.json", false, ""},
		{"docker-compose.yml", false, ""},
		{"src", true, ""},
		{".github", true, "github"},
		// never the workspace's toolchain, or someone else's tree
		{"curl.yaml", false, ""},
		{".bashrc", false, ""},
		{".sshrc", false, ""},
		{"node_modules/foo/foo.yaml", false, ""},
		{"vendor/x/.xrc", false, ""},
		{"README.md", false, ""},
		{"Config.yaml", false, ""},
		{"a.yaml", false, ""},
		{"go.mod", false, ""},
	} {
		if got := NamedTool(c.rel, c.dir); got != c.want {
			t.Errorf("NamedTool(%q, %v) = %q, want %q", c.rel, c.dir, got, c.want)
		}
	}
}
