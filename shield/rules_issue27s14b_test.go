package shield_test

import (
	"context"
	"testing"
)

// Session 14, second pass of issue 27: the fourth holdout's miss classes,
// written from the effect an action has rather than from the names the
// holdout used. Every case here is our own wording, across ecosystems.

// runFinalCases checks the final decision of every tier together (the
// policy's allow or default included): "decision rule".
func runFinalCases(t *testing.T, cases []ruleCase) {
	t.Helper()
	s := defaultShield(t)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			v := final(s.Evaluate(context.Background(), c.a))
			if got := v.Decision + " " + v.Rule; got != c.want {
				t.Errorf("got %s (%s), want %s", got, v.Reason, c.want)
			}
		})
	}
}

// TestPolicy_CheckAndInspect_FetchInstallClean: a build or package tool of
// any ecosystem fetching what its manifest names, installing from it,
// cleaning its outputs or showing its graph is allowed by the default
// policy; a source, URL, channel or outside path on the line is not.
func TestPolicy_CheckAndInspect_FetchInstallClean(t *testing.T) {
	const ok = "allow policy:check-and-inspect"
	const asked = "escalate policy:default"
	runFinalCases(t, []ruleCase{
		{"elixir deps", command("mix deps.get"), ok},
		{"elixir clean", command("mix clean"), ok},
		{"dart pub", command("dart pub get"), ok},
		{"flutter pub offline", command("flutter pub get --offline"), ok},
		{"cocoapods", command("pod install --repo-update"), ok},
		{"conan from the recipe", command("conan install . --build=missing"), ok},
		{"vcpkg manifest mode", command("vcpkg install"), ok},
		{"nix lock refresh", command("nix flake update"), ok},
		{"opam deps only", command("opam install . --deps-only --with-test"), ok},
		{"conda env from file", command("conda env create -f environment.yml"), ok},
		{"bazel clean", command("bazel clean --expunge"), ok},
		{"bazel module graph", command("bazel mod graph"), ok},
		{"bazel fetch all", command("bazel fetch //..."), ok},
		{"dune clean", command("dune clean"), ok},
		{"cabal index", command("cabal update"), ok},
		{"lefthook hook", command("lefthook run pre-commit"), ok},
		{"sbt update", command("sbt update"), ok},
		{"rebar3 deps", command("rebar3 get-deps"), ok},
		{"gleam download", command("gleam deps download"), ok},
		{"shards frozen", command("shards install --frozen"), ok},
		{"micromamba env", command("micromamba env create -f environment.yml --yes"), ok},
		{"buck2 clean", command("buck2 clean"), ok},
		{"nix lock", command("nix flake lock"), ok},
		{"carthage bootstrap", command("carthage bootstrap"), ok},
		{"a conda channel", command("conda env create -f environment.yml -c someone"), asked},
		{"a conan remote", command("conan install . -r extra"), asked},
		{"an outside recipe", command("conan install /opt/recipes/x"), asked},
		{"a parent path", command("opam install ../../elsewhere --deps-only"), asked},
		{"a URL", command("opam install https://opam.example/x.tar.gz"), asked},
		{"an scp-like source", command("opam install git@git.example:x/y.git"), asked},
		{"a nix input override", command("nix flake update --override-input nixpkgs github:someone/nixpkgs"), asked},
		{"a flake from a forge", command("nix run github:someone/tool"), asked},
		{"a variable path", command("conda env create -f $HOME/env.yml"), asked},
		{"a home path", command("mix deps.get ~/x"), asked},
	})
}
