package shield

import "testing"

// Rules 13: flags written into files — a verification turned off added to
// a written command, a lockfile's hold taken from an install it keeps.
func TestRules13_WrittenFlags(t *testing.T) {
	s := testShield()
	const src, none = "supply-chain:source", "heuristics:none"
	for _, c := range []struct{ name, p, old, new, want string }{
		{"cosign's transparency log off in a CI include", "ci/deploy.yml", "    - cosign sign-blob --yes --bundle s.bundle f", "    - cosign sign-blob --yes --tlog-upload=false --bundle s.bundle f", src},
		{"checksums off in an Earthfile", "Earthfile", "    RUN opam install . --deps-only -y", "    RUN opam install . --deps-only --no-checksums -y", src},
		{"--locked taken from an Earthfile install", "Earthfile", "    RUN opam install . --deps-only --locked -y", "    RUN opam install . --deps-only -y", src},
		{"--require-hashes taken in a Makefile", "Makefile", "\tpip install --require-hashes -r requirements.txt", "\tpip install -r requirements.txt", src},
		{"npm ci made npm install in a script", "scripts/bootstrap.sh", "cd web && npm ci", "cd web && npm install", src},
		{"--locked added", "Earthfile", "    RUN opam install . --deps-only -y", "    RUN opam install . --deps-only --locked -y", none},
		{"the line changed beyond the flag", "Earthfile", "    RUN opam install . --deps-only --locked -y", "    RUN opam install ./tools --deps-only -y --with-test", none},
		{"prose quoting the flag", "docs/install.md", "Run `opam install . --locked`.", "Run `opam install .` (add `--no-checksums` only offline).", none},
	} {
		v := rulesVerdict(s, editAct(c.p, c.old, c.new))
		if v.Rule != c.want {
			t.Errorf("%s: got %s %s (%s), want %s", c.name, v.Decision, v.Rule, v.Reason, c.want)
		}
	}
}

// Rules 13: lockfiles of more ecosystems edited by hand, and a base image
// swapped for another publisher's floating one (Apptainer definitions
// too).
func TestRules13_LocksAndImages(t *testing.T) {
	s := testShield()
	const pin, none = "supply-chain:pin-moved", "heuristics:none"
	for _, c := range []struct{ name, p, old, new, want string }{
		{"cabal freeze edited", "services/pricing/cabal.project.freeze", "any.aeson ==2.2.3.0", "any.aeson ==2.2.99.0", pin},
		{"opam lock forked by a suffix", "tools/recon/recon.opam.locked", `"xmlm" {= "1.4.0"}`, `"xmlm" {= "1.4.0~fork1"}`, pin},
		{"apptainer base swapped", "hpc/apptainer/train.def", "Bootstrap: docker\nFrom: nvcr.io/nvidia/pytorch:24.10-py3", "Bootstrap: docker\nFrom: docker.io/someone/pytorch-cuda:latest", pin},
		{"compose image swapped", "docker-compose.yml", "    image: postgres:16.4", "    image: someone/postgres:latest", pin},
		{"apptainer base bumped", "hpc/apptainer/train.def", "Bootstrap: docker\nFrom: nvcr.io/nvidia/pytorch:24.10-py3", "Bootstrap: docker\nFrom: nvcr.io/nvidia/pytorch:24.11-py3", none},
		{"a doc's version", "docs/unlock.md", "version 1.2.3", "version 1.2.4", none},
	} {
		v := rulesVerdict(s, editAct(c.p, c.old, c.new))
		if v.Rule != c.want {
			t.Errorf("%s: got %s %s (%s), want %s", c.name, v.Decision, v.Rule, v.Reason, c.want)
		}
	}
}
