package manifest

import (
	"strings"
)

// PatchFile is one file a unified diff (git apply, git am, patch)
// changes: its path as the patch names it (after the prefix strip) and
// the lines it adds, joined.
type PatchFile struct {
	Path  string
	Added string
}

// maxPatchFiles bounds the files Patch returns.
const maxPatchFiles = 64

// Patch returns the files a unified diff or a git mail-formatted patch
// changes, in order, each with the lines it adds. strip is patch's -p
// (git strips one component: a/ and b/); a negative strip means git's
// rule. The target of a hunk is the "+++" path ("/dev/null" means a
// deletion, whose path is the "---" one); a "diff --git a/X b/Y" header
// alone (a rename, a mode change) names Y. At most maxPatchFiles files,
// over at most MaxBytes of text.
func Patch(text string, strip int) []PatchFile {
	if len(text) > MaxBytes {
		text = text[:MaxBytes]
	}
	var out []PatchFile
	cur := -1
	var added []strings.Builder
	name := func(p string) string {
		p = strings.TrimSpace(p)
		if i := strings.IndexByte(p, '\t'); i >= 0 {
			p = p[:i] // a timestamp after the name
		}
		p = strings.Trim(p, `"`)
		if p == "/dev/null" {
			return ""
		}
		n := strip
		if n < 0 {
			n = 1
		}
		for ; n > 0; n-- {
			i := strings.IndexByte(p, '/')
			if i < 0 {
				break
			}
			p = p[i+1:]
		}
		return p
	}
	open := func(p string) {
		if p == "" {
			return
		}
		for i := range out {
			if out[i].Path == p {
				cur = i
				return
			}
		}
		if len(out) >= maxPatchFiles {
			cur = -1
			return
		}
		out = append(out, PatchFile{Path: p})
		added = append(added, strings.Builder{})
		cur = len(out) - 1
	}
	minus := ""
	for line := range strings.Lines(text) {
		line = strings.TrimRight(line, "\r\n")
		switch {
		case strings.HasPrefix(line, "diff --git "):
			f := strings.Fields(line)
			if len(f) >= 4 {
				open(name(f[3]))
			}
		case strings.HasPrefix(line, "--- "):
			minus = name(line[4:])
		case strings.HasPrefix(line, "+++ "):
			p := name(line[4:])
			if p == "" {
				p = minus
			}
			open(p)
		case strings.HasPrefix(line, "rename to "), strings.HasPrefix(line, "copy to "):
			_, p, _ := strings.Cut(line, " to ")
			open(strings.TrimSpace(p))
		case strings.HasPrefix(line, "+") && cur >= 0:
			added[cur].WriteString(line[1:])
			added[cur].WriteByte('\n')
		}
	}
	for i := range out {
		out[i].Added = added[i].String()
	}
	return out
}
