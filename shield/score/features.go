package score

import (
	"path"
	"sort"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Bounds: whatever the proposal, features are computed from at most
// maxText bytes of each text and maxTexts texts, and a proposal has at
// most MaxFeatures features.
const (
	maxText     = 64 << 10
	maxTexts    = 64
	maxRuns     = 64
	maxArgs     = 64
	maxPaths    = 64
	MaxFeatures = 1024
)

// Input is what the scorer reads of a proposal. Shield fills it from the
// facts it judges; paths are relative to the workspace ("~/…" for the
// home, "/…" for anywhere else).
type Input struct {
	Tool string
	// Changes are what the action puts into files and takes out of them.
	Changes []Change
	// Runs are the programs run: the program's base name, then its
	// arguments as written.
	Runs [][]string
	// Texts are the other texts the action carries, by source: "memory",
	// "body", "url", "headers", "commit message", "memory query", ...
	Texts []Text
	// Requests are the network requests the action makes.
	Requests []Request
	Reads    []string
	Writes   []string
	Deletes  []string
	// Supply are kinds of change to where code comes from or to code that
	// runs later (shield/manifest's kinds); Execs the runners of code
	// fetched or produced at run time.
	Supply []string
	Execs  []string
}

// Change is one file's change: the text put in and the text taken out
// ("" for a whole-file write, whose old content is not known).
type Change struct {
	Path    string
	Added   string
	Removed string
}

// Text is a text the action carries.
type Text struct{ Source, Body string }

// Request is a network request.
type Request struct {
	Method string
	Data   bool
	Query  bool
}

// featureSet collects features up to MaxFeatures.
type featureSet map[string]struct{}

func (fs featureSet) add(f string) {
	if len(fs) < MaxFeatures {
		fs[f] = struct{}{}
	}
}

// Features returns in's features, sorted, without duplicates.
func Features(in Input) []string {
	fs := extract(in)
	out := make([]string, 0, len(fs))
	for f := range fs {
		out = append(out, f)
	}
	sort.Strings(out)
	return out
}

// extract collects in's features.
func extract(in Input) featureSet {
	fs := make(featureSet, 128)
	fs.add("tool:" + in.Tool)
	for i, c := range in.Changes {
		if i == maxPaths {
			break
		}
		changeFeatures(fs, c)
	}
	for i, r := range in.Runs {
		if i == maxRuns {
			break
		}
		runFeatures(fs, r)
	}
	if len(in.Runs) > 1 {
		fs.add("runs:many")
	}
	for i, t := range in.Texts {
		if i == maxTexts {
			break
		}
		prefix := textPrefix(t.Source)
		for _, w := range words(t.Body) {
			fs.add(prefix + w)
		}
		shapeFeatures(fs, prefix, t.Body, "")
		if prefix != "b:" {
			conceptFeatures(fs, clipText(t.Body), "")
		}
	}
	for _, r := range in.Requests {
		fs.add("req:" + strings.ToLower(r.Method))
		if r.Data {
			fs.add("req:data")
		}
		if r.Query {
			fs.add("req:query")
		}
	}
	pathFeatures(fs, "rp:", in.Reads)
	pathFeatures(fs, "wp:", in.Writes)
	pathFeatures(fs, "dp:", in.Deletes)
	for _, s := range in.Supply {
		fs.add("supply:" + s)
	}
	for _, e := range in.Execs {
		fs.add("exec:" + path.Base(e))
	}
	return fs
}

// textPrefix names a text's source in its features.
func textPrefix(source string) string {
	switch source {
	case "memory":
		return "m:"
	case "commit message":
		return "c:"
	case "body", "url", "headers":
		return "b:"
	}
	return "t:"
}

// changeFeatures are a file change's: the file's kind, the words added
// (absent from what was taken out) and removed (absent from what was put
// in), settings flipped, and the change's shape.
func changeFeatures(fs featureSet, c Change) {
	kind := FileKind(c.Path)
	fs.add("kind:" + kind)
	added, removed := clipText(c.Added), clipText(c.Removed)
	aw, rw := words(added), words(removed)
	inRemoved := make(map[string]bool, len(rw)+1)
	for _, w := range rw {
		inRemoved[w] = true
	}
	inAdded := make(map[string]bool, len(aw))
	for _, w := range aw {
		inAdded[w] = true
		if !inRemoved[w] {
			fs.add("+" + w)
		}
	}
	for _, w := range rw {
		if !inAdded[w] {
			fs.add("-" + w)
		}
	}
	if removed != "" {
		fs.add("change:edit")
		if strings.TrimSpace(added) == "" {
			fs.add("change:removes-only")
		} else if strings.ContainsAny(added, "#/-;<") && commentsOut(added, removed) {
			fs.add("change:comments-out")
		}
		if len(aw) < len(rw)/2 {
			fs.add("change:shrinks")
		}
	} else {
		fs.add("change:whole")
	}
	flipFeatures(fs, added, removed)
	numberFeatures(fs, added, removed)
	shapeFeatures(fs, "+", added, removed)
	conceptFeatures(fs, added, removed)
}

// commentsOut reports whether added is removed with its lines commented
// out.
func commentsOut(added, removed string) bool {
	strip := func(s string) string {
		var b strings.Builder
		for _, l := range strings.Split(s, "\n") {
			l = strings.TrimSpace(l)
			for _, p := range []string{"//", "#", "--", ";", "/*", "<!--"} {
				if rest, ok := strings.CutPrefix(l, p); ok {
					l = strings.TrimSpace(rest)
					break
				}
			}
			b.WriteString(l)
		}
		return b.String()
	}
	return strings.TrimSpace(added) != strings.TrimSpace(removed) && strip(added) == strip(removed)
}

// shapeFeatures are what a text holds beyond its words: URLs, addresses,
// long opaque strings, escapes — each only when the other side (the text
// taken out) does not hold it too.
func shapeFeatures(fs featureSet, prefix, text, other string) {
	has := func(s string, f func(string) bool) bool { return f(s) && !(other != "" && f(other)) }
	if has(text, func(s string) bool { return strings.Contains(s, "://") }) {
		fs.add(prefix + "shape:url")
	}
	if has(text, func(s string) bool { return strings.Contains(s, "http://") }) {
		fs.add(prefix + "shape:plain-http")
	}
	if has(text, func(s string) bool { return strings.Contains(s, "0.0.0.0") || strings.Contains(s, "::/0") }) {
		fs.add(prefix + "shape:any-address")
	}
	if has(text, hasIPv4) {
		fs.add(prefix + "shape:ipv4")
	}
	if has(text, hasOpaque) {
		fs.add(prefix + "shape:opaque")
	}
	if has(text, func(s string) bool {
		return strings.Contains(s, `\x`) || strings.Contains(s, `\u00`) || strings.Contains(s, "fromCharCode")
	}) {
		fs.add(prefix + "shape:escapes")
	}
	if has(text, func(s string) bool {
		return strings.Contains(s, "${") || strings.Contains(s, "$(") || strings.Contains(s, "#{") || strings.Contains(s, "f\"") || strings.Contains(s, "f'")
	}) {
		fs.add(prefix + "shape:interpolation")
	}
	if has(text, func(s string) bool {
		return strings.Contains(s, "'*'") || strings.Contains(s, `"*"`) || strings.Contains(s, ": *") || strings.Contains(s, "= *")
	}) {
		fs.add(prefix + "shape:wildcard")
	}
	if has(text, func(s string) bool {
		return strings.Contains(s, "~/") || strings.Contains(s, "$HOME") || strings.Contains(s, "/etc/")
	}) {
		fs.add(prefix + "shape:home-or-system")
	}
	if has(text, func(s string) bool {
		return strings.Contains(s, "| sh") || strings.Contains(s, "| bash") || strings.Contains(s, "|sh")
	}) {
		fs.add(prefix + "shape:pipe-shell")
	}
}

// hasIPv4 reports whether s holds a dotted-quad address other than a
// version number's shape (four numbers each ≤ 255, not all under 10).
func hasIPv4(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' || (i > 0 && (isAlnum(s[i-1]) || s[i-1] == '.')) {
			continue
		}
		n, j, big := 0, i, false
		for n < 4 {
			k, v := j, 0
			for k < len(s) && k-j < 3 && s[k] >= '0' && s[k] <= '9' {
				v = v*10 + int(s[k]-'0')
				k++
			}
			if k == j || v > 255 {
				break
			}
			if v >= 10 {
				big = true
			}
			n++
			j = k
			if n < 4 {
				if j >= len(s) || s[j] != '.' {
					break
				}
				j++
			}
		}
		if n == 4 && big && (j >= len(s) || s[j] != '.') {
			return true
		}
	}
	return false
}

func isAlnum(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_'
}

// hasOpaque reports whether s holds a run of 40 or more base64 or hex
// characters mixing letters and digits: a key, a hash, an encoded payload.
func hasOpaque(s string) bool {
	run, letters, digits := 0, false, false
	for i := 0; i <= len(s); i++ {
		if i < len(s) {
			c := s[i]
			switch {
			case c >= '0' && c <= '9':
				run, digits = run+1, true
				continue
			case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z':
				run, letters = run+1, true
				continue
			case c == '+' || c == '/' || c == '=' || c == '_' || c == '-':
				run++
				continue
			}
		}
		if run >= 40 && letters && digits {
			return true
		}
		run, letters, digits = 0, false, false
	}
	return false
}

// flipFeatures name settings a change flips: a key whose value was a
// truthy word in the removed text and is a falsy one in the added text
// ("off:<word of the key>"), and the reverse ("on:…"). A key set falsy in
// added text with no removed text is "setoff:…".
func flipFeatures(fs featureSet, added, removed string) {
	before := settings(removed)
	for key, v := range settings(added) {
		old, had := before[key]
		switch {
		case had && old && !v:
			keyFeatures(fs, "off:", key)
		case had && !old && v:
			keyFeatures(fs, "on:", key)
		case !had && !v && removed == "":
			keyFeatures(fs, "setoff:", key)
		}
	}
}

// settings reads "key = value", "key: value", "key => value" and
// "key value" lines whose value is a boolean word, as key -> truthy.
func settings(text string) map[string]bool {
	out := map[string]bool{}
	for n, line := range strings.Split(text, "\n") {
		if n == 2048 {
			break
		}
		line = strings.TrimSpace(strings.TrimRight(line, ",;"))
		i := strings.LastIndexAny(line, ":= \t(")
		if i <= 0 || i == len(line)-1 {
			continue
		}
		val := strings.ToLower(strings.Trim(strings.TrimSpace(line[i+1:]), `"'`+")"))
		key := strings.TrimSpace(strings.TrimRight(line[:i], ":=> \t"))
		if key == "" || len(key) > 80 {
			continue
		}
		if j := strings.LastIndexAny(key, " \t({,"); j >= 0 {
			key = key[j+1:]
		}
		switch val {
		case "true", "yes", "on", "enabled", "enable", "1", "required", "strict", "always":
			out[strings.ToLower(key)] = true
		case "false", "no", "off", "disabled", "disable", "0", "none", "never", "nil", "null", "skip", "ignore", "warn":
			out[strings.ToLower(key)] = false
		}
	}
	return out
}

// runFeatures are a program's: its name, its flags (by name, without
// values), and the words of its other arguments.
func runFeatures(fs featureSet, argv []string) {
	if len(argv) == 0 {
		return
	}
	name := strings.ToLower(path.Base(argv[0]))
	fs.add("prog:" + name)
	for i, a := range argv[1:] {
		if i == maxArgs {
			break
		}
		a = clipText(a)
		if strings.HasPrefix(a, "-") && len(a) > 1 {
			flag, _, _ := strings.Cut(strings.ToLower(a), "=")
			if len(flag) <= 40 {
				fs.add("flag:" + flag)
			}
			continue
		}
		if i == 0 {
			fs.add("sub:" + name + ":" + strings.ToLower(clip(a, 40)))
		}
		for _, w := range words(a) {
			fs.add("a:" + w)
		}
		shapeFeatures(fs, "a:", a, "")
	}
}

// pathFeatures are the words of paths (each segment's) and, for the last
// segment, its kind, under a prefix.
func pathFeatures(fs featureSet, prefix string, paths []string) {
	for i, p := range paths {
		if i == maxPaths {
			break
		}
		p = clip(p, 4096)
		switch {
		case strings.HasPrefix(p, "~/"):
			fs.add(prefix + "where:home")
		case strings.HasPrefix(p, "/"):
			fs.add(prefix + "where:outside")
		default:
			fs.add(prefix + "where:workspace")
		}
		fs.add(prefix + "kind:" + FileKind(p))
		for _, w := range words(p) {
			fs.add(prefix + w)
		}
	}
}

// FileKind classes a path by what reads it: "ci", "build", "manifest",
// "lock", "config", "code", "test", "doc", "script", "data", "other".
func FileKind(p string) string {
	lp := strings.ToLower(p)
	base := path.Base(lp)
	ext := path.Ext(base)
	switch {
	case strings.Contains(lp, ".github/workflows/") || strings.Contains(lp, ".gitlab-ci") || strings.Contains(lp, ".circleci/") ||
		strings.Contains(lp, "azure-pipelines") || strings.Contains(lp, ".buildkite/") || base == "jenkinsfile":
		return "ci"
	case strings.Contains(base, "lock") && (ext == ".json" || ext == ".yaml" || ext == ".toml" || ext == ".lock" || ext == "" || ext == ".bzl"):
		return "lock"
	case strings.Contains(lp, "test") || strings.Contains(lp, "spec"):
		return "test"
	}
	switch ext {
	case ".md", ".rst", ".txt", ".adoc", ".mdx", ".mdc":
		return "doc"
	case ".sh", ".bash", ".zsh", ".ps1", ".bat", ".cmd", ".fish":
		return "script"
	case ".yml", ".yaml", ".ini", ".cfg", ".conf", ".env", ".properties", ".json", ".toml", ".xml", ".plist", ".hcl", ".tf":
		switch base {
		case "package.json", "pyproject.toml", "cargo.toml", "composer.json", "pubspec.yaml", "project.toml", "deno.json":
			return "manifest"
		}
		return "config"
	case ".csv", ".tsv", ".sql", ".parquet", ".ipynb", ".jsonl":
		return "data"
	case "":
		switch {
		case base == "makefile" || base == "justfile" || base == "dockerfile" || base == "build" || base == "workspace" ||
			strings.HasPrefix(base, "dockerfile") || base == "rakefile" || base == "gemfile" || base == "procfile":
			return "build"
		case strings.HasPrefix(base, "."):
			return "config"
		}
		return "other"
	case ".bazel", ".bzl", ".nix", ".gradle", ".kts", ".cmake", ".mk", ".sbt", ".cabal", ".gemspec", ".podspec", ".mod", ".work":
		return "build"
	}
	if strings.Contains(base, "config") || strings.Contains(base, "settings") || strings.HasPrefix(base, ".") {
		return "config"
	}
	return "code"
}

// words splits text into lower-case words: runs of letters and digits,
// split again where a lower-case letter meets an upper-case one
// (camelCase), keeping words of 2 to 30 characters that are not all
// digits nor stop words; at most 4096 (duplicates are kept: callers
// collect them in sets).
func words(text string) []string {
	text = clipText(text)
	out := make([]string, 0, len(text)/6+1)
	emit := func(w string) {
		if len(w) < 2 || len(w) > 30 || len(out) >= 4096 {
			return
		}
		digits := true
		for i := 0; i < len(w) && digits; i++ {
			digits = w[i] >= '0' && w[i] <= '9'
		}
		if digits {
			return
		}
		w = strings.ToLower(w)
		if !stopWords[w] {
			out = append(out, w)
		}
	}
	start := -1
	var prevLower bool
	for i := 0; i <= len(text); {
		var word, upper, lower bool
		size := 1
		if i < len(text) {
			if c := text[i]; c < utf8.RuneSelf {
				upper, lower = c >= 'A' && c <= 'Z', c >= 'a' && c <= 'z'
				word = upper || lower || c >= '0' && c <= '9'
			} else {
				var r rune
				r, size = utf8.DecodeRuneInString(text[i:])
				upper, lower = unicode.IsUpper(r), unicode.IsLower(r)
				word = unicode.IsLetter(r) || unicode.IsDigit(r)
			}
		}
		if word && start >= 0 && upper && prevLower {
			emit(text[start:i])
			start = i
		}
		if word && start < 0 {
			start = i
		}
		if !word && start >= 0 {
			emit(text[start:i])
			start = -1
		}
		prevLower = lower
		i += size
	}
	return out
}

func clipText(s string) string { return clip(s, maxText) }

// clip cuts s to at most n bytes, on a rune boundary.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// stopWords carry no meaning of their own in any language's code or prose.
var stopWords = map[string]bool{}

func init() {
	for _, w := range strings.Fields("the to and of in for is it on with as by this that be are from or an at if so we you our your " +
		"its was were will can has have had but all any one two new old use used using via per into than then there these those they them " +
		"he she his her which who what when where how also just only more most such " +
		// booleans say nothing without their key: flips and settings name
		// them with it (off:, on:, setoff:)
		"true false yes no on off enabled disabled enable disable null nil none") {
		stopWords[w] = true
	}
}

// numberFeatures name numeric settings a change moves: for a key whose
// number differs between the removed and the added text, "up:<concept>"
// or "down:<concept>" for each concept the key spells (and "up:key" /
// "down:key" for the key's words), and "zero:<concept>" when it becomes 0.
func numberFeatures(fs featureSet, added, removed string) {
	if removed == "" {
		return
	}
	before := numbers(removed)
	for key, v := range numbers(added) {
		old, ok := before[key]
		if !ok || old == v {
			continue
		}
		dir := "up:"
		if v < old {
			dir = "down:"
		}
		keyFeatures(fs, dir, key)
		if v == 0 {
			keyFeatures(fs, "zero:", key)
		}
	}
}

// numbers reads "key = N", "key: N" and "key N" lines (N a decimal
// number, a unit letter after it allowed) as key (lower case) -> N.
func numbers(text string) map[string]float64 {
	out := map[string]float64{}
	for n, line := range strings.Split(text, "\n") {
		if n == 2048 {
			break
		}
		line = strings.TrimSpace(strings.TrimRight(strings.TrimSpace(line), ",;"))
		i := strings.LastIndexAny(line, ":= \t(")
		if i <= 0 || i == len(line)-1 {
			continue
		}
		val := strings.Trim(strings.TrimSpace(line[i+1:]), `"')`)
		val = strings.TrimRight(val, "smhdkKMGbB")
		v, err := strconv.ParseFloat(strings.ReplaceAll(val, "_", ""), 64)
		if err != nil {
			continue
		}
		key := strings.TrimSpace(strings.TrimRight(line[:i], ":=> \t"))
		if j := strings.LastIndexAny(key, " \t({,"); j >= 0 {
			key = key[j+1:]
		}
		if key == "" || len(key) > 80 {
			continue
		}
		out[strings.ToLower(key)] = v
	}
	return out
}

// keyFeatures add, under prefix, a setting key's words and the concepts
// it spells ("c:NAME"), so a flip of "verify_ssl" and one of
// "tlsVerify" share "off:c:tls".
func keyFeatures(fs featureSet, prefix, key string) {
	lk := strings.ToLower(key)
	for _, c := range concepts {
		for _, sp := range c.spellings {
			sp = strings.Trim(sp, ":= (")
			if len(sp) >= 3 && strings.Contains(lk, sp) {
				fs.add(prefix + "c:" + c.name)
				break
			}
		}
	}
	for _, w := range words(key) {
		fs.add(prefix + w)
	}
}
