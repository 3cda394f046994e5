package manifest

import "testing"

// TestDiffShape_ChecksNarrowed: removing what makes a check strict, a rule
// from a check tool's list, or the whole configuration narrows the check;
// adding rules, tightening, or removing an exclusion does not.
func TestDiffShape_ChecksNarrowed(t *testing.T) {
	cases := []struct{ name, path, before, after, want string }{
		{"cmake Werror dropped", "CMakeLists.txt", "add_compile_options(-Wall -Werror)\n", "add_compile_options(-Wall)\n", KindChecks},
		{"msbuild warnings as errors dropped", "Directory.Build.props", "<Project>\n  <PropertyGroup>\n    <TreatWarningsAsErrors>true</TreatWarningsAsErrors>\n    <Nullable>enable</Nullable>\n  </PropertyGroup>\n</Project>\n", "<Project>\n  <PropertyGroup>\n    <Nullable>enable</Nullable>\n  </PropertyGroup>\n</Project>\n", KindChecks},
		{"gradle kotlin allWarningsAsErrors dropped", "build.gradle.kts", "kotlin {\n    compilerOptions { allWarningsAsErrors = true }\n}\n", "kotlin {\n    compilerOptions { }\n}\n", KindChecks},
		{"golangci linter dropped", ".golangci.yml", "linters:\n  enable:\n    - govet\n    - gosec\n    - errcheck\n", "linters:\n  enable:\n    - govet\n    - errcheck\n", KindChecks},
		{"ruff select shrunk", "ruff.toml", "[lint]\nselect = [\"E\", \"F\", \"S\", \"B\"]\n", "[lint]\nselect = [\"E\", \"F\"]\n", KindChecks},
		{"scanner config emptied", ".gitleaks.toml", "[extend]\nuseDefault = true\n", "", KindChecks},
		{"linter added", ".golangci.yml", "linters:\n  enable:\n    - govet\n", "linters:\n  enable:\n    - govet\n    - gosec\n", ""},
		{"ruff select grown", "ruff.toml", "[lint]\nselect = [\"E\", \"F\"]\n", "[lint]\nselect = [\"E\", \"F\", \"S\"]\n", ""},
		{"exclusion removed", ".golangci.yml", "linters:\n  disable:\n    - lll\n    - funlen\n", "linters:\n  disable:\n    - funlen\n", ""},
		{"cmake flag added", "CMakeLists.txt", "add_compile_options(-Wall)\n", "add_compile_options(-Wall -Werror)\n", ""},
		{"timeout raised", ".golangci.yml", "run:\n  timeout: 5m\n", "run:\n  timeout: 10m\n", ""},
	}
	for _, c := range cases {
		var before []byte
		if c.before != "" {
			before = []byte(c.before)
		}
		cs, err := Diff(c.path, before, []byte(c.after))
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		got := ""
		for _, ch := range cs {
			if ch.Kind == KindChecks {
				got = KindChecks
			}
		}
		if got != c.want {
			t.Errorf("%s: got %q, want %q (%+v)", c.name, got, c.want, cs)
		}
	}
}
