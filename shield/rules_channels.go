package shield

import (
	"path"
	"slices"
	"strings"
)

// Package channels named on a command line (rules 10; docs/shield-rules.md
// "supply-chain:source"): conda, mamba, micromamba and pixi fetch
// packages from channels named without a URL (`-c someone`, `conda config
// --add channels someone`, `pixi project channel add someone`): an
// owner's namespace on the ecosystem's host that anyone can register. A
// channel other than the ecosystem's own (defaults, conda-forge …) is a
// new source, as a URL would be; build files are judged by shape
// (manifest's channel lists).

// channelTools are the programs that take channels by name.
var channelTools = map[string]bool{"conda": true, "mamba": true, "micromamba": true, "pixi": true}

// knownChannels are the ecosystems' own channels.
var knownChannels = map[string]bool{"defaults": true, "nodefaults": true, "conda-forge": true, "main": true, "r": true,
	"msys2": true, "bioconda": true, "pytorch": true, "nvidia": true, "anaconda": true, "free": true, "pro": true}

// channelsNamed returns the channels a conda-family command line names.
func channelsNamed(argv []string) []string {
	var out []string
	a := argv[1:]
	for k := 0; k < len(a); k++ {
		w := a[k]
		if w == "run" || w == "exec" && path.Base(argv[0]) != "pixi" || w == "shell" {
			// rules 22: what follows run is the program's own words
			// (pixi run python -c …, conda run -n env python -c …)
			break
		}
		switch {
		case w == "-c" || w == "--channel" || w == "--add" || w == "--prepend" || w == "--append":
			if w != "-c" && w != "--channel" {
				// conda config --add channels X
				if k+2 < len(a) && (a[k+1] == "channels" || a[k+1] == "default_channels") {
					out = append(out, a[k+2])
					k += 2
				}
				continue
			}
			if k+1 < len(a) {
				out = append(out, a[k+1])
				k++
			}
		case strings.HasPrefix(w, "--channel="):
			out = append(out, strings.TrimPrefix(w, "--channel="))
		case strings.HasPrefix(w, "-c") && len(w) > 2 && !strings.HasPrefix(w, "--"):
			out = append(out, w[2:])
		case w == "channel" && k+2 < len(a) && a[k+1] == "add":
			// pixi project channel add X [Y …]
			out = append(out, a[k+2:]...)
			k = len(a)
		}
	}
	return out
}

// channelSource is `supply-chain:source` (escalate) for a channel named by
// a conda-family command that is not the ecosystem's own.
func (s *Shield) channelSource(_ *Action, f *Facts, j *judgement) {
	for i := range f.Runs {
		r := &f.Runs[i]
		if !channelTools[r.Name] || len(r.Argv) < 3 {
			continue
		}
		for _, c := range channelsNamed(r.Argv) {
			c = strings.Trim(c, `"'`)
			if c == "" || knownChannels[strings.ToLower(c)] || slices.Contains([]string{"-", "."}, c) {
				continue
			}
			j.escalate("supply-chain:source", "%s fetches packages from the channel %s, which is not the ecosystem's own: an owner's namespace anyone can register", quote(r.Line), clipText(c, 80))
			return
		}
	}
}
