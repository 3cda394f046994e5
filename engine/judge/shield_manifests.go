package judge

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"regexp"
	"slices"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/opx-dev/opx/engine/executor"
	"github.com/opx-dev/opx/ledger/event"
	"github.com/opx-dev/opx/shield"
	"github.com/opx-dev/opx/shield/manifest"
)

// Manifests are the changes a file tool's write or edit makes to a file
// a toolchain reads to fetch or run code (shield/manifest): the file as
// it is before the call, read through FS as the executor would open it,
// and as the call would leave it, both parsed. Nil without FS, for a tool
// that writes no manifest, and for a call with no change (an edit whose
// text does not occur is refused by the executor anyway). A file over
// manifest.MaxBytes, or one that does not parse, is a change with an
// Error, which Shield asks about.
func (e ShieldEvaluator) Manifests(p Proposal) []event.ManifestChanges {
	if e.FS == nil {
		return nil
	}
	switch p.Tool {
	case "move_file":
		var args struct{ From, To string }
		if json.Unmarshal(p.Args, &args) != nil || args.From == "" || args.To == "" {
			return nil
		}
		return e.copied(p, args.From, args.To)
	case "execute_command":
		var args struct{ Command, Cwd string }
		if json.Unmarshal(p.Args, &args) != nil || args.Command == "" {
			return nil
		}
		var out []event.ManifestChanges
		cf := e.S.CommandFactsIn(args.Command, args.Cwd)
		out = append(out, e.patched(p, cf, args.Cwd)...)
		out = append(out, e.sedEdits(p, cf, args.Cwd)...)
		for _, r := range cf.Runs {
			src, dst, ok := copyOperands(r.Name, r.Argv)
			if !ok {
				continue
			}
			if args.Cwd != "" && !path.IsAbs(src) && !strings.HasPrefix(src, "~") {
				src = path.Join(args.Cwd, src)
			}
			if args.Cwd != "" && !path.IsAbs(dst) && !strings.HasPrefix(dst, "~") {
				dst = path.Join(args.Cwd, dst)
			}
			out = append(out, e.copied(p, src, dst)...)
			if len(out) >= 8 {
				break
			}
		}
		return out
	case "write_file", "edit_file":
	default:
		return nil
	}
	var args struct {
		Path, Content, Old, New string
		ReplaceAll              bool `json:"replace_all"`
	}
	if json.Unmarshal(p.Args, &args) != nil || args.Path == "" {
		return nil
	}
	rel, ok := e.workspaceRel(p, args.Path)
	if !ok {
		return nil // outside the workspace: the policy and tier 1 judge that
	}
	format := manifest.Format(rel)
	if format == "" {
		// A file the table does not know is judged by shape when what
		// the call writes reads like build configuration.
		format = manifest.Sniff(rel, []byte(args.Content+args.New))
	}
	var before []byte
	read := false
	if format == "" && p.Tool == "edit_file" && manifest.SniffCandidate(rel) {
		// An edit's few lines may not say what the file is: its text
		// does (a JSON manifest's registries around a changed URL;
		// rules 12). A file that cannot be read is not sniffed.
		b, err := e.readManifest(rel)
		if err == nil {
			before, read = b, true
			format = manifest.Sniff(rel, b)
		}
	}
	if format == "" {
		return nil
	}
	if !read {
		b, err := e.readManifest(rel)
		if err != nil {
			return []event.ManifestChanges{{Path: rel, Format: format, Error: err.Error()}}
		}
		before = b
	}
	var after []byte
	switch p.Tool {
	case "write_file":
		after = []byte(args.Content)
	case "edit_file":
		n := strings.Count(string(before), args.Old)
		if before == nil || args.Old == "" || n == 0 || (n > 1 && !args.ReplaceAll) {
			return nil // the executor refuses the edit: nothing changes
		}
		if !args.ReplaceAll {
			n = 1
		}
		after = []byte(strings.Replace(string(before), args.Old, args.New, n))
	}
	out, ok := e.manifestChange(rel, format, before, after)
	if !ok || len(out.Changes) == 0 && out.Error == "" {
		return nil
	}
	return []event.ManifestChanges{out}
}

// manifestChange is the change from before to after of the manifest at
// rel, both parsed; false when neither side could be judged as a
// manifest. Integrity pins dropped (a lockfile replaced by one with
// fewer, or an emptied go.sum) are a checksum change whatever else the
// diff finds.
func (e ShieldEvaluator) manifestChange(rel, format string, before, after []byte) (event.ManifestChanges, bool) {
	changes, err := manifest.DiffFormat(rel, format, before, after)
	if err != nil {
		return event.ManifestChanges{Path: rel, Format: format, Error: err.Error()}, true
	}
	changes = e.withinWorkspace(rel, changes)
	if b, a := pins(before), pins(after); a < b {
		changes = append(changes, manifest.Change{Kind: manifest.KindChecksum, Key: "integrity pins",
			Detail: fmt.Sprintf("%d of the %d recorded hashes are gone: what is fetched is no longer verified", b-a, b)})
	}
	out := event.ManifestChanges{Path: rel, Format: format, Changes: make([]event.ManifestChange, len(changes))}
	for i, c := range changes {
		out.Changes[i] = event.ManifestChange{Kind: c.Kind, Key: c.Key, Detail: c.Detail}
	}
	return out, true
}

// pinMarks are how lockfiles and checksum files record a hash: npm's
// "integrity", yarn's and pnpm's integrity, Cargo.lock's checksum, pip's
// --hash, Pipfile.lock's and poetry's hashes, go.sum's h1: lines.
var pinMarks = []string{`"integrity"`, "integrity ", "integrity:", "checksum = ", "--hash=", `"sha256:`, "hash = ", " h1:", "sha512-"}

// pins counts the hashes a lockfile records (the most any one mark
// counts: a file uses one form).
func pins(b []byte) int {
	n, text := 0, string(b) // one copy, not one per mark
	for _, m := range pinMarks {
		n = max(n, strings.Count(text, m))
	}
	return n
}

// copied is the change a copy, move or link of src over dst makes when
// dst is a manifest in the workspace: dst before, src's content after,
// both read through the workspace. A source outside the workspace (or
// unreadable) is a change that cannot be judged. Observed with no change
// (a backup put back) it is recorded with no changes, so Shield knows it
// was looked at.
func (e ShieldEvaluator) copied(p Proposal, src, dst string) []event.ManifestChanges {
	rel, ok := e.workspaceRel(p, dst)
	if !ok {
		return nil
	}
	format := manifest.Format(rel)
	if format == "" || format == "go-source" {
		return nil
	}
	from, ok := e.workspaceRel(p, src)
	if !ok {
		return []event.ManifestChanges{{Path: rel, Format: format, Error: "its content comes from " + src + ", outside the workspace, which the engine does not read"}}
	}
	before, err := e.readManifest(rel)
	if err != nil {
		return []event.ManifestChanges{{Path: rel, Format: format, Error: err.Error()}}
	}
	after, err := e.readManifest(from)
	if err != nil {
		return []event.ManifestChanges{{Path: rel, Format: format, Error: err.Error()}}
	}
	if after == nil {
		return []event.ManifestChanges{{Path: rel, Format: format, Error: src + " does not exist before the call: what it will hold is not known"}}
	}
	out, _ := e.manifestChange(rel, format, before, after)
	return []event.ManifestChanges{out}
}

// patched is the changes a patch read from a workspace file (git apply
// FILE, git am FILE, patch -i FILE, patch < FILE) makes to the manifests
// it targets: each target's added lines parsed as that manifest (as
// Shield judges a fragment a command writes), an error when they do not
// parse. The patch is read as a manifest is (regular file, at most
// manifest.MaxBytes); one that cannot be read is left to Shield, which
// judges the tree the command writes.
func (e ShieldEvaluator) patched(p Proposal, cf shield.Facts, cwd string) []event.ManifestChanges {
	var files []string
	for _, r := range cf.Runs {
		switch {
		case r.Name == "git" && (slices.Contains(r.Argv, "apply") || slices.Contains(r.Argv, "am")):
			seen := false
			for _, a := range r.Argv[1:] {
				if a == "apply" || a == "am" {
					seen = true
					continue
				}
				if seen && !strings.HasPrefix(a, "-") {
					files = append(files, a)
				}
			}
		case r.Name == "patch":
			for k, a := range r.Argv {
				if (a == "-i" || a == "--input") && k+1 < len(r.Argv) {
					files = append(files, r.Argv[k+1])
				}
			}
			for _, rd := range cf.Reads {
				if rd.By == "patch" || rd.By == "redirect" && (strings.HasSuffix(rd.Path, ".patch") || strings.HasSuffix(rd.Path, ".diff")) {
					files = append(files, rd.Path)
				}
			}
		}
	}
	var out []event.ManifestChanges
	for _, f := range files {
		if cwd != "" && !path.IsAbs(f) && !strings.HasPrefix(f, "~") {
			f = path.Join(cwd, f)
		}
		rel, ok := e.workspaceRel(p, f)
		if !ok {
			continue
		}
		text, err := e.readManifest(rel)
		if err != nil || text == nil {
			continue
		}
		for _, pf := range manifest.Patch(string(text), -1) {
			format := manifest.Format(pf.Path)
			if format == "" || format == "go-source" && !strings.Contains(pf.Added, "go:generate") {
				continue
			}
			changes, err := manifest.Diff(pf.Path, nil, []byte(pf.Added))
			if err != nil {
				out = append(out, event.ManifestChanges{Path: pf.Path, Format: format, Error: "the patch " + rel + " adds lines Shield cannot judge as part of it: " + err.Error()})
				continue
			}
			changes = e.withinWorkspace(pf.Path, changes)
			if len(changes) == 0 {
				continue
			}
			m := event.ManifestChanges{Path: pf.Path, Format: format}
			for _, c := range changes {
				m.Changes = append(m.Changes, event.ManifestChange{Kind: c.Kind, Key: c.Key, Detail: c.Detail})
			}
			out = append(out, m)
		}
		if len(out) >= 16 {
			break
		}
	}
	return out
}

// sedEdits is the change a `sed -i 's/RE/NEW/[g]' FILE...` makes to
// the manifests it edits, when the script is one substitution Go's
// regexp can run as sed would (sedSubst): applied line by line to the
// file as read, both sides parsed. Any other sed script is left to Shield,
// which asks about it.
func (e ShieldEvaluator) sedEdits(p Proposal, cf shield.Facts, cwd string) []event.ManifestChanges {
	var out []event.ManifestChanges
	for _, r := range cf.Runs {
		if r.Name != "sed" && r.Name != "gsed" {
			continue
		}
		inPlace, ere, script, files := false, false, "", []string(nil)
		for k := 1; k < len(r.Argv); k++ {
			a := r.Argv[k]
			switch {
			case a == "-i" || strings.HasPrefix(a, "-i") || a == "--in-place" || strings.HasPrefix(a, "--in-place="):
				inPlace = true
			case a == "-e" || a == "--expression":
				if script != "" || k+1 >= len(r.Argv) {
					script = "\x00" // several scripts: not a single substitution
				} else {
					script = r.Argv[k+1]
				}
				k++
			case a == "-E" || a == "-r" || a == "--regexp-extended":
				ere = true
			case a == "-s" || a == "--separate":
			case strings.HasPrefix(a, "-"):
				script = "\x00" // an option Shield does not model
			case script == "":
				script = a
			default:
				files = append(files, a)
			}
		}
		re, repl, global, ok := sedSubst(script, ere)
		if !inPlace || !ok || len(files) == 0 {
			continue
		}
		for _, f := range files {
			if cwd != "" && !path.IsAbs(f) && !strings.HasPrefix(f, "~") {
				f = path.Join(cwd, f)
			}
			rel, ok := e.workspaceRel(p, f)
			if !ok {
				continue
			}
			format := manifest.Format(rel)
			if format == "" || format == "go-source" {
				continue
			}
			before, err := e.readManifest(rel)
			if err != nil || before == nil {
				continue // Shield asks about what it cannot compute
			}
			var b strings.Builder
			for line := range strings.Lines(string(before)) {
				body, nl := strings.CutSuffix(line, "\n")
				if global {
					body = re.ReplaceAllString(body, repl)
				} else if loc := re.FindStringIndex(body); loc != nil {
					body = body[:loc[0]] + re.ReplaceAllString(body[loc[0]:loc[1]], repl) + body[loc[1]:]
				}
				b.WriteString(body)
				if nl {
					b.WriteByte('\n')
				}
			}
			m, _ := e.manifestChange(rel, format, before, []byte(b.String()))
			out = append(out, m)
		}
	}
	return out
}

// sedSubst reads a sed script that is one substitution,
// s<d>RE<d>NEW<d>[g], as a Go expression and its replacement: a basic
// (or, with ere, extended) expression of plain characters, ".", "*",
// brackets and anchors; false for back-references, GNU's \( \{ \| \+
// \? in a basic one, or flags other than g.
func sedSubst(script string, ere bool) (re *regexp.Regexp, repl string, global, ok bool) {
	if len(script) < 4 || script[0] != 's' {
		return nil, "", false, false
	}
	d := script[1]
	if d == '\\' || d == '\n' || d == ' ' {
		return nil, "", false, false
	}
	var parts []string
	var cur strings.Builder
	for i := 2; i < len(script); i++ {
		c := script[i]
		inRE := len(parts) == 0
		switch {
		case c == '\\' && i+1 < len(script):
			i++
			n := script[i]
			switch {
			case n >= '0' && n <= '9':
				return nil, "", false, false // a back-reference
			case n == d:
				if inRE {
					cur.WriteString(regexp.QuoteMeta(string(n)))
				} else {
					cur.WriteByte(n)
				}
			case inRE && !ere && strings.IndexByte("(){}|+?", n) >= 0:
				return nil, "", false, false // GNU's basic operators
			case inRE:
				cur.WriteString(regexp.QuoteMeta(string(n)))
			case n == 'n':
				cur.WriteByte('\n')
			default:
				cur.WriteByte(n)
			}
		case c == d:
			parts = append(parts, cur.String())
			cur.Reset()
		case inRE && !ere && strings.IndexByte("+?(){}|", c) >= 0:
			cur.WriteString(regexp.QuoteMeta(string(c)))
		case !inRE && c == '&':
			cur.WriteString("${0}")
		case !inRE && c == '$':
			cur.WriteString("$$")
		default:
			cur.WriteByte(c)
		}
	}
	if len(parts) != 2 || parts[0] == "" {
		return nil, "", false, false
	}
	switch cur.String() {
	case "":
	case "g":
		global = true
	default:
		return nil, "", false, false
	}
	re, err := regexp.Compile(parts[0])
	if err != nil {
		return nil, "", false, false
	}
	return re, parts[1], global, true
}

// copyOperands returns the source and destination of a cp, mv, ln,
// install or rsync that copies one file to one destination (options and
// their values skipped); false for any other form (several sources, -t).
func copyOperands(name string, argv []string) (src, dst string, ok bool) {
	switch name {
	case "cp", "mv", "ln", "install", "rsync":
	default:
		return "", "", false
	}
	valued := map[string]bool{"-m": true, "--mode": true, "-o": true, "--owner": true, "-g": true, "--group": true, "-S": true,
		"--suffix": true, "-e": true, "--rsh": true, "--exclude": true, "--include": true, "--filter": true, "-f": name == "rsync", "--chmod": true}
	var ops []string
	dashed := false
	for k := 1; k < len(argv); k++ {
		a := argv[k]
		switch {
		case dashed:
			ops = append(ops, a)
		case a == "--":
			dashed = true
		case a == "-t" || strings.HasPrefix(a, "--target-directory"):
			return "", "", false
		case valued[a]:
			k++
		case strings.HasPrefix(a, "-") && a != "-":
		default:
			ops = append(ops, a)
		}
	}
	if len(ops) != 2 {
		return "", "", false
	}
	return ops[0], ops[1], true
}

// workspaceRel is the workspace-relative path a tool's path argument
// names, where it leads through symlinks (p.Links) when it does; false
// when that is outside the workspace.
func (e ShieldEvaluator) workspaceRel(p Proposal, raw string) (string, bool) {
	ws := e.S.ResolvePath(".")
	abs := e.S.ResolvePath(raw)
	to, ok := p.Links[raw]
	if !ok {
		to, ok = p.Links[abs] // a command's paths are recorded absolute
	}
	if ok {
		if path.IsAbs(to) {
			abs = to
		} else {
			abs = path.Join(ws, to)
		}
	}
	rel, ok := strings.CutPrefix(abs, ws+"/")
	return rel, ok && rel != ""
}

// readManifest reads a workspace file of at most manifest.MaxBytes: nil
// when it does not exist. It opens without blocking and reads only a
// regular file (a FIFO named go.mod must not hang the engine's verdict).
func (e ShieldEvaluator) readManifest(rel string) ([]byte, error) {
	f, err := e.FS.Open(rel, unix.O_RDONLY|unix.O_NONBLOCK|unix.O_NOCTTY, 0)
	if err != nil {
		var pe *executor.PathError
		if errors.Is(err, fs.ErrNotExist) || errors.As(err, &pe) && pe.Errno == unix.ENOENT {
			return nil, nil
		}
		return nil, fmt.Errorf("%s could not be read before the change to judge it: %v", rel, err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file: its change cannot be judged", rel)
	}
	if st.Size() > manifest.MaxBytes {
		return nil, fmt.Errorf("%s is %d bytes, over the %d Shield parses", rel, st.Size(), manifest.MaxBytes)
	}
	b, err := io.ReadAll(io.LimitReader(f, manifest.MaxBytes+1))
	if err != nil {
		return nil, err
	}
	if len(b) > manifest.MaxBytes {
		return nil, fmt.Errorf("%s grew over the %d bytes Shield parses", rel, manifest.MaxBytes)
	}
	return b, nil
}

// withinWorkspace drops the changes that point at a directory inside
// the workspace (a go.mod replace or go.work use of a sibling module, a
// path dependency on a crate of the same repository): the workspace's
// own code is judged where it is written, not where it is used.
func (e ShieldEvaluator) withinWorkspace(rel string, cs []manifest.Change) []manifest.Change {
	ws := e.S.ResolvePath(".")
	out := cs[:0]
	for _, c := range cs {
		if dir := c.Local; dir != "" && !strings.HasPrefix(dir, "~") {
			target := path.Join(ws, path.Dir(rel), dir)
			if path.IsAbs(dir) {
				target = path.Clean(dir)
			}
			if target == ws || strings.HasPrefix(target, ws+"/") {
				continue
			}
		}
		out = append(out, c)
	}
	return out
}

// supplyOf is what p changes in manifests (p.Manifests, as observed and
// recorded) as Shield's facts.
func supplyOf(ws string, p Proposal) []shield.Supply {
	var out []shield.Supply
	for _, m := range p.Manifests {
		at := path.Join(ws, m.Path)
		if m.Error != "" {
			out = append(out, shield.Supply{Path: at, By: p.Tool, Error: m.Error})
			continue
		}
		if len(m.Changes) == 0 {
			// Observed, no change (a copy of what is there): a marker
			// with no kind, which Shield judges as looked at.
			out = append(out, shield.Supply{Path: at, By: p.Tool})
		}
		for _, c := range m.Changes {
			out = append(out, shield.Supply{Path: at, Kind: c.Kind, Key: c.Key, Detail: c.Detail, By: p.Tool})
		}
	}
	return out
}
