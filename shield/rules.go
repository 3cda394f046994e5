package shield

import (
	"fmt"
	"path"
	"strings"
)

// Tier 1: built-in rules, each with a stable name recorded as the
// verdict's rule (docs/shield-rules.md lists them all). They judge the
// facts of an action (what it reads, writes, deletes, reaches, runs and
// carries), not the text it is written in. A rule blocks what is harmful
// whatever the intent, and escalates (to a human, tier 3) what is
// suspicious but plausibly benign. The policy cannot silence a rule: it
// can trust a host (network.allow_hosts), not unsee a credential.

// judgement collects the rules' findings: the first block wins, else the
// first escalation.
type judgement struct {
	v   Verdict
	set bool
	// inner: judging a line nested in something being judged; nested
	// lines are not judged again.
	inner bool
	// keep, if set, says which rules count (the others' findings are
	// dropped).
	keep func(rule string) bool
	// watch, if set, is the keep of a second judgement the same pass
	// serves (askedChange's beside Evaluate's): unwatched is set once a
	// finding watch would drop changes this verdict. Until then both
	// judgements went through the same states, so the rules (which read
	// set and blocked) took the same paths, and the one with keep=watch
	// ends where this one does: same verdict, no second pass.
	watch     func(rule string) bool
	unwatched bool
	// code is the changed code lines of each text (codeLines), read once
	// for the rules that judge them (rules 22 and 26).
	code map[string]codeDiff
}

// codeDiff is a text's added and removed lines, comments dropped.
type codeDiff struct{ plus, minus []string }

// codeLines returns the lines body adds to old and removes from it,
// comment lines dropped (diffLinesKept, maxLines20), read once per text
// for one judgement.
func (j *judgement) codeLines(src, body, old string) ([]string, []string) {
	key := src + "\x00" + body + "\x00" + old // a source written twice has two texts
	if d, ok := j.code[key]; ok {
		return d.plus, d.minus
	}
	plus, minus := diffLinesKept(body, old, func(l string) bool { return !commentLine(l) }, maxLines20)
	// rules 29: a line padded past what the pairwise readers compare
	// (400 bytes) by a comment is read without the comment
	for _, ls := range [][]string{plus, minus} {
		for i, l := range ls {
			if len(l) > 400 {
				ls[i] = withoutComments(l)
			}
		}
	}
	if j.code == nil {
		j.code = map[string]codeDiff{}
	}
	j.code[key] = codeDiff{plus, minus}
	return plus, minus
}

func (j *judgement) block(rule, format string, args ...any) {
	if j.keep != nil && !j.keep(rule) {
		return
	}
	if !j.blocked() {
		j.changing(rule)
		j.v, j.set = Verdict{Block, 1, rule, clip(fmt.Sprintf(format, args...), 300)}, true
	}
}

func (j *judgement) escalate(rule, format string, args ...any) {
	if j.keep != nil && !j.keep(rule) {
		return
	}
	if !j.set {
		j.changing(rule)
		j.v, j.set = Verdict{Escalate, 3, rule, clip(fmt.Sprintf(format, args...), 300)}, true
	}
}

// changing notes, before rule's finding changes the verdict, whether
// the watched judgement would have dropped it.
func (j *judgement) changing(rule string) {
	if j.watch != nil && !j.unwatched && !j.watch(rule) {
		j.unwatched = true
	}
}

func (j *judgement) blocked() bool { return j.set && j.v.Decision == Block }

// ruleFunc is one family of tier 1 rules.
type ruleFunc func(s *Shield, a *Action, f *Facts, j *judgement)

// tier1 returns the verdict of the first rule that blocks, else of the
// first that escalates; false when none has anything to say.
func (s *Shield) tier1(a *Action, f *Facts) (Verdict, bool) {
	var j judgement
	s.runRules(a, f, &j)
	return j.v, j.set
}

// runRules runs the tier 1 rules in order until one blocks.
// Every text is normalized once first (normalizeText): the rules judge
// what a reader sees.
func (s *Shield) runRules(a *Action, f *Facts, j *judgement) {
	raw := f
	f, hidden := normalizedFacts(f)
	rules := [...]ruleFunc{
		(*Shield).pipeToShell,
		(*Shield).encodedPayload,
		(*Shield).credentials,
		(*Shield).frameworkSecrets,
		(*Shield).credentialSearch,
		(*Shield).credentialStore,
		(*Shield).agentFileWrite,
		(*Shield).runsLater,
		(*Shield).agentFileOutside,
		(*Shield).destructive,
		(*Shield).workspaceDestruction,
		(*Shield).frameworkDestruction,
		(*Shield).gitDestruction,
		(*Shield).checksWeakened,
		(*Shield).checksLoosenedRule,
		(*Shield).appsecWeakened,
		(*Shield).laterDestruction,
		(*Shield).decodedAtRuntime,
		(*Shield).writtenObfuscation,
		(*Shield).piecedWritten,
		(*Shield).makeDefault,
		(*Shield).remoteRunner,
		(*Shield).jvmCommands,
		(*Shield).memoryPermission,
		(*Shield).persistenceWritten,
		(*Shield).rules29,
		(*Shield).rules29CommandText,
		(*Shield).perlObfuscated,
		(*Shield).braceCommand,
		(*Shield).tunnel,
		(*Shield).credentialMint,
		(*Shield).supplyChain,
		(*Shield).buildCommands,
		(*Shield).pullRequestRun,
		(*Shield).channelSource,
		(*Shield).codeFlagURL,
		(*Shield).lookalikePackages,
		(*Shield).lookalikeChanges,
		(*Shield).opsConfigText,
		(*Shield).writtenDoes,
		(*Shield).containerBuild,
		(*Shield).evasion,
		(*Shield).repoEvasion,
		(*Shield).taintedEgress,
		(*Shield).writtenSink,
		(*Shield).writtenRemote,
		(*Shield).writtenTracker,
		(*Shield).appBackdoor,
		(*Shield).fetchThenRun,
		(*Shield).pinsAndLocks,
		(*Shield).purposeDeletes,
		(*Shield).governingEdited,
		(*Shield).shippedAndTrusted,
		(*Shield).telemetryPersonal,
		(*Shield).sqlDestruction,
		(*Shield).prebuiltLinked,
		(*Shield).warningInverted,
		(*Shield).changedThenRun,
		(*Shield).network,
		(*Shield).queryData,
		(*Shield).secrets,
		(*Shield).scriptContent,
		(*Shield).memoryInstruction,
		(*Shield).memoryCommand,
		(*Shield).promptInjection,
		(*Shield).addressedText,
		(*Shield).forgeText,
		(*Shield).commitCarries,
		(*Shield).agentTask,
		// Rules 12 (k27h): what commands, memory and requests reach.
		(*Shield).stagedSecrets,
		(*Shield).codeSourcesAdded,
		(*Shield).reconSearch,
		(*Shield).memoryDestination,
		(*Shield).numericHosts,
		(*Shield).secretsShown,
		(*Shield).installSource,
		(*Shield).gateLowered,
		(*Shield).rules18,
		(*Shield).rules19,
		(*Shield).rules19b,
		(*Shield).rules19c,
		(*Shield).rules20,
		(*Shield).rules20b,
		(*Shield).rules21,
		(*Shield).rules21b,
		(*Shield).rules21c,
		(*Shield).rules22,
		(*Shield).rules26,
		(*Shield).rules29Supply,
		(*Shield).rules29Commands,
		(*Shield).tooLargeToJudge,
		(*Shield).unknown,
	}
	for _, r := range rules {
		r(s, a, f, j)
		if j.blocked() {
			return
		}
	}
	s.hiddenCharacters(a, f, hidden, j)
	s.deceptiveText(raw, j)
	s.deceptiveCommand(a, j)
}

// judgeLine judges a shell line found inside something else (a script
// being written, decoded data) as tiers -1 and 1 would judge it as a
// command, without judging what it nests in turn. With keep, only the
// tier 1 rules it keeps count (and tier -1 does not).
func (s *Shield) judgeLine(line string, keep func(rule string) bool) (Verdict, bool, Facts) {
	a := Action{Tool: "execute_command", Command: line}
	f := s.facts(&a)
	if v, ok := s.hardcoded(&a, &f); ok && keep == nil {
		return v, true, f
	}
	j := judgement{inner: true, keep: keep}
	s.runRules(&a, &f, &j)
	return j.v, j.set, f
}

// tooLargeToJudge is `input:too-large-to-judge`: text longer than the
// rules search (maxTextJudged) is judged by its beginning and asked
// about, never cut silently and allowed: the end of a 4 MiB Makefile
// runs as surely as its beginning.
func (s *Shield) tooLargeToJudge(a *Action, f *Facts, j *judgement) {
	for _, t := range f.Texts {
		if len(t.Body) > maxTextJudged {
			j.escalate("input:too-large-to-judge", "the %s is %d bytes, more than the %d Shield judges", textName(t.Source), len(t.Body), maxTextJudged)
			return
		}
	}
	if len(a.Command) > maxTextJudged {
		j.escalate("input:too-large-to-judge", "the command is %d bytes, more than the %d Shield judges", len(a.Command), maxTextJudged)
	}
}

// unknown escalates what cannot be understood: a line that does not
// parse, a computed command name or target. Never allowed unseen.
func (s *Shield) unknown(a *Action, f *Facts, j *judgement) {
	// A program named by a variable the workspace declares as a program
	// ("$UNITY_PATH" in its scripts' command position) is known to be
	// that program, and one computed from a shell setup's output (eval
	// "$(opam env)") is that setup (rules 12, rules_toolchain.go).
	unknown := f.Unknown[:0:0]
	for _, u := range f.Unknown {
		if !declaredVariableProgram(a, u) && !shellSetup(u) {
			unknown = append(unknown, u)
		}
	}
	if len(unknown) == 0 {
		return
	}
	more := ""
	if n := len(unknown); n > 1 {
		more = fmt.Sprintf(" (and %d more)", n-1)
	}
	j.escalate("shell:unknown", "what the action does cannot be fully known: %s%s", unknown[0], more)
}

// ruleSet is tier 1 compiled for one workspace and home.
type ruleSet struct {
	creds []credPattern
	// credIx, laterIx, devIx and histIx index the patterns (see
	// patternIndex).
	credIx, laterIx, devIx, histIx patternIndex
	later                          []laterPattern
	devices                        []pathPattern
	history                        []pathPattern
	hostsMeta                      []string
}

// credPattern is a path that holds secrets.
type credPattern struct {
	pathPattern
	// env patterns spare templates (.env.example and the like); so do
	// the patterns by name of rules 15 (kubeconfig.example).
	env bool
}

// laterPattern is a path whose content another program runs later,
// outside any sandbox.
type laterPattern struct {
	pathPattern
	rule string
	// ask: a write in the workspace escalates rather than blocks (CI
	// workflows, hook managers, editor settings are edited by benign
	// work too; their content is judged by script-content).
	ask bool
}

// homes are the homes a "~/" pattern is instantiated for: the user's,
// root's and every other user's (reading /root/.ssh or
// /home/bob/.aws is no better than reading ~/.ssh).
func homes(home string) []string {
	var out []string
	if home != "" && !(strings.HasPrefix(home, "/home/") && strings.Count(home, "/") == 2) {
		out = append(out, home) // /home/* covers /home/<user>
	}
	if home != "/root" {
		out = append(out, "/root")
	}
	return append(out, "/home/*")
}

// expand compiles a rule glob: "~/x" for every home, "/x" as is, "x"
// (no slash) or "**/x" as a base-name pattern, "w:x" relative to the
// workspace.
func expand(g, ws, home string) []pathPattern {
	switch {
	case strings.HasPrefix(g, "~/"):
		var out []pathPattern
		for _, h := range homes(home) {
			out = append(out, compilePattern(g, path.Join(h, g[2:])))
		}
		return out
	case strings.HasPrefix(g, "w:"):
		return []pathPattern{compilePattern(g[2:], path.Join(ws, g[2:]))}
	default:
		return []pathPattern{compilePattern(g, g)}
	}
}

// compileRules compiles the tier 1 path patterns for cfg.
func compileRules(cfg Config) *ruleSet {
	rs := &ruleSet{hostsMeta: metadataHosts}
	for _, g := range credentialGlobs {
		env := strings.Contains(g, ".env") || strings.Contains(g, "kubeconfig") || strings.HasPrefix(g, "*.pass") || strings.HasPrefix(g, "*.secret") || g == "*.token" || g == "*.credentials"
		for _, p := range expand(g, cfg.Workspace, cfg.Home) {
			rs.creds = append(rs.creds, credPattern{p, env})
		}
	}
	pats := make([]pathPattern, len(rs.creds))
	for i := range rs.creds {
		pats[i] = rs.creds[i].pathPattern
	}
	rs.credIx = indexPatterns(pats)
	for _, l := range laterGlobs {
		for _, p := range expand(l.glob, cfg.Workspace, cfg.Home) {
			rs.later = append(rs.later, laterPattern{p, l.rule, l.ask})
		}
	}
	for _, g := range historyGlobs {
		rs.history = append(rs.history, expand(g, cfg.Workspace, cfg.Home)...)
	}
	for _, g := range deviceGlobs {
		rs.devices = append(rs.devices, compilePattern(g, g))
	}
	later := make([]pathPattern, len(rs.later))
	for i := range rs.later {
		later[i] = rs.later[i].pathPattern
	}
	rs.laterIx, rs.devIx, rs.histIx = indexPatterns(later), indexPatterns(rs.devices), indexPatterns(rs.history)
	return rs
}

// isTemplate reports whether a base name is a template of an env file,
// which by convention holds no secrets (.env.example, prod.env.sample).
func isTemplate(base string) bool {
	for _, suf := range []string{".example", ".sample", ".template", ".dist", ".tmpl", ".tpl", ".defaults", ".schema"} {
		if strings.HasSuffix(base, suf) {
			return true
		}
	}
	return false
}

// envSource reports whether base is source code named after the
// environment (".env.ts", ".env.d.ts", ".env.go": a module that reads
// it), not an env file: spared by the env patterns as templates are.
func envSource(base string) bool {
	return strings.HasPrefix(base, ".env.") && sourceExts[path.Ext(base)]
}

// genericGlob reports whether a base-name pattern names nothing in
// particular: "*" or "*.ext".
func genericGlob(base string) bool {
	return base == "*" || strings.HasPrefix(base, "*.") && !hasMeta(base[2:])
}

// specificName reports whether a credential pattern is a particular base
// name ("credentials.json", "*service-account*.json", "id_rsa*") rather
// than a kind of file ("*.pem") or a place ("~/.ssh/**").
func specificName(src string) bool {
	return !strings.Contains(src, "/") && !genericGlob(src)
}

// publicKeyMaterial reports whether r names only what ssh publishes: a
// public key (*.pub, a glob included when its literal suffix is ".pub")
// or known_hosts. Neither is a secret: a public key is handed to every
// server it logs in to, known_hosts holds the servers' public keys. A
// recursive read (everything under ~/.ssh) is not this, nor is a glob
// that could reach a private key (~/.ssh/id_*).
func publicKeyMaterial(r *Ref, base string) bool {
	if r.Tree {
		return false
	}
	if strings.HasSuffix(base, ".pub") && !strings.ContainsAny(base[:len(base)-4], "/") {
		return !r.Glob || !hasMeta(path.Ext(base))
	}
	return !r.Glob && (base == "known_hosts" || base == "known_hosts.old")
}

// credential returns the credential pattern r could touch, or "".
func (s *Shield) credential(r *Ref) string {
	segs := splitPath(r.Path)
	base := segs[len(segs)-1]
	if publicKeyMaterial(r, base) || !r.Tree && !r.Glob && publicByName(base) {
		return ""
	}
	template := isTemplate(base) || envSource(base)
	generic := r.Glob && genericGlob(base)
	found := ""
	s.rules.credIx.each(segs, func(i int) bool {
		c := &s.rules.creds[i]
		if generic && specificName(c.src) {
			// `*.json` could match credentials.json, as it could match any
			// name: a pattern that names nothing in particular is not a
			// read of a credential named in particular (`*.pem`, `.env*`,
			// `~/.ssh/*` still are).
			return false
		}
		if (!c.env || !template) && c.matchSplit(r, segs) {
			found = c.src
			return true
		}
		return false
	})
	if found == "" {
		found = s.credentialByShape(r, segs)
	}
	return found
}

func clip(s string, n int) string {
	if len(s) > n {
		return s[:n] + "..."
	}
	return s
}

// quote shortens a command line or text for a reason.
func quote(s string) string { return fmt.Sprintf("%q", clip(s, 120)) }

// withoutComments returns line without its comments (// and # to the
// end, /* … */), quotes respected; bounded by the line's length.
func withoutComments(line string) string {
	var b strings.Builder
	var quote byte
	for i := 0; i < len(line); i++ {
		c := line[i]
		switch {
		case quote != 0:
			if c == '\\' && i+1 < len(line) {
				b.WriteByte(c)
				i++
				c = line[i]
			} else if c == quote {
				quote = 0
			}
		case c == '"' || c == '\'' || c == '`':
			quote = c
		case c == '/' && i+1 < len(line) && line[i+1] == '/', c == '#' && (i == 0 || line[i-1] == ' ' || line[i-1] == '\t'):
			return strings.TrimRight(b.String(), " \t")
		case c == '/' && i+1 < len(line) && line[i+1] == '*':
			end := strings.Index(line[i+2:], "*/")
			if end < 0 {
				return strings.TrimRight(b.String(), " \t")
			}
			i += end + 3
			continue
		}
		b.WriteByte(c)
	}
	return b.String()
}
