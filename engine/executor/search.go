package executor

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/sys/unix"
)

// Limits of search_files. Every one is counted over the sorted walk, so a
// search stopped by a limit stops at the same place for the same tree.
const (
	// DefaultSearchResults is how many matching lines search_files
	// returns when max_results is not given; MaxSearchResults is the most
	// it may ask for.
	DefaultSearchResults = 100
	MaxSearchResults     = 1000
	// MaxSearchOutput caps the bytes of the result.
	MaxSearchOutput = 64 << 10
	// MaxSearchLine clips each matching line shown.
	MaxSearchLine = 300
	// MaxSearchFileBytes: larger files are skipped.
	MaxSearchFileBytes = 2 << 20
	// MaxSearchScanBytes caps the file bytes one search reads.
	MaxSearchScanBytes = 64 << 20
	// MaxSearchEntries caps the directory entries one search visits.
	MaxSearchEntries = 20000
	// MaxSearchDirEntries: a directory with more entries is skipped
	// whole, so the entries searched never depend on readdir order.
	MaxSearchDirEntries = 100000
	// MaxSearchDepth caps how deep below path the walk descends.
	MaxSearchDepth = 64
	// maxPatternBytes caps the regular expression.
	maxPatternBytes = 1024
	// binarySniff is how much of a file decides whether it is text.
	binarySniff = 8 << 10
)

// Search implements search_files: a regular expression over the text
// files beneath a workspace directory. It never follows a symlink.
type Search struct {
	ws     *Workspace
	limits searchLimits
}

// searchLimits are the walk's caps: MaxSearchEntries, MaxSearchScanBytes
// and MaxSearchDirEntries, held in fields only so tests can reach them
// without building huge trees.
type searchLimits struct {
	entries, dirEntries int
	scan                int64
}

// NewSearch returns the search tool for a workspace.
func NewSearch(ws *Workspace) *Search {
	return &Search{ws: ws, limits: searchLimits{entries: MaxSearchEntries, dirEntries: MaxSearchDirEntries, scan: MaxSearchScanBytes}}
}

// Tools implements Executor.
func (s *Search) Tools() []ToolDef {
	return []ToolDef{{Name: "search_files", Group: GroupFiles,
		Description: fmt.Sprintf("Search the text files under a workspace directory for lines matching a Go regular expression (RE2 syntax, case-sensitive; prefix (?i) to ignore case). "+
			"Prints one \"path:line: text\" per matching line, in sorted path order, lines clipped to %d bytes. "+
			"Skips .git and .opx directories, symbolic links, binary files and files over %d MiB. "+
			"Stops after max_results matches (default %d, at most %d), %d KiB of output or %d entries visited, and says so.",
			MaxSearchLine, MaxSearchFileBytes>>20, DefaultSearchResults, MaxSearchResults, MaxSearchOutput>>10, MaxSearchEntries),
		InputSchema: objectSchema(`"pattern":{"type":"string","description":"Go regular expression (RE2), matched against each line"},`+
			`"path":{"type":"string","description":"directory (or file) to search, relative to the workspace; default ."},`+
			`"glob":{"type":"string","description":"only files whose base name matches this glob, e.g. *.go"},`+
			fmt.Sprintf(`"max_results":{"type":"integer","minimum":1,"maximum":%d,"description":"most matching lines to return; default %d"}`, MaxSearchResults, DefaultSearchResults),
			"pattern")}}
}

// objectSchema builds the JSON schema of an object with the given
// properties (JSON members) that refuses any other. (edits' schema does the
// same but is built on Linux only.)
func objectSchema(props string, required ...string) json.RawMessage {
	req := ""
	if len(required) > 0 {
		b, _ := json.Marshal(required)
		req = `,"required":` + string(b)
	}
	return json.RawMessage(`{"type":"object","properties":{` + props + `}` + req + `,"additionalProperties":false}`)
}

type searchArgs struct {
	Pattern    string `json:"pattern"`
	Path       string `json:"path"`
	Glob       string `json:"glob"`
	MaxResults *int   `json:"max_results"`
}

// Execute implements Executor.
func (s *Search) Execute(ctx context.Context, c Call) Result {
	if c.Tool != "search_files" {
		return Errorf("search executor has no tool %q", c.Tool)
	}
	var a searchArgs
	if err := decodeArgs(c.Args, &a); err != nil {
		return Errorf("search_files: %v", err)
	}
	limit := DefaultSearchResults
	if a.MaxResults != nil {
		limit = *a.MaxResults
	}
	switch {
	case a.Pattern == "":
		return Errorf("search_files: pattern must not be empty")
	case len(a.Pattern) > maxPatternBytes:
		return Errorf("search_files: pattern is %d bytes; the limit is %d", len(a.Pattern), maxPatternBytes)
	case limit < 1 || limit > MaxSearchResults:
		return Errorf("search_files: max_results must be between 1 and %d", MaxSearchResults)
	}
	re, err := regexp.Compile(a.Pattern)
	if err != nil {
		return Errorf("search_files: pattern is not a valid Go regular expression: %v", err)
	}
	if a.Glob != "" {
		if _, err := path.Match(a.Glob, ""); err != nil || strings.Contains(a.Glob, "/") {
			return Errorf("search_files: glob %q is not a valid base-name pattern (like *.go)", a.Glob)
		}
	}
	if a.Path == "" {
		a.Path = "."
	}
	// The root is opened as Shield judged it (Call.Judged: through a
	// link it resolved), following no symlink; the walk then follows none.
	root, err := s.ws.Strict().Open(c.Judged(a.Path), unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_NOCTTY, 0)
	if err != nil {
		if errors.Is(err, unix.ELOOP) {
			return Errorf("search_files: %s is or goes through a symbolic link (a symlink Shield did not resolve when it judged the call), and search_files never follows links", a.Path)
		}
		return Errorf("search_files: %v", err)
	}
	defer root.Close()
	st, err := root.Stat()
	if err != nil {
		return Errorf("search_files: %s: %v", a.Path, err)
	}
	w := &searcher{ctx: ctx, re: re, glob: a.Glob, max: limit, limits: s.limits}
	rel := path.Clean(a.Path)
	switch {
	case st.IsDir():
		w.walk(root, rel, 0)
	case st.Mode().IsRegular():
		w.file(root, rel)
	default:
		return Errorf("search_files: %s is neither a directory nor a regular file (%s)", a.Path, st.Mode().Type())
	}
	if w.err != nil {
		return Errorf("search_files: %v", w.err)
	}
	return w.result(a.Pattern, a.Path)
}

// searcher is one search's walk state.
type searcher struct {
	ctx     context.Context
	re      *regexp.Regexp
	glob    string
	max     int
	limits  searchLimits
	out     bytes.Buffer
	matches int
	entries int
	scanned int64
	files   int
	stop    string // why the walk stopped early; empty while it runs
	err     error  // a cancelled context
	skipped struct{ binary, large, links, special, unreadable, deep, crowded int }
}

// walk searches the open directory dir, shown as rel, in sorted order.
func (w *searcher) walk(dir *os.File, rel string, depth int) {
	names, err := readNames(dir, w.limits.dirEntries)
	if err != nil {
		if errors.Is(err, errCrowded) {
			w.skipped.crowded++
		} else {
			w.skipped.unreadable++
		}
		return
	}
	for _, e := range names {
		if w.stop != "" || w.err != nil {
			return
		}
		if err := w.ctx.Err(); err != nil {
			w.err = err
			return
		}
		if w.entries++; w.entries > w.limits.entries {
			w.stop = fmt.Sprintf("stopped after visiting %d entries; search a narrower path", w.limits.entries)
			return
		}
		child := e.name
		if rel != "." {
			child = rel + "/" + e.name
		}
		switch {
		case e.typ&fs.ModeSymlink != 0:
			w.skipped.links++
		case e.typ.IsDir():
			if e.name == ".git" || e.name == ".opx" {
				continue
			}
			if depth+1 > MaxSearchDepth {
				w.skipped.deep++
				continue
			}
			f, err := openEntry(dir, e.name, unix.O_RDONLY|unix.O_DIRECTORY)
			if err != nil {
				w.openFailed(err)
				continue
			}
			w.walk(f, child, depth+1)
			f.Close()
		case e.typ.IsRegular():
			if w.glob != "" {
				if ok, _ := path.Match(w.glob, e.name); !ok {
					continue
				}
			}
			f, err := openEntry(dir, e.name, unix.O_RDONLY|unix.O_NONBLOCK|unix.O_NOCTTY)
			if err != nil {
				w.openFailed(err)
				continue
			}
			w.file(f, child)
			f.Close()
		default:
			w.skipped.special++
		}
	}
}

func (w *searcher) openFailed(err error) {
	if errors.Is(err, unix.ELOOP) { // swapped for a symlink since readdir
		w.skipped.links++
	} else {
		w.skipped.unreadable++
	}
}

// file searches one open file, shown as rel.
func (w *searcher) file(f *os.File, rel string) {
	st, err := f.Stat()
	switch {
	case err != nil:
		w.skipped.unreadable++
		return
	case !st.Mode().IsRegular():
		w.skipped.special++
		return
	case st.Size() > MaxSearchFileBytes:
		w.skipped.large++
		return
	case w.scanned+st.Size() > w.limits.scan:
		w.stop = fmt.Sprintf("stopped after reading %d KiB of files; search a narrower path or use glob", w.scanned>>10)
		return
	}
	b, err := io.ReadAll(io.LimitReader(f, MaxSearchFileBytes+1))
	w.scanned += int64(len(b))
	switch {
	case err != nil:
		w.skipped.unreadable++
		return
	case len(b) > MaxSearchFileBytes: // grew since fstat
		w.skipped.large++
		return
	case looksBinary(b):
		w.skipped.binary++
		return
	}
	w.files++
	shown := displayPath(rel)
	for n := 1; len(b) > 0; n++ {
		line := b
		if i := bytes.IndexByte(b, '\n'); i >= 0 {
			line, b = b[:i], b[i+1:]
		} else {
			b = nil
		}
		line = bytes.TrimSuffix(line, []byte("\r"))
		if !w.re.Match(line) {
			continue
		}
		if w.matches == w.max {
			w.stop = fmt.Sprintf("more than %d matching lines; narrow the pattern, path or glob, or raise max_results (at most %d)", w.max, MaxSearchResults)
			return
		}
		text := clipLine(line, MaxSearchLine)
		if w.out.Len()+len(shown)+len(text)+16 > MaxSearchOutput {
			w.stop = fmt.Sprintf("output reached %d KiB after %d matching lines; narrow the pattern, path or glob", MaxSearchOutput>>10, w.matches)
			return
		}
		fmt.Fprintf(&w.out, "%s:%d: %s\n", shown, n, text)
		w.matches++
	}
}

// result renders what the walk found.
func (w *searcher) result(pattern, where string) Result {
	r := Result{Content: w.out.String()}
	if w.matches == 0 {
		r.Content = fmt.Sprintf("no lines match %s in %s (%d text files searched)\n", strconv.Quote(pattern), where, w.files)
	}
	var notes []string
	for _, n := range []struct {
		count     int
		one, many string
		qualifier string
	}{
		{w.skipped.binary, "binary file", "binary files", ""},
		{w.skipped.large, "file", "files", fmt.Sprintf(" over %d MiB", MaxSearchFileBytes>>20)},
		{w.skipped.links, "symbolic link", "symbolic links", ""},
		{w.skipped.special, "special file", "special files", ""},
		{w.skipped.unreadable, "unreadable entry", "unreadable entries", ""},
		{w.skipped.deep, "directory", "directories", fmt.Sprintf(" deeper than %d levels", MaxSearchDepth)},
		{w.skipped.crowded, "directory", "directories", fmt.Sprintf(" with more than %d entries", w.limits.dirEntries)},
	} {
		switch {
		case n.count == 1:
			notes = append(notes, "1 "+n.one+n.qualifier)
		case n.count > 1:
			notes = append(notes, fmt.Sprintf("%d %s%s", n.count, n.many, n.qualifier))
		}
	}
	if len(notes) > 0 {
		r.Content += "[skipped: " + strings.Join(notes, ", ") + "]\n"
	}
	if w.stop != "" {
		r.Truncated = true
		r.Content += "[truncated: " + w.stop + "]\n"
	}
	return r
}

// errCrowded is returned by readNames for a directory over
// MaxSearchDirEntries entries.
var errCrowded = errors.New("too many directory entries")

type dirEntry struct {
	name string
	typ  fs.FileMode
}

// readNames lists a directory, sorted by name, without following links.
// The types come from readdir (lstat when the file system gives none);
// they only choose how an entry is opened, never whether it is safe to.
func readNames(dir *os.File, limit int) ([]dirEntry, error) {
	var out []dirEntry
	for {
		ents, err := dir.ReadDir(1024)
		for _, e := range ents {
			out = append(out, dirEntry{e.Name(), e.Type()})
		}
		if len(out) > limit {
			return nil, errCrowded
		}
		if err == io.EOF || (err == nil && len(ents) == 0) {
			break
		}
		if err != nil {
			return nil, err
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].name < out[j].name })
	return out, nil
}

// looksBinary says a file is not text: a NUL byte or invalid UTF-8 in its
// first binarySniff bytes (a rune cut at that boundary does not count).
func looksBinary(b []byte) bool {
	head := b
	if len(head) > binarySniff {
		head = trimCutRune(head[:binarySniff])
	}
	return bytes.IndexByte(head, 0) >= 0 || !utf8.Valid(head)
}

// clipLine makes a matching line safe to show: valid UTF-8, at most max
// bytes cut at a rune boundary.
func clipLine(line []byte, max int) string {
	s := strings.ToValidUTF8(string(line), "\uFFFD")
	if len(s) <= max {
		return s
	}
	cut := max
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return strings.TrimRight(s[:cut], " \t") + " [...]"
}

// displayPath quotes a path that holds control characters or invalid
// UTF-8, so a file name cannot forge output lines.
func displayPath(p string) string {
	if !utf8.ValidString(p) || strings.IndexFunc(p, unicode.IsControl) >= 0 {
		return strconv.Quote(p)
	}
	return p
}
