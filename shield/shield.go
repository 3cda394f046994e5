package shield

import (
	"context"
	"fmt"
	"path"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/opx-dev/opx/ledger"
)

// Decisions.
const (
	Allow    = "allow"
	Block    = "block"
	Escalate = "escalate"
)

// Action is a proposal as Shield judges it.
type Action struct {
	Session  string
	Tool     string
	Mutating bool
	// Paths are the absolute, cleaned paths the action touches (see
	// ResolvePath); Writes says which of them it changes.
	Paths  []string
	Writes []string
	// Command is a shell command line; Hosts are the hosts it or a
	// request names; Content is text the agent passes along (file
	// content, a request body, a command).
	Command string
	// Cwd is the directory Command starts in, as given (relative to the
	// workspace, "~", or absolute); "" is the workspace.
	Cwd     string
	Hosts   []string
	Content string
	// Facts are what the action does in detail (see Facts); a Command's
	// are added by Evaluate (CommandFacts).
	Facts Facts
	// Taint are the session's earlier calls that read something
	// sensitive and ran (Sensitive), as the engine knew them when the
	// action was proposed: what can carry data out is judged with them
	// (flow:tainted-egress).
	Taint []Taint
	// Links are where the filesystem resolved the paths Command names
	// when the action was judged (through symlinks, beneath the
	// workspace): absolute path as the facts have it -> absolute path it
	// resolves to, for those that differ. Each is judged as well (a Ref
	// with Via). They are recorded with the proposal, so a replay judges
	// the same paths whatever the filesystem holds by then.
	Links map[string]string
	// Toolchain are the programs Command runs that the workspace declares
	// it uses, "key=file" (ToolchainKey, and the workspace file that
	// declares it), as the engine found them when the action was
	// proposed (recorded with it, so a replay judges the same): the
	// policy's `toolchain: workspace` rules match them.
	Toolchain []string
}

// Verdict is one tier's decision.
type Verdict struct {
	Decision string
	Tier     int
	Rule     string
	Reason   string
}

// Config configures a Shield.
type Config struct {
	Workspace string   // absolute
	Home      string   // the user's home, for "~" and credential paths
	Protected []string // absolute paths no tool may touch (the state dir, the ledger)
	// ReadOnly are absolute paths of opx's configuration kept outside the
	// workspace's .opx directory (a policy file elsewhere in the
	// workspace, say): like .opx, tools neither read nor change them.
	ReadOnly []string
	Policy   *Policy
	// RateLimit bounds proposals per session per minute; 0 means 120.
	RateLimit int
	Now       func() time.Time
}

// Shield evaluates actions. It is safe for concurrent use.
type Shield struct {
	cfg      Config
	readOnly []string // the workspace's .opx, then cfg.ReadOnly
	literals []string // cfg.Protected as a command may write them ("~/...")
	// protected are cfg.Protected and, for a state directory of opx's
	// (…/opx/<workspace id>), the directory of every workspace's state.
	protected   []string
	memoryFile  string                  // the workspace's MEMORY.md
	rules       *ruleSet                // tier 1, compiled for this workspace and home
	paths       map[*Rule][]pathPattern // the policy's path globs, compiled
	secretGlobs []pathPattern           // the policy's Secrets, compiled

	mu     sync.Mutex
	recent map[string][]time.Time // session -> proposal times in the last minute

	memo  tier1Memo // tier 1 verdicts Sensitive computed, for Evaluate (rules_memo.go)
	sinks sinkMemo  // sinkAdded's last answer (rules_memo.go)
}

// New returns a Shield for cfg. Everything the tiers match with is
// compiled here (and in ParsePolicy), never per call.
func New(cfg Config) *Shield {
	if cfg.RateLimit <= 0 {
		cfg.RateLimit = 120
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	ro := append([]string{path.Join(cfg.Workspace, ".opx")}, cfg.ReadOnly...)
	s := &Shield{cfg: cfg, readOnly: ro, recent: map[string][]time.Time{}}
	s.memoryFile = path.Join(cfg.Workspace, "MEMORY.md")
	for _, p := range cfg.Protected {
		s.protected = append(s.protected, p)
		if d := path.Dir(p); path.Base(d) == "opx" && !slices.Contains(cfg.Protected, d) {
			s.protected = append(s.protected, d)
		}
	}
	for _, p := range s.protected {
		s.literals = append(s.literals, p)
		if rel, ok := strings.CutPrefix(p, cfg.Home+"/"); ok && cfg.Home != "" {
			s.literals = append(s.literals, "~/"+rel, "$HOME/"+rel, "${HOME}/"+rel)
		}
	}
	s.rules = compileRules(cfg)
	if cfg.Policy != nil {
		s.paths = compilePaths(cfg.Policy, cfg.Workspace, cfg.Home)
		for _, g := range cfg.Policy.Secrets {
			s.secretGlobs = append(s.secretGlobs, compilePattern(g, resolvePattern(g, cfg.Workspace, cfg.Home)))
		}
	}
	return s
}

// PolicyHash is the hash of the policy in force.
func (s *Shield) PolicyHash() ledger.Hash { return s.cfg.Policy.Hash() }

// ResolvePath turns a path as a tool receives it into the absolute path
// Shield judges: resolvePath in the workspace (the one resolver, which
// the facts of a command line use too): "~", "$HOME" and "~user" are
// homes, a relative path is under the workspace, ".." is applied (so
// "../../etc/passwd" is judged as /etc/passwd, which is also where the
// executor would refuse to go) and /proc aliases are followed
// (/proc/self/root/etc/shadow is /etc/shadow). A path that names an open
// descriptor (/proc/self/fd/5) is returned cleaned as written: it is
// outside the workspace, which the executor refuses.
func (s *Shield) ResolvePath(p string) string {
	r, res := resolvePath(s.cfg.Home, s.cfg.Workspace, p)
	if res != resolved {
		return path.Join(s.cfg.Workspace, p)
	}
	return r
}

// inWorkspace reports whether an absolute path is the workspace or under it.
func (s *Shield) inWorkspace(p string) bool { return within(p, s.cfg.Workspace) }

// Evaluate judges a. It returns the verdict of every tier consulted; any
// block blocks, and an escalation names who must answer (its tier).
func (s *Shield) Evaluate(_ context.Context, a Action) []Verdict {
	f := s.facts(&a)
	if v, ok := s.hardcoded(&a, &f); ok {
		return []Verdict{v}
	}
	if v, ok := s.rateLimit(a.Session); ok {
		return []Verdict{v}
	}
	out := []Verdict{s.tier0(&a, &f)}
	v, ok, memo := s.memo.take(&a)
	if !memo {
		v, ok = s.tier1(&a, &f)
	}
	if ok {
		out = append(out, v)
	} else {
		out = append(out, Verdict{Allow, 1, "heuristics:none", "no heuristic matched"})
		// What no rule asks about, the learned scorer may (learned.go).
		if v, ok := s.learned(&a, &f); ok {
			out = append(out, v)
		}
	}
	return out
}

// facts are everything the tiers judge a by: a.Facts, what the fields
// that predate Facts say (Paths, Writes, Hosts, Content), the facts of
// a.Command, and the paths interpreter payloads and decoded data name.
// a.Facts itself is not changed (callers may share its slices).
func (s *Shield) facts(a *Action) Facts {
	f := Facts{
		Reads:    append([]Ref(nil), a.Facts.Reads...),
		Writes:   append([]Ref(nil), a.Facts.Writes...),
		Deletes:  append([]Ref(nil), a.Facts.Deletes...),
		Requests: append([]Request(nil), a.Facts.Requests...),
		Runs:     append([]Run(nil), a.Facts.Runs...),
		Texts:    append([]Text(nil), a.Facts.Texts...),
		Execs:    append([]Exec(nil), a.Facts.Execs...),
		Supply:   append([]Supply(nil), a.Facts.Supply...),
		Removed:  append([]Text(nil), a.Facts.Removed...),
		Unknown:  append([]string(nil), a.Facts.Unknown...),
		Searches: append([]string(nil), a.Facts.Searches...),
	}
	written := map[string]bool{}
	for _, p := range a.Writes {
		written[p] = true
		if a.Tool == "delete_file" {
			f.Deletes = append(f.Deletes, Ref{Path: p, By: a.Tool})
		} else {
			f.Writes = append(f.Writes, Ref{Path: p, By: a.Tool})
		}
	}
	for _, p := range a.Paths {
		if !written[p] {
			f.Reads = append(f.Reads, Ref{Path: p, By: a.Tool})
		}
	}
	for _, h := range a.Hosts {
		f.Requests = append(f.Requests, Request{Host: h, By: a.Tool})
	}
	if a.Content != "" && a.Content != a.Command {
		f.Texts = append(f.Texts, Text{Source: "content", Body: a.Content})
	}
	if a.Command != "" {
		c := s.safeCommandFacts(a.Command, a.Cwd)
		f.Reads = append(f.Reads, c.Reads...)
		f.Writes = append(f.Writes, c.Writes...)
		f.Deletes = append(f.Deletes, c.Deletes...)
		f.Requests = append(f.Requests, c.Requests...)
		f.Runs = append(f.Runs, c.Runs...)
		f.Texts = append(f.Texts, c.Texts...)
		f.Execs = append(f.Execs, c.Execs...)
		f.Supply = append(f.Supply, c.Supply...)
		f.Unknown = append(f.Unknown, c.Unknown...)
	}
	if len(a.Links) > 0 {
		// The command's paths as the filesystem resolved them: each
		// judged beside the path as written.
		for _, refs := range []*[]Ref{&f.Reads, &f.Writes, &f.Deletes} {
			for i, n := 0, len(*refs); i < n; i++ {
				r := (*refs)[i]
				if r.Via != "" {
					continue
				}
				if to, ok := a.Links[r.Path]; ok && !r.Glob && to != r.Path {
					*refs = append(*refs, Ref{Path: to, Tree: r.Tree, By: r.By, Via: r.Path})
					continue
				}
				// A glob through a link: its literal directory resolved
				// (cat s/* with s -> secrets is secrets/*).
				for d := path.Dir(r.Path); r.Glob && d != "/" && d != "."; d = path.Dir(d) {
					if to, ok := a.Links[d]; ok && to != d {
						*refs = append(*refs, Ref{Path: to + r.Path[len(d):], Glob: true, Tree: r.Tree, By: r.By, Via: r.Path})
						break
					}
				}
			}
		}
	}
	if len(a.Links) > 0 {
		// A recursive read reaches through the links beneath it that
		// lead out of it (grep -R follows them): their targets are read
		// too, in the order of the links' paths.
		keys := make([]string, 0, len(a.Links))
		for k := range a.Links {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for i, n := 0, len(f.Reads); i < n; i++ {
			r := f.Reads[i]
			if !r.Tree || r.Glob {
				continue
			}
			for _, k := range keys {
				if strings.HasPrefix(k, r.Path+"/") {
					f.Reads = append(f.Reads, Ref{Path: a.Links[k], Tree: true, By: r.By, Via: k})
				}
			}
		}
	}
	s.codeEffects(&f)
	s.patchEffects(&f)
	s.sedAsEdit(&f)
	if dotglobOn(a, &f) {
		for _, refs := range [][]Ref{f.Reads, f.Writes, f.Deletes} {
			for i := range refs {
				refs[i] = dotGlob(refs[i])
			}
		}
	}
	// Paths named in interpreter payloads and decoded data are judged as
	// reads: `python3 -c "open('/etc/shadow')"` reads /etc/shadow.
	for _, t := range f.Texts {
		if literalSource(t.Source) {
			for _, p := range literalPaths(t.Body) {
				r := s.ResolvePath(p)
				f.Reads = append(f.Reads, Ref{Path: r, Glob: hasMeta(r), By: t.Source})
				if strings.HasPrefix(r, "/.") && s.cfg.Home != "" {
					// A literal like '/.npmrc' is the tail of a path built
					// at run time, most often from the home directory
					// (process.env.HOME + '/.npmrc'): judged as that too.
					f.Reads = append(f.Reads, Ref{Path: s.cfg.Home + r, Glob: hasMeta(r), By: t.Source})
				}
			}
		}
	}
	return f
}

// dotglobOn reports whether the action's line may make globs match dot
// names: `shopt -s dotglob` (or any shopt naming it), or GLOBIGNORE set.
func dotglobOn(a *Action, f *Facts) bool {
	if a.Command == "" {
		return false
	}
	if strings.Contains(a.Command, "GLOBIGNORE") {
		return true
	}
	for i := range f.Runs {
		if f.Runs[i].Name == "shopt" && slices.Contains(f.Runs[i].Argv, "dotglob") {
			return true
		}
	}
	return strings.Contains(a.Command, "dotglob")
}

// safeCommandFacts is CommandFacts that cannot take Shield down: a panic
// in parsing a hostile line becomes a fact that it cannot be understood
// (which escalates), not a crash of the engine.
func (s *Shield) safeCommandFacts(line, cwd string) (f Facts) {
	defer func() {
		if r := recover(); r != nil {
			f = Facts{Unknown: []string{fmt.Sprintf("the command line could not be read (parser failure: %v)", r)}}
		}
	}()
	return s.CommandFactsIn(line, cwd)
}

// hardcoded is tier -1: what no policy can allow. opx's state (the
// ledger, the keys: cfg.Protected) is unreachable: no read, write or
// delete of it or beneath it, no recursive read, recursive change or
// delete of a directory holding it, and no glob that could match any of
// these. opx's configuration (the workspace's .opx and cfg.ReadOnly) is
// neither written nor read directly (reading the policy is how an agent
// learns what it may get away with); a recursive read of the workspace
// still sees it, as it sees everything there.
func (s *Shield) hardcoded(a *Action, f *Facts) (Verdict, bool) {
	type kind struct {
		refs []Ref
		verb string
		// ancestorOK says when touching a directory above the state
		// passes: a plain listing or a single write (a timestamp, a
		// mode) does; a recursive one or a delete does not.
		ancestorOK func(r *Ref) bool
	}
	var sent []Ref
	for _, q := range f.Requests {
		for _, p := range q.Files {
			sent = append(sent, Ref{Path: p, By: q.By})
		}
	}
	kinds := []kind{
		// find lists every name beneath its start: one that starts
		// near the state (~/.local, ~/.local/state) lists the state's
		// files, as ls -R would; one from / or the home is a search.
		{f.Reads, "reads", func(r *Ref) bool { return !r.Tree && !(listsBeneath(r, f) && s.nearState(r.Path)) }},
		{sent, "sends", func(r *Ref) bool { return true }},
		{f.Writes, "writes", func(r *Ref) bool { return !r.Tree }},
		{f.Deletes, "deletes", func(*Ref) bool { return false }},
	}
	for _, k := range kinds {
		for i := range k.refs {
			r := &k.refs[i]
			for _, prot := range s.protected {
				at, above := reaches(r, prot)
				if at || (above && !k.ancestorOK(r)) {
					return Verdict{Block, -1, "protected:state", fmt.Sprintf("%s %s %s, which holds or is opx's own state (%s): no tool may reach it", by(r), k.verb, r.Path, prot)}, true
				}
			}
			for _, ro := range s.readOnly {
				// Reads and writes of the configuration itself block; a
				// recursive read or change of the workspace (grep -r,
				// gofmt -w .) reaches it too but passes (Chronicle puts
				// the configuration back after every command); a delete
				// of a directory holding it does not.
				direct := *r
				direct.Tree = false
				at, _ := reaches(&direct, ro)
				if !at && k.verb == "deletes" {
					treeAt, above := reaches(r, ro)
					at = treeAt || above
				}
				if at && k.verb == "deletes" && r.By == "git" && !direct.Glob && r.Path != ro && !within(r.Path, ro) {
					// git clean deletes untracked files beneath the
					// directory it names: .opx among them unless it is
					// ignored (and -x not given) or excluded with -e,
					// which Shield cannot see but in the line.
					if gitCleanExcludes(f, path.Base(ro)) {
						continue
					}
					return Verdict{Escalate, 3, "protected:config", fmt.Sprintf("git deletes untracked files under %s, which may include opx's configuration (%s) unless it is excluded (git clean -e %s)", r.Path, ro, path.Base(ro))}, true
				}
				if at {
					return Verdict{Block, -1, "protected:config", fmt.Sprintf("%s %s %s: opx's configuration (%s) is not for tools to %s", by(r), k.verb, r.Path, ro, strings.TrimSuffix(k.verb, "s"))}, true
				}
			}
		}
	}
	if lit := s.findsState(f); lit != "" {
		return Verdict{Block, -1, "protected:state", "find searches above opx's own state for it (" + lit + ")"}, true
	}
	// A backstop for what the facts may have missed: the state's path as
	// the command or a payload writes it, in any spelling (canonText).
	if a.Command != "" {
		if lit := s.namesState(a.Command); lit != "" {
			return Verdict{Block, -1, "protected:state", "the command names opx's own state (" + lit + ")"}, true
		}
	}
	for _, t := range f.Texts {
		if literalSource(t.Source) {
			if lit := s.namesState(t.Body); lit != "" {
				return Verdict{Block, -1, "protected:state", "a " + t.Source + " payload names opx's own state (" + lit + ")"}, true
			}
		}
	}
	return Verdict{}, false
}

// findsState returns the predicate of a find that starts above opx's
// state and selects it by name (find / -path '*opx*' -name '*.db': a
// hunt for the ledger), or "".
func (s *Shield) findsState(f *Facts) string {
	for i := range f.Runs {
		r := &f.Runs[i]
		if r.Name != "find" && r.Name != "gfind" && r.Name != "fd" && r.Name != "fdfind" {
			continue
		}
		above := false
		for k := range f.Reads {
			rd := &f.Reads[k]
			if rd.By != r.Name {
				continue
			}
			for _, prot := range s.protected {
				if _, up := reaches(rd, prot); up {
					above = true
				}
			}
		}
		if !above {
			continue
		}
		for k, a := range r.Argv {
			switch a {
			case "-path", "-ipath", "-wholename", "-iwholename", "-name", "-iname", "-regex", "-iregex":
			default:
				if k == 0 || r.Name == "find" || r.Name == "gfind" || strings.HasPrefix(a, "-") {
					continue
				}
				// fd PATTERN: its first operand is the pattern.
				if strings.Contains(strings.ToLower(a), "opx") {
					return a
				}
				continue
			}
			if k+1 < len(r.Argv) && strings.Contains(strings.ToLower(r.Argv[k+1]), "opx") {
				return a + " " + r.Argv[k+1]
			}
		}
	}
	return ""
}

// listsBeneath reports whether r is read by a program that lists every
// name beneath it: find, du, tree, ls -R.
func listsBeneath(r *Ref, f *Facts) bool {
	switch r.By {
	case "find", "du", "tree", "fd", "fdfind":
		return true
	case "ls":
		for i := range f.Runs {
			if f.Runs[i].Name != "ls" {
				continue
			}
			for _, a := range f.Runs[i].Argv[1:] {
				if a == "--recursive" || len(a) > 1 && a[0] == '-' && a[1] != '-' && strings.ContainsRune(a, 'R') {
					return true
				}
			}
		}
	}
	return false
}

// nearState reports whether p is at or beneath the directory two above
// a protected path's (~/.local for ~/.local/state/opx): a listing that
// starts there reaches the state's names.
func (s *Shield) nearState(p string) bool {
	for _, prot := range s.protected {
		if d := path.Dir(path.Dir(prot)); d != "/" && d != s.cfg.Home && within(p, d) {
			return true
		}
	}
	return false
}

// namesState returns the protected path a text names, or "": the text
// is canonicalized first (canonText: quotes and backslashes dropped,
// $HOME, ${HOME}, ~ and $XDG_STATE_HOME expanded, every path cleaned of
// "//", "." and ".." walks), then compared with each protected path
// and its literal spellings.
func (s *Shield) namesState(text string) string {
	if !strings.Contains(text, "opx") && !strings.ContainsAny(text, `'"\`) {
		return ""
	}
	canon := s.canonText(text)
	for _, lit := range s.literals {
		if i := strings.Index(canon, lit); i >= 0 {
			if end := i + len(lit); end == len(canon) || !pathByte(canon[end]) || canon[end] == '/' {
				return lit
			}
		}
	}
	return ""
}

// canonText is text with the state's spellings undone: quotes and
// backslashes dropped, the home's and the state home's names expanded,
// and every word that is a path cleaned (path.Clean: "//", "/./" and
// ".." walks resolved).
func (s *Shield) canonText(text string) string {
	text = strings.NewReplacer(`"`, "", "'", "", `\`, "").Replace(text)
	stateHome := ""
	if s.cfg.Home != "" {
		stateHome = s.cfg.Home + "/.local/state"
	}
	for _, prot := range s.protected {
		if path.Base(prot) == "opx" {
			stateHome = path.Dir(prot)
			break
		}
	}
	if stateHome != "" {
		for _, v := range []string{"${XDG_STATE_HOME}", "$XDG_STATE_HOME"} {
			text = strings.ReplaceAll(text, v, stateHome)
		}
		for {
			i := strings.Index(text, "${XDG_STATE_HOME:")
			if i < 0 {
				break
			}
			j := strings.IndexByte(text[i:], '}')
			if j < 0 {
				break
			}
			text = text[:i] + stateHome + text[i+j+1:]
		}
	}
	if h := s.cfg.Home; h != "" {
		text = strings.NewReplacer("${HOME}", h, "$HOME", h).Replace(text)
	}
	var b strings.Builder
	b.Grow(len(text))
	for i := 0; i < len(text); {
		if !pathByte(text[i]) {
			b.WriteByte(text[i])
			i++
			continue
		}
		j := i
		for j < len(text) && pathByte(text[j]) {
			j++
		}
		w := text[i:j]
		if s.cfg.Home != "" && (w == "~" || strings.HasPrefix(w, "~/")) {
			w = s.cfg.Home + w[1:]
		}
		if strings.HasPrefix(w, "/") {
			w = path.Clean(w)
		}
		b.WriteString(w)
		i = j
	}
	return b.String()
}

// pathByte reports whether c can be part of a path as canonText reads
// one.
func pathByte(c byte) bool {
	return c == '/' || c == '.' || c == '~' || c == '-' || c == '_' || c == '*' || c == '?' || c == '+' || c == '@' || c == '%' ||
		'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
}

// gitCleanExcludes reports whether every git clean the facts run
// excludes name (-e NAME, -eNAME, --exclude=NAME, with or without a
// trailing slash or a leading "/").
func gitCleanExcludes(f *Facts, name string) bool {
	cleans := 0
	for i := range f.Runs {
		argv := f.Runs[i].Argv
		if f.Runs[i].Name != "git" || !slices.Contains(argv, "clean") {
			continue
		}
		cleans++
		ok := false
		for k, a := range argv {
			v := ""
			switch {
			case (a == "-e" || a == "--exclude") && k+1 < len(argv):
				v = argv[k+1]
			case strings.HasPrefix(a, "--exclude="):
				v = a[len("--exclude="):]
			case strings.HasPrefix(a, "-e") && len(a) > 2 && !strings.HasPrefix(a, "--"):
				v = a[2:]
			}
			if strings.Trim(v, "/") == name {
				ok = true
			}
		}
		if !ok {
			return false
		}
	}
	return cleans > 0
}

// by names who touches r, for reasons, and the symlink that led there.
func by(r *Ref) string {
	who := r.By
	if who == "" {
		who = "the action"
	}
	if r.Via != "" {
		who += " (through a symlink: " + r.Via + " resolves to " + r.Path + ")"
	}
	return who
}

// viaNote says, for a path rule that matched, which path matched only as
// the filesystem resolved it: " (s/key resolves through a symlink to
// /ws/secrets/key)"; "" when the path as written matched, or none did.
func viaNote(pats []pathPattern, f *Facts) string {
	if len(pats) == 0 {
		return ""
	}
	for _, refs := range [][]Ref{f.Reads, f.Writes, f.Deletes} {
		for i := range refs {
			r := &refs[i]
			if r.Via == "" {
				continue
			}
			for j := range pats {
				if pats[j].matchRef(r) {
					return " (" + r.Via + " resolves through a symlink to " + r.Path + ")"
				}
			}
		}
	}
	return ""
}

// rateLimit blocks a session proposing faster than the limit.
func (s *Shield) rateLimit(session string) (Verdict, bool) {
	now := s.cfg.Now()
	s.mu.Lock()
	defer s.mu.Unlock()
	// Times are appended in order: drop the expired prefix.
	times := s.recent[session]
	i := 0
	for i < len(times) && now.Sub(times[i]) >= time.Minute {
		i++
	}
	times = times[i:]
	if len(times) >= s.cfg.RateLimit {
		s.recent[session] = times
		return Verdict{Block, 0, "rate-limit", fmt.Sprintf("more than %d proposals in a minute in this session", s.cfg.RateLimit)}, true
	}
	s.recent[session] = append(times, now)
	return Verdict{}, false
}
