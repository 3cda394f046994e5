package manifest

import (
	"bytes"
	"errors"
	"fmt"
	"path"
	"regexp"
	"sort"
	"strings"
	"unicode/utf8"
)

// MaxBytes is the largest file Diff parses; a larger side yields ErrTooLarge.
const MaxBytes = 1 << 20

// ErrTooLarge is returned by Diff when a side is over MaxBytes.
var ErrTooLarge = errors.New("manifest: file too large to judge")

// errTooMany is returned when a side holds more entries than a judge examines.
var errTooMany = errors.New("manifest: too many entries to judge")

// The kinds of Change.
const (
	KindSource   = "source"   // where code comes from is redirected
	KindRuns     = "runs"     // code run at build/install/test time is added or changed
	KindChecksum = "checksum" // verification turned off or a recorded hash changed
)

// Change is one judged difference.
type Change struct {
	Kind   string // KindSource, KindRuns or KindChecksum
	Key    string // what changed, e.g. "replace golang.org/x/net", "scripts.postinstall"
	Detail string // one human line, values clipped
	// Local, for a KindSource change, is the local directory the source
	// now is, as written (relative to the file's directory, or
	// absolute): a replace or use of a directory, a path dependency.
	// The caller decides whether it leaves the workspace.
	Local string
}

const (
	maxEntries = 10000  // entries examined per side
	maxLines   = 100000 // lines scanned per side by the line-based readers
	maxChanges = 32     // changes returned
	maxValue   = 120    // bytes of a value shown
	maxDepth   = 32     // nesting walked in trees
)

// Format names the kind of file p is, or "" when no toolchain reads it to
// fetch or run code.
func Format(p string) string {
	p = strings.ReplaceAll(p, "\\", "/")
	base := path.Base(p)
	dir := path.Base(path.Dir(p))
	switch base {
	case "go.mod", "go.work", "go.sum", "package.json", "package-lock.json",
		"npm-shrinkwrap.json", "yarn.lock", "pnpm-lock.yaml", "Cargo.toml",
		"Cargo.lock", "pyproject.toml", "Pipfile", "Pipfile.lock", "poetry.lock",
		"uv.lock", "setup.cfg", "setup.py", "Gemfile", "Gemfile.lock",
		"conftest.py", "build.rs":
		return base
	case "gems.rb":
		return "Gemfile"
	case "gems.locked":
		return "Gemfile.lock"
	case ".npmrc":
		return "npmrc"
	case ".yarnrc.yml", ".yarnrc.yaml", ".yarnrc":
		return "yarnrc"
	case "pip.conf", "pip.ini":
		return "pip-conf"
	case ".pypirc":
		return "pypirc"
	case ".gemrc":
		return "gemrc"
	case "sitecustomize.py", "usercustomize.py":
		return "sitecustomize"
	case ".pre-commit-config.yaml", ".pre-commit-config.yml":
		return "pre-commit"
	case "config.toml", "config":
		switch dir {
		case ".cargo":
			return "cargo-config"
		case ".bundle":
			if base == "config" {
				return "bundle-config"
			}
		}
		return ""
	}
	switch {
	case strings.HasSuffix(base, ".go"):
		return "go-source"
	case strings.HasSuffix(base, ".pth"):
		return "pth"
	case strings.HasSuffix(base, ".txt") && (strings.HasPrefix(base, "requirements") || strings.HasPrefix(base, "constraints")):
		return "requirements"
	case dir == "requirements" && (strings.HasSuffix(base, ".in") || strings.HasSuffix(base, ".txt")):
		return "requirements"
	}
	if buildFile(p) != "" {
		return ShapeFormat
	}
	return ""
}

// Diff parses before (nil: the file is new) and after (nil: deleted) as
// Format(p) and returns the changes, sorted, deduplicated, at most 32. An
// error means a side could not be parsed.
func Diff(p string, before, after []byte) ([]Change, error) {
	if len(before) > MaxBytes || len(after) > MaxBytes {
		return nil, ErrTooLarge
	}
	return DiffFormat(p, Format(p), before, after)
}

// DiffFormat is Diff with the format given: ShapeFormat for a file Sniff
// recognized by its content.
func DiffFormat(p, f string, before, after []byte) ([]Change, error) {
	if len(before) > MaxBytes || len(after) > MaxBytes {
		return nil, ErrTooLarge
	}
	if f == "" || after == nil {
		return nil, nil
	}
	base := path.Base(strings.ReplaceAll(p, "\\", "/"))
	before, after = bytes.TrimPrefix(before, bom), bytes.TrimPrefix(after, bom)
	if structured[f] {
		for _, side := range [][]byte{before, after} {
			if err := checkNesting(side, f); err != nil {
				return nil, err
			}
		}
	}
	var out []Change
	var err error
	switch f {
	case "setup.py", "conftest.py", "build.rs", "sitecustomize", "pth":
		out, err = diffCode(f, base, before, after)
	case "go-source":
		out, err = diffVia(before, after, goSourceFacts)
	case "go.sum":
		out, err = diffVia(before, after, goSumFacts)
	case "go.mod":
		out, err = diffVia(before, after, goModFacts)
	case "go.work":
		out, err = diffVia(before, after, goWorkFacts)
	case "package.json":
		out, err = diffVia(before, after, packageJSONFacts)
	case "package-lock.json", "npm-shrinkwrap.json":
		out, err = diffLock(before, after, npmLock, npmDefaults)
	case "yarn.lock":
		out, err = diffLock(before, after, yarnLock, npmDefaults)
	case "pnpm-lock.yaml":
		out, err = diffLock(before, after, pnpmLock, npmDefaults)
	case "npmrc":
		out, err = diffVia(before, after, npmrcFacts)
	case "yarnrc":
		if base == ".yarnrc" {
			out, err = diffVia(before, after, yarnrcV1Facts)
		} else {
			out, err = diffVia(before, after, yarnrcFacts)
		}
	case "Cargo.toml":
		out, err = diffVia(before, after, cargoTomlFacts)
	case "Cargo.lock":
		out, err = diffLock(before, after, cargoLock, cargoDefaults)
	case "cargo-config":
		out, err = diffVia(before, after, cargoConfigFacts)
	case "requirements":
		out, err = diffVia(before, after, requirementsFacts)
	case "pyproject.toml":
		out, err = diffVia(before, after, pyprojectFacts)
	case "Pipfile":
		out, err = diffVia(before, after, pipfileFacts)
	case "Pipfile.lock":
		out, err = diffPipfileLock(before, after)
	case "poetry.lock":
		out, err = diffLock(before, after, poetryLock, pyDefaults)
	case "uv.lock":
		out, err = diffLock(before, after, uvLock, pyDefaults)
	case "setup.cfg":
		out, err = diffVia(before, after, setupCfgFacts)
	case "pip-conf":
		out, err = diffVia(before, after, pipConfFacts)
	case "pypirc":
		out, err = diffVia(before, after, pypircFacts)
	case "Gemfile":
		out, err = diffVia(before, after, gemfileFacts)
	case "Gemfile.lock":
		out, err = diffVia(before, after, gemfileLockFacts)
	case "gemrc":
		out, err = diffVia(before, after, gemrcFacts)
	case "bundle-config":
		out, err = diffVia(before, after, bundleConfigFacts)
	case "pre-commit":
		out, err = diffVia(before, after, preCommitFacts)
	case ShapeFormat:
		out, err = diffShape(p, before, after)
	default:
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	out = append(out, rules29Changes(p, f, before, after)...)
	return finish(out), nil
}

var bom = []byte("\xef\xbb\xbf")

// fact is one judged thing a side of a file holds.
type fact struct {
	kind string
	val  string // shown
	cmp  string // compared; val when empty
	flag bool   // reportable when added or changed
	// changedOnly: report only when it existed before with another cmp.
	changedOnly bool
	local       string // Change.Local
}

func (f fact) key() string {
	if f.cmp != "" {
		return f.cmp
	}
	return f.val
}

// facts collects a side's facts, bounded.
type facts struct {
	m    map[string]fact
	over bool
}

func newFacts() *facts { return &facts{m: map[string]fact{}} }

func (fs *facts) set(k string, f fact) {
	if len(fs.m) >= maxEntries {
		fs.over = true
		return
	}
	fs.m[k] = f
}

// add sets a reportable fact.
func (fs *facts) add(kind, k, v string) { fs.set(k, fact{kind: kind, val: v, flag: true}) }

// note sets a fact that is not itself reportable but shows what was.
func (fs *facts) note(k, v string) { fs.set(k, fact{val: v}) }

type factFunc func(data []byte, fs *facts) error

// diffVia extracts facts from both sides and reports the flagged ones
// added or changed.
func diffVia(before, after []byte, fn factFunc) ([]Change, error) {
	b, a := newFacts(), newFacts()
	if before != nil {
		if err := fn(before, b); err != nil {
			return nil, err
		}
	}
	if err := fn(after, a); err != nil {
		return nil, err
	}
	return diffFacts(b, a)
}

func diffFacts(b, a *facts) ([]Change, error) {
	if a.over || b.over {
		return nil, errTooMany
	}
	var out []Change
	for k, f := range a.m {
		if !f.flag {
			continue
		}
		bf, ok := b.m[k]
		if ok && bf.key() == f.key() && (bf.flag || bf.kind == f.kind) {
			continue
		}
		if f.changedOnly && !ok {
			continue
		}
		d := "now " + clip(f.val)
		if ok {
			d += " (was " + clip(bf.val) + ")"
		} else {
			d += " (new)"
		}
		out = append(out, Change{Kind: f.kind, Key: clean(k), Detail: d, Local: f.local})
	}
	return out, nil
}

// finish sorts, deduplicates and bounds the changes.
func finish(cs []Change) []Change {
	if len(cs) == 0 {
		return nil
	}
	for i := range cs {
		cs[i].Key = clip(cs[i].Key)
		cs[i].Detail = clean(cs[i].Detail)
	}
	sort.Slice(cs, func(i, j int) bool {
		if cs[i].Kind != cs[j].Kind {
			return cs[i].Kind < cs[j].Kind
		}
		if cs[i].Key != cs[j].Key {
			return cs[i].Key < cs[j].Key
		}
		return cs[i].Detail < cs[j].Detail
	})
	out := cs[:1]
	for _, c := range cs[1:] {
		if c != out[len(out)-1] {
			out = append(out, c)
		}
	}
	if len(out) > maxChanges {
		n := len(out) - (maxChanges - 1)
		out = append(out[:maxChanges-1], Change{Kind: out[maxChanges-1].Kind, Key: "(more)", Detail: fmt.Sprintf("%d more changes not listed", n)})
	}
	return out
}

// clean replaces control characters and invalid UTF-8 so a value stays one line.
func clean(s string) string {
	ok := true
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c == 0x7f {
			ok = false
			break
		}
	}
	if ok && utf8.ValidString(s) {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		if r < 0x20 || r == 0x7f || r == utf8.RuneError {
			b.WriteByte('?')
		} else {
			b.WriteRune(r)
		}
	}
	return b.String()
}

// clip shortens a value to about maxValue bytes on a rune boundary.
func clip(s string) string {
	s = clean(s)
	if len(s) <= maxValue {
		return s
	}
	i := maxValue
	for i > 0 && !utf8.RuneStart(s[i]) {
		i--
	}
	return s[:i] + "…"
}

// diffCode judges a file that is itself code run by a toolchain: any new
// content or change is KindRuns.
func diffCode(f, base string, before, after []byte) ([]Change, error) {
	if !utf8.Valid(after) || strings.IndexByte(string(after), 0) >= 0 {
		return nil, fmt.Errorf("manifest: %s: not text", f)
	}
	if before != nil && string(before) == string(after) {
		return nil, nil
	}
	if (f == "conftest.py" || f == "build.rs") && !addsCapability(f, before, after) {
		// rules 16: what the change adds can reach nothing beyond the
		// test or the build (a fixture returning a value, a cargo:
		// directive): no process, network, file write, environment,
		// dynamic code or decoding — not reported
		return nil, nil
	}
	d := "changed; run by " + runner(f)
	if before == nil {
		d = "new; run by " + runner(f)
	}
	return []Change{{Kind: KindRuns, Key: base, Detail: d}}, nil
}

// capability is what added code can do beyond computing values, by
// language: run processes, reach the network, write or remove files,
// read the environment, load or evaluate code, decode hidden data.
var capability = map[string]*regexp.Regexp{
	"conftest.py": regexp.MustCompile(`\b(?:import|from)\s+(?:os|subprocess|socket|urllib\d?|requests|httpx|http|ftplib|smtplib|ctypes|importlib|pickle|marshal|base64|codecs|shutil|pty|telnetlib|paramiko|boto3|builtins|runpy|zipimport|webbrowser)\b|\b(?:exec|eval|compile|__import__|getattr|setattr|open|system|popen|urlopen|b64decode|fromhex)\s*\(|\bos\.|\bsubprocess\b|\benviron\b|\.write_(?:text|bytes)\(|\bmonkeypatch\.setenv\(|\bsys\.(?:modules|path|meta_path|settrace|setprofile)\b|\bpytest_(?:configure|sessionstart|sessionfinish|load_initial_conftests|collection\w*|runtest\w*|unconfigure)\b`),
	"build.rs":    regexp.MustCompile(`\bstd::process\b|\bCommand::new\b|\bprocess::Command\b|\bstd::net\b|\bTcpStream\b|\bUdpSocket\b|\breqwest\b|\bureq\b|\bcurl\b|\bhyper\b|\bfs::(?:write|remove\w*|create\w*|copy|rename|set_permissions)\b|\bFile::(?:create|options)\b|\bOpenOptions\b|\binclude_bytes!|\bunsafe\b|\blibloading\b|\bdownload\b|\bbase64\b|\bfrom_utf8\b|\benv::var(?:_os)?\(\s*"(?:HOME|USER|PATH|SSH\w*|AWS\w*|GITHUB\w*|\w*TOKEN\w*|\w*SECRET\w*|\w*KEY\w*)"|\benv::vars\b|cargo:rustc-link-(?:arg|search)=[^"\n]*(?:/tmp|\.\.|https?:)|cargo:rustc-env=`),
}

// AddsCapability reports whether the lines after adds to a conftest.py
// or build.rs (f, the base name) do anything beyond computing values
// (addsCapability); for any other file it reports true.
func AddsCapability(f string, before, after []byte) bool { return addsCapability(f, before, after) }

// addsCapability reports whether the lines after adds (those before does
// not hold) do any of what capability names for f; a file too large to
// read counts as doing it.
func addsCapability(f string, before, after []byte) bool {
	re := capability[f]
	if re == nil || len(after) > maxCodeRead || len(before) > maxCodeRead {
		return true
	}
	had := map[string]int{}
	for _, l := range strings.Split(string(before), "\n") {
		had[strings.TrimSpace(l)]++
	}
	// names the file binds from a capable module (from subprocess import
	// run; import os as o): an added line that uses one is capable too
	var bound []string
	if f == "conftest.py" {
		for _, m := range pyCapableImport.FindAllStringSubmatch(string(after), 64) {
			for _, n := range strings.Split(m[1]+","+m[2], ",") {
				n = strings.TrimSpace(n)
				if _, as, ok := strings.Cut(n, " as "); ok {
					n = strings.TrimSpace(as)
				}
				if n != "" && n != "*" {
					bound = append(bound, n)
				}
			}
		}
	}
	for _, l := range strings.Split(string(after), "\n") {
		t := strings.TrimSpace(l)
		if had[t] > 0 {
			had[t]--
			continue
		}
		if re.MatchString(t) {
			return true
		}
		for _, n := range bound {
			if wordIn(t, n) {
				return true
			}
		}
	}
	return false
}

// pyCapableImport binds names from a capable module: from MOD import
// a, b (group 1) or import MOD as x (group 2).
var pyCapableImport = regexp.MustCompile(`(?m)^\s*(?:from\s+(?:os|subprocess|socket|urllib\d?(?:\.\w+)?|requests|httpx|http(?:\.\w+)?|shutil|pty|ctypes|importlib|pickle|base64|codecs|builtins|runpy)\s+import\s+\(?([\w ,]+)\)?|import\s+(?:os|subprocess|socket|requests|httpx|shutil|pickle|base64|ctypes|importlib)\s+as\s+(\w+))`)

// wordIn reports whether w occurs in s as a whole identifier.
func wordIn(s, w string) bool {
	for i := 0; ; {
		k := strings.Index(s[i:], w)
		if k < 0 {
			return false
		}
		k += i
		end := k + len(w)
		if (k == 0 || !identByte(s[k-1])) && (end == len(s) || !identByte(s[end])) {
			return true
		}
		i = k + 1
	}
}

func identByte(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// maxCodeRead bounds what addsCapability reads of a code file (a larger
// one is reported as it stands).
const maxCodeRead = 256 << 10

func runner(f string) string {
	switch f {
	case "setup.py":
		return "pip/setuptools at install"
	case "conftest.py":
		return "pytest at collection"
	case "build.rs":
		return "cargo at build"
	}
	return "python at startup"
}

// lines splits data into at most maxLines lines, or errTooMany.
func lines(data []byte) ([]string, error) {
	s := string(data)
	n := strings.Count(s, "\n")
	if n > maxLines {
		return nil, errTooMany
	}
	return strings.Split(strings.ReplaceAll(s, "\r\n", "\n"), "\n"), nil
}

// structured formats are handed to a JSON, TOML or YAML parser.
var structured = set("package.json", "package-lock.json", "npm-shrinkwrap.json", "pnpm-lock.yaml", "yarnrc",
	"Cargo.toml", "Cargo.lock", "cargo-config", "pyproject.toml", "Pipfile", "Pipfile.lock", "poetry.lock",
	"uv.lock", "gemrc", "bundle-config", "pre-commit")

// maxNesting bounds how deep brackets and braces may nest before a side is
// handed to a parser (a recursive one spends memory at each level).
const maxNesting = 256

// checkNesting refuses data whose brackets and braces nest deeper than
// maxNesting. It does not know strings, so a bracket in a string counts:
// that can only make it stricter.
func checkNesting(data []byte, format string) error {
	d := 0
	for _, c := range data {
		switch c {
		case '[', '{':
			d++
			if d > maxNesting {
				return fmt.Errorf("manifest: %s: nested too deep to judge", format)
			}
		case ']', '}':
			if d > 0 {
				d--
			}
		}
	}
	return nil
}
