package shield

import (
	"path"
	"strings"
)

// Prebuilt binaries linked into the build (rules 12, issue 27 ninth pass;
// docs/shield-rules.md "supply-chain:prebuilt"). A build file that starts
// linking, loading or shipping a compiled library or executable it did
// not name before (a .lib, .dll, .so, .a, .dylib, .jar, .aar, .node, a
// framework) brings in code nobody can review: no source, no lockfile
// entry, no checksum. Escalate. A library named without a file (`-lz`,
// `pthread`, a package coordinate) is a dependency the package manager
// judges.

var (
	buildLangFile = mustRx(`(?i)\.build\.cs$|^cmakelists\.txt$|\.cmake$|^build(?:\.bazel)?$|\.bzl$|^build\.gradle(?:\.kts)?$|\.csproj$|\.vcxproj$|\.fsproj$|\.props$|\.targets$|^meson\.build$|^build\.rs$|^binding\.gyp$|^setup\.py$|^package\.swift$|\.podspec$|\.uplugin$|\.pro$|^sconstruct$|^premake\d*\.lua$|^xmake\.lua$|^build\.zig$`)
	prebuiltRef   = mustRx(`(?i)[\w$(){}./\\-]*[/\\"'(][\w.+-]{1,80}\.(?:lib|dll|so(?:\.\d+){0,3}|a|dylib|jar|aar|node|framework|xcframework)\b`)
)

// prebuiltLinked is `supply-chain:prebuilt` (escalate).
func (s *Shield) prebuiltLinked(a *Action, f *Facts, j *judgement) {
	for _, t := range f.Texts {
		p, ok := strings.CutPrefix(t.Source, "content:")
		if !ok || !buildLangFile.MatchString(path.Base(p)) || testSource(p) {
			continue
		}
		added, old := textOf(f, p)
		plus, _ := diffLines(added, old)
		oldText := clipRaw(old, maxAppsecText)
		for _, l := range plus {
			for _, m := range prebuiltRef.FindAllString(clipRaw(l, 4096), 4) {
				name := path.Base(strings.ReplaceAll(m, `\`, "/"))
				name = strings.TrimLeft(name, `"'(`)
				if name == "" || strings.Contains(oldText, name) {
					continue
				}
				j.escalate("supply-chain:prebuilt", "%s makes %s link or ship %s, a prebuilt binary it did not name before: code with no source to review (%s)", toolName(a), s.relPath(p), name, clipText(l, 80))
				return
			}
		}
	}
}
