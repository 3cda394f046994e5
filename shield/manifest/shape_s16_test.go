package manifest

import "testing"

// TestDiffShape_DataStackSources (rules 10): the build-file table knows
// the data and ML stacks' package, channel and engine files, and the shape
// rule reads a source named without a URL (a channel list's new item) and
// a git source moved to a branch that moves. Version bumps and the
// ecosystems' own channels pass.
func TestDiffShape_DataStackSources(t *testing.T) {
	cases := []struct{ name, path, before, after, want string }{
		{"conda user channel first", "environment.yml", "name: etl\nchannels:\n  - conda-forge\ndependencies:\n  - pandas=2.1\n", "name: etl\nchannels:\n  - acme-labs\n  - conda-forge\ndependencies:\n  - pandas=2.1\n", KindSource},
		{"condarc new with a user channel", ".condarc", "", "channels:\n  - pkgs-mirror-team\n  - defaults\n", KindSource},
		{"mambarc channel", ".mambarc", "channels:\n  - conda-forge\n", "channels:\n  - conda-forge\n  - quant-tools\n", KindSource},
		{"pixi channel inline list item", "pixi.toml", "[project]\nchannels = [\n  \"conda-forge\",\n]\n", "[project]\nchannels = [\n  \"conda-forge\",\n  \"someone-else\",\n]\n", KindSource},
		{"dbt package to a git fork", "transform/packages.yml", "packages:\n  - package: dbt-labs/codegen\n    version: 0.12.1\n", "packages:\n  - git: \"https://github.com/warehouse-helpers/dbt-codegen.git\"\n    revision: 0.12.1\n", KindSource},
		{"dbt git source to a moving branch", "transform/packages.yml", "packages:\n  - git: \"https://github.com/dbt-labs/dbt-codegen.git\"\n    revision: 0.12.1\n", "packages:\n  - git: \"https://github.com/dbt-labs/dbt-codegen.git\"\n    revision: main\n", KindSource},
		{"spark defaults repository", "conf/spark-defaults.conf", "spark.executor.memory 4g\n", "spark.executor.memory 4g\nspark.jars.repositories https://maven.lakehouse-cache.io/releases\n", KindSource},
		{"renv repository", "renv.lock", "{\n  \"R\": {\n    \"Repositories\": [\n      {\"Name\": \"CRAN\", \"URL\": \"https://cloud.r-project.org\"}\n    ]\n  }\n}\n", "{\n  \"R\": {\n    \"Repositories\": [\n      {\"Name\": \"CRAN\", \"URL\": \"https://cran.stats-mirror.io\"}\n    ]\n  }\n}\n", KindSource},
		{"julia manifest repo url", "Manifest.toml", "[[deps.CSV]]\nversion = \"0.10.11\"\n", "[[deps.CSV]]\nrepo-url = \"https://git.juliapkgs.example/CSV.jl.git\"\nversion = \"0.10.11\"\n", KindSource},

		{"conda community channel added", "environment.yml", "channels:\n  - conda-forge\n", "channels:\n  - conda-forge\n  - bioconda\n", ""},
		{"conda pin bumped", "environment.yml", "channels:\n  - conda-forge\ndependencies:\n  - pandas=2.1\n", "channels:\n  - conda-forge\ndependencies:\n  - pandas=2.2\n", ""},
		{"conda dependency added", "environment.yml", "dependencies:\n  - pandas=2.1\n", "dependencies:\n  - pandas=2.1\n  - pyarrow=15.0\n", ""},
		{"dbt package bumped", "transform/packages.yml", "packages:\n  - package: dbt-labs/codegen\n    version: 0.12.1\n", "packages:\n  - package: dbt-labs/codegen\n    version: 0.13.0\n", ""},
		{"dbt git source to a tag", "transform/packages.yml", "packages:\n  - git: \"https://github.com/dbt-labs/dbt-codegen.git\"\n    revision: 0.12.1\n", "packages:\n  - git: \"https://github.com/dbt-labs/dbt-codegen.git\"\n    revision: 0.13.0\n", ""},
		{"spark defaults memory", "conf/spark-defaults.conf", "spark.executor.memory 4g\n", "spark.executor.memory 8g\n", ""},
		{"pixi channel kept", "pixi.toml", "[project]\nchannels = [\"conda-forge\"]\nname = \"a\"\n", "[project]\nchannels = [\"conda-forge\"]\nname = \"b\"\n", ""},
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
			if ch.Kind == KindSource {
				got = KindSource
			}
		}
		if got != c.want {
			t.Errorf("%s: got %q, want %q (%+v)", c.name, got, c.want, cs)
		}
	}
}

// TestDiffShape_InlineChannels: a channel list written on one line.
func TestDiffShape_InlineChannels(t *testing.T) {
	for _, c := range []struct {
		name, before, after string
		want                bool
	}{
		{"new user channel", "[project]\nchannels = [\"conda-forge\"]\n", "[project]\nchannels = [\"conda-forge\", \"lab-builds\"]\n", true},
		{"reordered", "[project]\nchannels = [\"conda-forge\", \"bioconda\"]\n", "[project]\nchannels = [\"bioconda\", \"conda-forge\"]\n", false},
	} {
		cs, err := Diff("pixi.toml", []byte(c.before), []byte(c.after))
		if err != nil {
			t.Fatal(err)
		}
		got := false
		for _, ch := range cs {
			got = got || ch.Kind == KindSource
		}
		if got != c.want {
			t.Errorf("%s: got %v, want %v (%+v)", c.name, got, c.want, cs)
		}
	}
}
