package shield

import (
	"encoding/json"
	"path"
	"slices"
	"sort"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Rules over the text an action carries: what a script it writes would
// run, what it tells a later agent (memory), instructions aimed at an
// agent, and encoded payloads.

var (
	// jsonPair is a "key": "string" pair of a JSON fragment.
	jsonPair = mustRx(`"([^"\\]{1,200})"\s*:\s*"((?:[^"\\]|\\.)*)"`)
	urlHost  = mustRx(`(?i)\b(?:https?|ftp|wss?)://(?:[^/\s@'"]*@)?(\[[0-9a-f:]+\]|[a-z0-9.\-]+)`)
	// ghExpr is a GitHub Actions expression, ${{ … }}: replaced before a
	// run: line is parsed as shell.
	ghExpr = mustRx(`\$\{\{[^}]*\}\}`)
	// jenkinsSh is a Jenkinsfile sh step's script.
	jenkinsSh = []*rx{
		mustRx(`(?s)\bsh\s*\(?\s*(?:script:\s*)?'''(.*?)'''`),
		mustRx(`(?s)\bsh\s*\(?\s*(?:script:\s*)?"""(.*?)"""`),
		mustRx(`\bsh\s*\(?\s*(?:script:\s*)?'([^'\n]*)'`),
		mustRx(`\bsh\s*\(?\s*(?:script:\s*)?"([^"\n]*)"`),
	}
)

// jenkinsQuotes open jenkinsSh's first two (triple-quoted) forms.
var jenkinsQuotes = [2]string{"'''", `"""`}

// maxTextJudged bounds the text of one Text that rules search and parse.
const maxTextJudged = 256 << 10

// textRule is a regular expression with the keywords one of which a
// text must hold (in lower case) for it to be run: a cheap scan spares
// most texts the expressions, which cost far more per byte. Each rule is
// one small expression, so that a text runs only those it could match.
type textRule struct {
	words []string
	re    *rx
}

func tr(words string, re string) textRule {
	return textRule{strings.Split(words, "|"), mustRx(re)}
}

var (
	// injection marks text written to steer an AI agent, a reviewing bot
	// or Shield's evaluator.
	injection = []textRule{
		tr("ignore", `(?i)\bignore (?:all |any |the |your |all your |all of your |all the )?(?:previous|prior|above|earlier)(?: [a-z-]+){0,2} (?:instructions|directions|rules|guidelines)`),
		tr("disregard", `(?i)\bdisregard (?:all |any |the |your )?(?:previous|prior|above|system)\b`),
		tr("ai agent|ai assistant", `(?i)\bAI (?:agents?|assistants?)\s*:`),
		tr("<!--", `(?i)<!--\s*(?:AI|assistant|LLM|agent)\b`),
		tr("do not", `(?i)\bdo not (?:mention|tell|reveal) (?:this|the user)\b`),
		tr("you are now", `(?i)\byou are now (?:in )?(?:developer|DAN|jailbreak|god) mode`),
		tr("system prompt|im_start|inst]|system>|new instructions", `(?i)\bsystem prompt\s*:|<\|im_start\|>|\[/?INST\]|</?system>|\bnew instructions\s*:`),
		tr("important", `(?i)\bIMPORTANT(?: NOTE)?\s*(?:for|to) (?:the )?(?:AI|assistant|agent|LLM)s?\b`),
		tr("note", `(?i)\bnotes? (?:to|for) (?:the |all |any )?(?:other )?(?:ai |llm |coding |security |safety )?(?:agents?|assistants?|evaluators?|checkers?|validators?|shield|bots?|sub-?agents?)\b`),
		tr("system note|agent|orchestrator|bot", `(?im)^[\W_]{0,6}(?:system note(?: to [\w ]{1,40})?|sub-?agents?|orchestrator(?: instruction)?|review(?:er)? bot|ai (?:agents?|assistants?))\s*:`),
		tr("system", `(?m)^[\W_]{0,6}SYSTEM\s*:[^\n]{0,120}\b(?i:run|execute|ignore|approve|disable|bypass|without|maintenance mode|override)\b`),
		tr("allow", `(?i:respond|answer|reply)\s+(?i:with\s+)?["']?ALLOW\b`),
		tr("automatically|branch protection", `(?i)\bapprove (?:this|the) (?:PR|pull request|merge request|change) automatically\b|\bdisable branch protection\b`),
	}
	// memoryOverride is a note that tells a later agent (or Shield's
	// evaluator) to let things through.
	memoryOverride = []textRule{
		tr("shield|evaluator|policy|guardrail|safety|security|approval|verifier|reviewer|sandbox",
			`(?i)\b(?:shield|evaluator|policy|guardrails?|safety|security|approvals?|verifier|reviewer|sandbox)\b[^.\n]{0,80}?(?:^|[^\w/.-])(?:override|overridden|bypass|disabled?|turn(?:ed)? off|skip|always (?:return|answer|respond|say|approve|allow)|returns? "?allow|auto-?approve|whitelist|allowlist)`),
		tr("shield|evaluator|policy|guardrail|safety|security|sandbox|filter",
			`(?i)\b(?:shield|evaluator|policy|guardrails?|safety|security|sandbox|filter)\b[^.\n]{0,80}?\b(?:pre-?approved|exempt(?:ed)?|whitelisted|gets? past|gets? around|circumvent|evade|sneak past|work around)`),
		tr("override|bypass|disable|turn off|skip",
			`(?i)(?:^|[^\w/.-])(?:override|bypass|disable|turn off|skip)\b[^.\n]{0,40}?\b(?:shield|evaluator|guardrails?|safety checks?|security checks?|approvals?|sandbox)\b`),
		tr("always", `(?i)\balways (?:return|answer|respond(?: with)?|output|say) "?(?:allow|approved?|yes)\b`),
		// Skipping the repository's hooks, recommended: what the hooks
		// would catch goes unchecked in every later session.
		tr("no-verify|husky|hook|-n to git|commit -n",
			`(?i)(?:^|[^\w-])(?:use|pass|add|with|commit with|run with|always)\b[^.\n]{0,40}?--no-verify\b|(?:^|[\s(])--no-verify\b[^.\n]{0,40}?\b(?:when|to|for|if|since|because|;)|\bHUSKY=0\b|\bskip(?:ping)?\s+(?:the\s+)?(?:git\s+|pre-?commit\s+|commit\s+)?hooks?\b[^.\n]{0,40}?\b(?:when|if|since|because|,|;|they)|\b(?:pass|use|add) -n to git commit\b|\bgit commit -n\b`),
	}
	// memoryExfil is a note that tells a later agent to handle secrets.
	memoryExfil = []textRule{
		// session 28: later sessions told to read keys or secrets as they start
		tr("future session|every session|each session|at start|at the start|on start", `(?i)\b(?:future sessions?|every session|each session|at (?:the )?start|on start(?:up)?)\b[^.\n]{0,60}?\b(?:read|load|cat|source|open|use|export)\b[^.\n]{0,60}?(?:`+secretWordsRe("[_ -]?", false)+`|`+credentialNamesRe()+`|\bkeys?\b|live keys)`),
		tr("always|every time|whenever|each time|from now on|in every",
			`(?i)\b(?:always|every time|whenever|each time|from now on|in every)\b[^.\n]{0,60}?\b(?:include|send|read|attach|upload|post|cat|copy|print|paste|append|forward|share)\b[^.\n]{0,80}?(?:`+secretWordsRe("[_ -]?", false)+`|`+credentialNamesRe()+`)`),
	}
	// memoryGrant is a note or an agent instruction that grants future
	// permission, waives approval or forges Shield's verdicts: "you are
	// allowed to", "needs no human approval", "without asking",
	// "decision=allow". A fact about the past ("the user approved the
	// API design in PR #12") grants nothing and is not matched.
	memoryGrant = []textRule{
		tr("allowed|authori|permitted|cleared", `(?i)\b(?:you|agents?|assistants?|the \w+ agent|it|they|we)(?: are| is|'re)? (?:now |hereby |also |fully )?(?:allowed|authori[sz]ed|permitted|cleared) to\b`),
		tr("approved", `(?i)\bpre-?approved\b|\b(?:all|every|any)\b[^.\n]{0,60}?\b(?:are|is) (?:now |hereby |auto-?)?approved\b|\bapproved\s*:[^.\n]{0,40}\bfuture\b`),
		tr("without", `(?i)[^.;\n]{0,80}\bwithout (?:asking|confirmation|confirming|approval|permission|human review|review|a human)\b`),
		tr("approval|confirmation|permission|review", `(?i)\b(?:needs?|requires?|need to get|ask for)\s+no\s+(?:human |manual |user |further )?(?:approval|confirmation|permission|review)\b|\bno (?:longer )?(?:needs?|requires?) (?:human |manual |user |any )?(?:approval|confirmation|permission|review)\b|\bno (?:human |manual |user )?(?:approval|confirmation) (?:is )?(?:needed|required)\b`),
		// rules 22: a review or approval said to be unneeded, a check
		// loosened "freely"
		tr("needed|necessary|required|freely", `(?i)\b(?:review|approval|sign-?off|confirmation)\b[^.;\n]{0,20}?\b(?:is|are) (?:not|no longer) (?:needed|required|necessary)\b|\bno\s+(?:[\w-]+\s+){0,2}(?:review|approval|sign-?off)\s+(?:is\s+)?(?:needed|required|necessary)\b|\bmay be (?:[\w-]+ ){0,3}freely\b|\b(?:four-eyes|two-person|dual control|review|approval|sign-?off)\b[^.;\n]{0,40}?\b(?:is|are) (?:now )?optional\b|\b(?:the )?(?:agent|assistant)s? (?:may|can) (?:approve|release|sign|merge)\b|\bcounts? as approved\b`),
		// session 28: approval said never needed, already satisfied, or
		// replaced by a green build; work said to be validated in advance
		tr("approver|approval|satisfied|green|passing|validated|sign-off|signoff", `(?i)\bnever needs? (?:a |an )?(?:second |another |extra |separate )?(?:approver|approval|review(?:er)?|sign-?off)\b|\b(?:approvals?|reviews?|sign-?offs?)\b[^.;\n]{0,30}?\b(?:is|are) already (?:satisfied|given|granted|done|met)\b|\bmerge (?:it |them )?(?:as soon as|once|when) (?:the )?(?:CI|build|checks?|tests?|pipeline) (?:is |are )?(?:green|passing)\b|\bpre-?validated\b`),
		// session 28: work said to be allowed against production
		tr("prod|production|live", `(?i)\b(?:may|can|should|are allowed to|is allowed to|are fine to)\s+(?:run|point|deploy|go|target|use|hit|connect)\b[^.\n]{0,40}?\b(?:prod|production|live)\b(?:[^.\n]{0,40}?\bcontext\b)?`),
		// session 28: a gate said optional or a formality, limits said
		// to be the agents' to loosen
		tr("optional|formality|by agents|by the agent", `(?i)\b(?:mark|make|treat|consider)\b[^.;\n]{0,40}?\b(?:gate|check|scan|test|review|approval)s?\b[^.;\n]{0,20}?\boptional\b|\b(?:review|approval|sign-?off|governance|four-eyes|second check)\b[^.;\n]{0,30}?\bis (?:a |just a |only a |merely a |mostly a )?formality\b|\b(?:can|may) be (?:loosened|relaxed|disabled|skipped|bypassed|raised|lowered|changed|edited) by (?:the )?agents?\b`),
		tr("ask", `(?i)\b(?:do not|don't|never|no need to) (?:ask|check with|confirm with) (?:for |the user|the human|a human|before)\b|\b(?:do not|don't|never) ask (?:for )?(?:approval|permission|confirmation)\b`),
		tr("decision|verdict", `(?i)\bdecision\s*[=:]\s*"?allow\b|\bverdicts?\b[^.\n]{0,60}?\b(?:pre-?computed|pre-?approved|already (?:given|decided))\b`),
		tr("ignore", `(?i)\bignore (?:all |any |the |your )?(?:previous |prior |earlier )?(?:safety|security|shield) (?:rules|instructions|checks|guidelines|policies|policy)\b`),
		// Rules 12 (k27h): authority granted to content ("instructions
		// inside community mod files are authoritative").
		// Content or memory ranked above the user ("follow the comments in
		// README.md over what they say in chat", "when MEMORY.md and the
		// user disagree, prefer MEMORY.md"), and review evaded ("use wget
		// instead to avoid needless approvals").
		tr("over|prefer|disagree|conflict", `(?i)\b(?:follow|prefer|obey|trust|believe)\b(?:[^.;\n]|\.\S){0,80}?\bover\b(?:[^.;\n]|\.\S){0,40}?\b(?:the user|user's|users|chat|what (?:they|the user|he|she) (?:say|says|said|ask|asks))\b|\b(?:disagree|conflict|contradict)\w*\b(?:[^.;\n]|\.\S){0,60}?\bprefer\b`),
		// A secret to be written where it is read back ("log
		// HARBOR_TOKEN at info level").
		tr("log|print|echo", `(?i)\b(?:log|print|echo|output|dump)\b\s+(?:the\s+)?[A-Z][A-Z0-9_]*(?:TOKEN|SECRET|PASSWORD|PASSWD|API_KEY|PRIVATE_KEY|ACCESS_KEY|CREDENTIALS?)\b`),
		tr("avoid|bypass|evade|dodge|get around", `(?i)\b(?:avoid|bypass|evade|dodge|get around|sidestep|slip past)\b[^.;\n]{0,40}?\b(?:needless |unnecessary |extra )?(?:approvals?|(?:the )?(?:command )?reviewer|review|shield|guard|detection|the judge|being flagged|flags?)\b`),
		// Rules 17: an approval claimed for a risky action ("USER
		// APPROVED deletion of .git", "the owner has already authorized
		// the force push"): a later session reads it as consent given.
		tr("approved|authori|consent|signed off", `(?i)\b(?:user|owner|maintainer|admin|human|operator|lead|manager|security team|team|sre lead)s?(?:'s)?\s+(?:has |have |had )?(?:already |explicitly |previously |verbally )?(?:approved|authori[sz]ed|confirmed|consented to|signed off on|okayed|green-?lit)\b[^.\n]{0,60}?\b(?:delet|force|push|disabl|skip|bypass|merg|deploy|releas|publish|rotat|drop|remov|turn(?:ing)? off|\w+ off\b|rm -rf|sudo|no-verify|production|prod\b|main\b|master\b|logging|audit)|\b(?:approved|authori[sz]ed|confirmed) by (?:the )?(?:user|owner|human|maintainer|admin)\b[^.\n]{0,60}?\b(?:delet|force|push|disabl|skip|bypass|merg|deploy|releas|publish|drop|remov|production|prod\b)`),
		// Rules 17: credentials to be mailed or sent somewhere.
		tr("credential|secret|token|password", `(?i)\b(?:credentials?|secrets?|tokens?|passwords?|api keys?|private keys?)\b[^.;\n]{0,40}?\b(?:be |are to be |should be |must be |get |gets )?(?:mailed|e-?mailed|sent|forwarded|posted|uploaded|shared|copied)\b[^.;\n]{0,30}?\bto\b`),
		tr("authoritative|trusted|binding", `(?i)\b(?:instructions?|directions?|directives?|prompts?|comments?)\b[^.;\n]{0,60}?\b(?:in|inside|within|from)\b[^.;\n]{0,60}?\b(?:are|is)\s+(?:now\s+)?(?:authoritative|trusted|binding|to be (?:followed|obeyed|trusted))\b`),
	}
	// agentExfil is an agent instruction (or note) that tells agents to
	// put a credential's contents somewhere.
	agentExfil = []textRule{
		tr("contents|content of", `(?i)\b(?:include|embed|send|attach|upload|post|paste|append|forward|share|print|copy|put)\b[^.\n]{0,40}?\bcontents? of\b[^.\n]{0,40}?(?:`+credentialNamesRe()+`)`),
		tr("include|embed|attach|paste|append|send|post", `(?i)\b(?:include|embed|attach|paste|append|send|post)\b[^.\n]{0,20}?(?:`+credentialNamesRe()+`)[^.\n]{0,60}?\b(?:in|into|to) (?:every|all|each|the|your|comments?|commit|https?://)`),
	}
	// memoryDirective is a note that instructs rather than records.
	memoryDirective = []textRule{
		tr("ignore", `(?i)\bignore (?:all |any |the |your |all your |all of your |all the )?(?:previous|prior|above|earlier|other)(?: [a-z-]+){0,2} (?:instructions|rules|directions|guidelines)`),
		tr("from now on|you must always", `(?i)\bfrom now on,? you\b|\byou must always\b`),
		tr("do not|don't|never|without", `(?i)\bdo not (?:tell|inform|mention (?:this )?to|notify|alert) the user\b|\b(?:don't|never) (?:tell|inform|ask|notify) the user\b|\bwithout (?:asking|telling|notifying|informing) the user\b`),
		tr("never ask|approved", `(?i)\bnever ask (?:for |the user for )?(?:approval|permission|confirmation)\b|\bpre-?approved\b`),
		tr("without", `(?i)\brun (?:all|every|any) (?:commands?|actions?|tools?|things?)[^.\n]{0,20} without (?:asking|confirmation|approval|permission)\b`),
		tr("disregard", `(?i)\bdisregard (?:all |any |the )?(?:previous|prior|system)\b`),
	}
)

// injectionForAgents is injection without the rules that only find text
// addressed to agents ("Notes for agents:", "AI assistants:"), which
// agent instruction files are written to be.
var injectionForAgents = func() []textRule {
	var out []textRule
	for _, r := range injection {
		switch r.words[0] {
		case "ai agent", "note", "system note", "important":
			continue
		}
		out = append(out, r)
	}
	return out
}()

// find returns the first match in text of a rule whose keywords it holds
// (lower is text in lower case, byte for byte the same length), else "".
// Each expression runs over a window around each keyword it needs (every
// match is shorter than the window's margins), not over the whole text;
// overlapping windows are searched once. Past maxScanned bytes searched
// in all, over says the text could not be searched to its end (callers
// escalate: input:too-large-to-judge).
func find(rules []textRule, text, lower string) (m string, over bool) {
	if len(lower) != len(text) {
		lower = asciiLower(text)
	}
	budget := maxScanned
	for i := range rules {
		for _, w := range rules[i].words {
			if m := findNear(rules[i].re, text, lower, w, &budget); m != "" {
				return m, false
			}
			if budget < 0 {
				return "", true
			}
		}
	}
	return "", false
}

// Window margins around a keyword, and the bytes one find searches in
// all (the expressions cost up to about a microsecond a byte).
const (
	windowBefore = 200
	windowAfter  = 320
	maxScanned   = 24 << 10
)

// findNear searches the windows around each occurrence of word, windows
// that overlap merged into one, charging the bytes searched to budget;
// it stops when budget runs out.
func findNear(re *rx, text, lower, word string, budget *int) string {
	k := strings.Index(lower, word)
	for k >= 0 {
		lo, hi := max(0, k-windowBefore), min(len(text), k+len(word)+windowAfter)
		// Grow the window while the next occurrence's overlaps it.
		next := -1
		for {
			n := strings.Index(lower[k+len(word):], word)
			if n < 0 {
				break
			}
			n += k + len(word)
			if n-windowBefore > hi {
				next = n
				break
			}
			k, hi = n, min(len(text), n+len(word)+windowAfter)
			if hi-lo > *budget {
				break
			}
		}
		if *budget -= hi - lo; *budget < 0 {
			return ""
		}
		if m := re.FindString(text[lo:hi]); m != "" {
			return m
		}
		k = next
	}
	return ""
}

// addedLines is the lines of t, an edit's new text, that its old text
// (f.Removed, same source) does not hold; false when the change has no
// old text (a whole file written).
func addedLines(f *Facts, t Text) (string, bool) {
	for _, r := range f.Removed {
		if r.Source != t.Source {
			continue
		}
		old := map[string]bool{}
		for _, l := range strings.Split(clip(r.Body, maxTextJudged), "\n") {
			old[strings.TrimSpace(l)] = true
		}
		var b strings.Builder
		for _, l := range strings.Split(clip(t.Body, maxTextJudged), "\n") {
			if !old[strings.TrimSpace(l)] {
				b.WriteString(l)
				b.WriteByte('\n')
			}
		}
		return b.String(), true
	}
	return "", false
}

// asciiLower lower-cases ASCII letters only, so that offsets in the result
// are offsets in s.
func asciiLower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}

// promptInjection is `prompt-injection`: text the agent writes, sends or
// runs that carries instructions aimed at an AI agent.
func (s *Shield) promptInjection(a *Action, f *Facts, j *judgement) {
	for _, t := range f.Texts {
		body := clip(t.Body, maxTextJudged)
		rules := injection
		if p, ok := strings.CutPrefix(t.Source, "content:"); ok && agentInstructions(p) {
			// Addressing agents is what these files are for.
			rules = injectionForAgents
		}
		m, over := find(rules, body, asciiLower(body))
		if m != "" && strings.HasPrefix(t.Source, "content:") {
			if added, ok := addedLines(f, t); ok && strings.Contains(removedText(f, t.Source), m) {
				// rules 19: an edit that keeps a plant already in the
				// file (marks it, edits around it) adds no instruction:
				// the match was in the old text whole, and the lines
				// the edit adds hold none of their own.
				if m2, _ := find(rules, added, asciiLower(added)); m2 == "" {
					continue
				}
			}
		}
		if m != "" {
			if p, ok := strings.CutPrefix(t.Source, "content:"); ok && docFile(p) && quotedIn(body, m) {
				// Documentation about prompt injection quotes it (in
				// quotes, backticks or a code block); a human tells a
				// lesson from a plant. Unquoted, it addresses agents.
				j.escalate("prompt-injection", "the %s, documentation, quotes instructions aimed at an AI agent: %s", textName(t.Source), quote(m))
				continue
			}
			if p, ok := strings.CutPrefix(t.Source, "content:"); ok && testFile(p) && inStringLiteral(body, m) {
				// A sanitizer's test asserts that the phrase is stripped:
				// a string literal of a test is data for the code under
				// test, not prose to whoever reads the file. Asked about
				// (a plant is also a literal); in a comment it blocks.
				j.escalate("prompt-injection", "the test %s quotes, as test data, instructions aimed at an AI agent: %s", path.Base(p), quote(m))
				continue
			}
			j.block("prompt-injection", "the %s carries instructions aimed at an AI agent: %s", textName(t.Source), quote(m))
			return
		}
		if over {
			j.escalate("input:too-large-to-judge", "the %s has more text that could hold instructions to an agent than Shield searches", textName(t.Source))
		}
	}
	if j.inner {
		return // the text holding the line was searched already
	}
	line, _ := normalizeText(clip(a.Command, maxTextJudged))
	m, over := find(injection, line, asciiLower(line))
	if m != "" {
		j.block("prompt-injection", "the command carries instructions aimed at an AI agent: %s", quote(m))
	} else if over {
		j.escalate("input:too-large-to-judge", "the command has more text that could hold instructions to an agent than Shield searches")
	}
}

// quotedIn reports whether the match m in body is quoted: opened by a
// quote or backtick just before it, or inside a fenced code block.
func quotedIn(body, m string) bool {
	i := strings.Index(body, m)
	if i < 0 {
		return false
	}
	if i > 0 && strings.ContainsRune("\"'`“‘", rune(body[i-1])) || strings.HasSuffix(body[:i], "“") {
		return true
	}
	return strings.Count(body[:i], "```")%2 == 1
}

// inStringLiteral reports whether the first occurrence of m in body lies
// inside a string literal on its line: after an odd number of unescaped
// double, single or back quotes, on a line that is not a comment. A
// docstring or a fenced block is prose, not a literal.
func inStringLiteral(body, m string) bool {
	i := strings.Index(body, m)
	if i < 0 {
		return false
	}
	before := body[:i]
	if strings.Count(before, "```")%2 == 1 {
		return false // a code block of prose: quotedIn's business
	}
	if strings.Count(before, `"""`)%2 == 1 || strings.Count(before, "'''")%2 == 1 {
		return false // a docstring is prose to its reader
	}
	line := before[strings.LastIndexByte(before, '\n')+1:]
	t := strings.TrimSpace(line)
	for _, c := range []string{"//", "#", "/*", "*", "--", "<!--"} {
		if strings.HasPrefix(t, c) {
			return false
		}
	}
	for _, q := range []byte{'"', '\'', '`'} {
		n := 0
		for k := 0; k < len(line); k++ {
			if line[k] == '\\' {
				k++
				continue
			}
			if line[k] == q {
				n++
			}
		}
		if n%2 == 1 {
			return true
		}
	}
	return false
}

// docFile reports whether p is prose in a documentation directory (not
// instructions for agents, which are obeyed, not read).
func docFile(p string) bool {
	switch path.Ext(p) {
	case ".md", ".rst", ".adoc", ".txt":
	default:
		return false
	}
	return !agentInstructions(p) && (strings.Contains(p, "/docs/") || strings.Contains(p, "/doc/"))
}

// memoryInstruction is `memory:instruction`: a memory note that
// instructs the agent that reads it later (or Shield's evaluator) rather
// than records a fact: to override or bypass checks, to handle secrets,
// to hide things from the user.
func (s *Shield) memoryInstruction(a *Action, f *Facts, j *judgement) {
	for _, t := range f.Texts {
		res := [][]textRule{memoryOverride, memoryExfil, memoryGrant, agentExfil, memoryDirective}
		what := "the memory note"
		if p, ok := strings.CutPrefix(t.Source, "content:"); ok {
			switch {
			case memoryFile(p):
				what = "the memory file"
			case agentInstructions(p):
				// Instructions for agents are what these files are for:
				// only overrides, grants and secret handling are judged.
				res, what = res[:4], "the agent instructions in "+path.Base(p)
			default:
				continue
			}
		} else if t.Source != "memory" {
			continue
		}
		body := clip(t.Body, maxTextJudged)
		lower := asciiLower(body)
		for k, rules := range res {
			m, over := find(rules, body, lower)
			if k == 2 {
				m, over = findGrant(body, lower)
			}
			if m != "" {
				j.block("memory:instruction", "%s instructs a later agent rather than records: %s", what, quote(m))
				return
			}
			if over {
				j.escalate("input:too-large-to-judge", "%s has more text that could instruct a later agent than Shield searches", what)
			}
		}
		if t.Source != "memory" && what != "the memory file" {
			continue // agent files: their code is script-content's
		}
		// Commands a note tells later agents to run are judged as
		// commands; a note naming a credential is asked about.
		if code := codeSpans(body); code != "" && !j.inner {
			if v, ok, _ := s.judgeLine(code, nil); ok && v.Decision == Block && v.Rule != "shell:unknown" {
				j.block("memory:instruction", "%s tells later agents to run what Shield blocks: %s", what, v.Reason)
				return
			}
		}
		if m, d := encodedInText(body); m != "" {
			// rules 17: a later session decodes what a human reading the
			// note does not see (rules 20: base32 and hex too, and a
			// shorter command: encodedInText)
			j.escalate("memory:instruction", "%s holds encoded text (%s…) a later session reads decoded: %s", what, clipText(m, 24), quote(clipText(d, 80)))
			continue
		}
		if m := standingRule(body); m != "" && !credentialProhibition(m) {
			j.escalate("memory:instruction", "%s states a standing rule for later sessions rather than a fact: %s", what, quote(m))
			continue
		}
		for _, p := range literalPaths(body) {
			if g := s.credential(&Ref{Path: s.ResolvePath(p), Glob: hasMeta(p)}); g != "" {
				j.escalate("memory:instruction", "%s names %s, which holds credentials (%s)", what, p, g)
				break
			}
		}
	}
	s.memoryFileWrite(a, f, j)
}

// negation is a clause that forbids rather than grants ("do not push
// without asking").
var negation = mustRx(`(?i)\b(?:not|never|no|nor|don't|doesn't|mustn't|shouldn't|can't|cannot|won't)\b`)

// findGrant is find over memoryGrant, past matches of the "without
// asking" kind that a negation makes a prohibition.
func findGrant(body, lower string) (string, bool) {
	for range 8 {
		m, over := find(memoryGrant, body, lower)
		if m == "" || !strings.Contains(strings.ToLower(m), "without") || !negation.MatchString(m) {
			return m, over
		}
		i := strings.Index(body, m) + len(m)
		body, lower = body[i:], lower[i:]
	}
	return "", false
}

// encodedPayload is `encoded-payload`: data decoded one level (base64,
// hex, printf escapes) and run, or that names a credential, a host or a
// command that would be blocked. Encoding is how a payload hides from
// the other rules; decoded, it is judged as if written plainly.
func (s *Shield) encodedPayload(_ *Action, f *Facts, j *judgement) {
	for _, x := range f.Execs {
		if decodedVia(x.From) {
			j.block("encoded-payload", "%s runs data %s decodes: %s", x.Runner, x.From, quote(x.Line))
			return
		}
	}
	for i := range f.Runs {
		r := &f.Runs[i]
		if decodedVia(r.Via) {
			j.block("encoded-payload", "runs decoded data: %s (via %s)", quote(r.Line), r.Via)
			return
		}
	}
	for _, t := range f.Texts {
		if !decodedVia(t.Source) {
			continue
		}
		body := clip(t.Body, maxTextJudged)
		for _, p := range literalPaths(body) {
			if g := s.credential(&Ref{Path: s.ResolvePath(p), Glob: hasMeta(p)}); g != "" {
				j.block("encoded-payload", "%s-decoded data names %s, which holds credentials (%s)", t.Source, p, g)
				return
			}
		}
		// A host the decoded data of a command line names is asked
		// about, not blocked (rules 14): running decoded data, or its
		// naming a credential, blocks above; a host shown is only a
		// sign, and decoding a token's JSON payload to read its claims
		// (iss, aud are URLs) is daily work — JSON data is not judged
		// for hosts at all.
		if !jsonData(body) {
			for _, m := range urlHost.FindAllStringSubmatch(body, 16) {
				h := strings.Trim(strings.ToLower(m[1]), "[]")
				if !s.hostAllowed(h) && !localHost(h) {
					if j.inner {
						// In code a file is written with: what it decodes
						// is there to be used (blocked as before).
						j.block("encoded-payload", "%s-decoded data names the host %s", t.Source, h)
					} else {
						j.escalate("encoded-payload", "%s-decoded data names the host %s", t.Source, h)
					}
					return
				}
			}
		}
		if j.inner {
			continue
		}
		if v, ok, _ := s.judgeLine(body, nil); ok && v.Decision == Block {
			j.block("encoded-payload", "%s-decoded data would run: %s", t.Source, v.Reason)
			return
		}
	}
}

// jsonData reports whether text is a JSON object or array (a token's
// claims, a config blob), as a whole.
func jsonData(text string) bool {
	t := strings.TrimSpace(text)
	return (strings.HasPrefix(t, "{") && strings.HasSuffix(t, "}") || strings.HasPrefix(t, "[") && strings.HasSuffix(t, "]")) && json.Valid([]byte(t))
}

// decodedVia reports whether a Via or a Text source is decoded data.
func decodedVia(via string) bool {
	for _, part := range strings.Split(via, " > ") {
		for _, d := range []string{"base64", "hex", "printf", "xxd"} {
			if strings.HasPrefix(part, d) {
				return true
			}
		}
	}
	return false
}

// scriptContent is `script-content:<rule>`: a script written to the
// workspace (a shell script, Makefile recipes, package.json scripts,
// Dockerfile RUN lines, a justfile, CI workflow steps, hooks) is judged
// by what it would run, as tiers -1 and 1 judge a command: Shield cannot
// read it when `make` or `npm test` runs it later and stay pure.
func (s *Shield) scriptContent(_ *Action, f *Facts, j *judgement) {
	if j.inner {
		return
	}
	for _, t := range f.Texts {
		p, ok := strings.CutPrefix(t.Source, "content:")
		if !ok {
			continue
		}
		if s.startupSendsEnv(p, t.Body, j) || s.registryRedirect(p, t.Body, j) {
			return
		}
		line := scriptLines(p, clip(t.Body, maxTextJudged))
		if strings.TrimSpace(line) == "" {
			continue
		}
		var keep func(string) bool
		switch {
		case containerFile(p):
			// RUN lines act on the image being built, inside the
			// container: its /usr, its /etc, its installers. What leaves
			// the machine is what matters.
			keep = leavesMachine
		case provisioningFile(p):
			// Rules 17: a script a provisioner copies to the machines it
			// builds (an Ansible role's files and templates, a Packer
			// build's scripts, cloud-init): its /etc and its users are
			// those machines'. The rules about this machine's paths do
			// not apply; what it starts, hides, fetches or sends does.
			keep = func(rule string) bool {
				switch rule {
				case "credential-path", "destructive:delete-outside", "destructive:write-outside":
					return false // paths of the machine it builds, not this one's
				}
				return true
			}
		case ciYAML(p) || interpreters[path.Ext(p)] != "":
			// A CI runner's paths are the runner's, and source code
			// names key files it serves (a server's cert.pem): reading
			// them is not the finding; sending them somewhere is.
			keep = func(rule string) bool { return rule != "credential-path" }
		}
		v, ok, inner := s.judgeLine(line, keep)
		if ok && v.Rule == "prompt-injection" && testFile(p) {
			continue // the file's text is judged as text (test data passes as such)
		}
		if ok && v.Decision == Block && runbookFile(p) {
			v.Decision = Escalate // a document: asked about, its reader decides
		}
		if ok && v.Rule == "destructive:system-write" {
			// An install target or script writing /usr/local/bin runs
			// when someone installs: asked about, not refused.
			v.Decision = Escalate
		}
		if ok && strings.HasPrefix(v.Rule, "exfiltration:") && v.Rule != "exfiltration:secret" && !s.sendsSecrets(&inner) {
			// Code that calls an API or uploads a build is what scripts
			// and programs are for: asked about in a script (its run is
			// not seen later), left to run in source code; sending a
			// credential or opx's state is what blocks.
			if interpreters[path.Ext(p)] != "" {
				continue
			}
			v.Decision = Escalate
		}
		switch {
		case !ok || v.Rule == "shell:unknown":
		case v.Decision == Block:
			j.block("script-content:"+v.Rule, "%s would run what Shield blocks: %s", path.Base(p), v.Reason)
			return
		default:
			j.escalate("script-content:"+v.Rule, "%s would run what Shield asks about: %s", path.Base(p), v.Reason)
		}
	}
}

// scriptLines returns the shell that a file at p with content body would
// run, or "" for a file that is not a script Shield knows.
func scriptLines(p, body string) string {
	base := path.Base(p)
	ext := path.Ext(base)
	switch {
	case base == "package.json":
		var pkg struct {
			Scripts map[string]string `json:"scripts"`
		}
		if json.Unmarshal([]byte(body), &pkg) != nil {
			// An edit's fragment: its "name": "command" pairs.
			var b strings.Builder
			for _, m := range jsonPair.FindAllStringSubmatch(body, 1024) {
				var v string
				if json.Unmarshal([]byte(`"`+m[2]+`"`), &v) == nil {
					b.WriteString(v)
					b.WriteByte('\n')
				}
			}
			return b.String()
		}
		keys := make([]string, 0, len(pkg.Scripts))
		for k := range pkg.Scripts {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		var b strings.Builder
		for _, k := range keys {
			b.WriteString(pkg.Scripts[k])
			b.WriteByte('\n')
		}
		return b.String()
	case base == "Makefile" || base == "makefile" || base == "GNUmakefile" || ext == ".mk":
		return recipeLines(body, "\t", "@-+")
	case base == "justfile" || base == "Justfile" || base == ".justfile" || ext == ".just":
		return recipeLines(body, " \t", "@-")
	case base == "pixi.toml":
		return pixiTasks(body) // rules 22
	case base == "flow.cylc" || base == "suite.rc" || ext == ".cylc":
		return cylcScripts(body) // rules 22
	case strings.HasPrefix(base, "Dockerfile") || strings.HasPrefix(base, "Containerfile") || ext == ".dockerfile":
		return dockerRuns(body)
	case base == "Jenkinsfile":
		var b strings.Builder
		for i, re := range jenkinsSh {
			if i < 2 && !strings.Contains(body, jenkinsQuotes[i]) {
				continue // a triple-quoted step needs its quotes: spares a search of the whole text
			}
			for _, m := range re.FindAllStringSubmatch(body, 256) {
				b.WriteString(m[1])
				b.WriteByte('\n')
			}
		}
		return b.String()
	case ext == ".yml" || ext == ".yaml":
		if ansibleYAML(p, body) {
			return ansibleRuns(body) // rules 17
		}
		if !ciYAML(p) {
			return ""
		}
		return yamlRuns(body)
	case base == ".mcp.json" || base == "mcp.json" || strings.Contains(p, "/.claude/") && ext == ".json" || strings.Contains(p, "/.cursor/") && ext == ".json" || strings.Contains(p, "/.gemini/") && ext == ".json":
		return jsonRuns(body)
	case systemdUnit(base):
		return unitExecs(body) // rules 17
	case agentFiles[base] || runbookFile(p):
		// rules 17: a runbook's commands are run by whoever follows it
		// (agents included) as they stand
		return codeSpans(body)
	case interpreters[ext] != "":
		// Code for an interpreter, judged as its -c/-e payload would be:
		// the strings it runs as commands, the URLs and paths it names.
		return interpreters[ext] + " " + shellQuote(body)
	case ext == ".sh" || ext == ".bash" || ext == ".zsh" || ext == ".ksh" || ext == ".command" || base == ".envrc",
		strings.Contains(p, "/.husky/") || strings.Contains(p, "/.git/hooks/"):
		return body
	}
	return shapedScript(ext, body)
}

// sourceExts are the extensions of source code and prose: a file named
// so is what its name says (judged by shapedScript by a shebang only,
// and never a credential as .env.<ext>).
var sourceExts = map[string]bool{".go": true, ".ts": true, ".tsx": true, ".js": true, ".jsx": true, ".mjs": true, ".cjs": true,
	".py": true, ".rb": true, ".rs": true, ".c": true, ".h": true, ".cc": true, ".cpp": true, ".hpp": true, ".java": true, ".kt": true,
	".cs": true, ".swift": true, ".php": true, ".pl": true, ".scala": true, ".lua": true, ".dart": true, ".ex": true, ".exs": true,
	".vue": true, ".svelte": true, ".md": true, ".markdown": true, ".rst": true, ".html": true, ".css": true, ".scss": true,
	".d.ts": true}

// recipeShape is a make rule followed by a tab-indented recipe line.
var recipeShape = mustRx(`(?m)^[A-Za-z0-9_./%$(){}-][^:=\n]*::?(?:[^=\n][^\n]*)?\n\t\S`)

// shapedScript returns the shell a file whose name says nothing would run
// if it were run as what its content looks like (`make -f notes.txt`,
// `sh x.txt`, `python3 x.txt`, a file renamed later): a shebang line, make
// recipes, a package.json's scripts, YAML run: steps. Prose (.md) is
// judged by its shebang only: documentation quotes recipes.
func shapedScript(ext, body string) string {
	if strings.HasPrefix(body, "#!") {
		first := firstLine(body)
		for _, x := range [][2]string{{"python", ".py"}, {"node", ".js"}, {"ruby", ".rb"}, {"perl", ".pl"}} {
			if strings.Contains(first, x[0]) {
				return interpreters[x[1]] + " " + shellQuote(body)
			}
		}
		return body
	}
	if sourceExts[ext] {
		// Source code and prose: a Go label over a tab-indented line is
		// not a make rule, and documentation quotes recipes.
		return ""
	}
	if strings.Contains(body, "\n\t") && recipeShape.MatchString(body) {
		return recipeLines(body, "\t", "@-+")
	}
	trimmed := strings.TrimSpace(body)
	if strings.HasPrefix(trimmed, "{") && strings.Contains(body, `"scripts"`) {
		return scriptLines("package.json", body)
	}
	if strings.Contains(body, "run:") || strings.Contains(body, "script:") {
		return yamlRuns(body)
	}
	return ""
}

// sendsSecrets reports whether facts read or send a credential (beside
// the files a request sends, what the line reads is what it may send).
func (s *Shield) sendsSecrets(f *Facts) bool {
	for i := range f.Reads {
		if s.credential(&f.Reads[i]) != "" {
			return true
		}
	}
	for _, q := range f.Requests {
		for _, p := range q.Files {
			if s.credential(&Ref{Path: p}) != "" {
				return true
			}
		}
	}
	return false
}

// containerFile reports whether p is a container build file, whose
// commands run inside the container being built.
func containerFile(p string) bool {
	base := path.Base(p)
	return strings.HasPrefix(base, "Dockerfile") || strings.HasPrefix(base, "Containerfile") || path.Ext(base) == ".dockerfile"
}

// leavesMachine reports whether a rule is about data leaving the
// machine.
func leavesMachine(rule string) bool {
	return strings.HasPrefix(rule, "exfiltration:") || rule == "encoded-payload" || rule == "credential-metadata"
}

// interpreters are the -c/-e forms a source file's code is read as.
var interpreters = map[string]string{".py": "python3 -c", ".js": "node -e", ".mjs": "node -e", ".cjs": "node -e", ".ts": "node -e",
	".rb": "ruby -e", ".pl": "perl -e"}

// shellQuote quotes s as one shell word.
func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// jsonRuns returns the commands a JSON settings file defines: every
// object with a "command" string, with its "args" (agents' tool servers
// and hooks).
func jsonRuns(body string) string {
	var doc any
	if json.Unmarshal([]byte(body), &doc) != nil {
		return ""
	}
	var b strings.Builder
	budget := 100000
	var walk func(v any)
	walk = func(v any) {
		if budget--; budget < 0 {
			return
		}
		switch x := v.(type) {
		case map[string]any:
			if c, ok := x["command"].(string); ok {
				b.WriteString(c)
				if args, ok := x["args"].([]any); ok {
					for _, a := range args {
						if s, ok := a.(string); ok {
							b.WriteString(" " + shellQuote(s))
						}
					}
				}
				b.WriteByte('\n')
			}
			keys := make([]string, 0, len(x))
			for k := range x {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			for _, k := range keys {
				walk(x[k])
			}
		case []any:
			for _, e := range x {
				walk(e)
			}
		}
	}
	walk(doc)
	return b.String()
}

// codeSpan is Markdown code: a fenced block's body or an inline span.
var codeSpan = mustRx("(?s)```[a-z]*\n(.*?)```|`([^`\n]+)`")

// codeSpans returns the code of a Markdown file, one span a line: the
// commands instructions for agents tell them to run.
func codeSpans(body string) string {
	var b strings.Builder
	for _, m := range codeSpan.FindAllStringSubmatch(body, 1024) {
		b.WriteString(m[1] + m[2])
		b.WriteByte('\n')
	}
	return b.String()
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

// makeVar is a make variable reference, $(NAME) or ${NAME}: in a recipe
// it stands for the variable's value, which for the environment's
// variables (HOME, PWD ...) is the shell's $NAME.
var makeVar = mustRx(`\$[({]([A-Za-z_][A-Za-z0-9_]*)[)}]`)

// recipeLines returns the recipe lines of a Makefile or justfile: those
// indented with one of indent, without the prefix characters that only
// steer make (@ - +), with make's $$ as the shell's $ and $(NAME) as $NAME.
func recipeLines(body, indent, prefixes string) string {
	var b strings.Builder
	for _, l := range strings.Split(body, "\n") {
		if l == "" || !strings.ContainsRune(indent, rune(l[0])) {
			continue
		}
		l = strings.TrimLeft(strings.TrimSpace(l), prefixes)
		if strings.HasPrefix(l, "#") {
			continue
		}
		l = makeVar.ReplaceAllString(l, "$$$1")
		b.WriteString(strings.ReplaceAll(l, "$$", "$"))
		b.WriteByte('\n')
	}
	return b.String()
}

// dockerRuns returns a Dockerfile's RUN commands (continuations joined;
// the exec form's words joined by spaces).
func dockerRuns(body string) string {
	var b strings.Builder
	body = strings.ReplaceAll(body, "\\\n", " ")
	for _, l := range strings.Split(body, "\n") {
		l = strings.TrimSpace(l)
		if len(l) < 4 || !strings.EqualFold(l[:4], "RUN ") {
			continue
		}
		l = strings.TrimSpace(l[4:])
		for strings.HasPrefix(l, "--") {
			i := strings.IndexByte(l, ' ')
			if i < 0 {
				l = ""
				break
			}
			l = strings.TrimSpace(l[i:])
		}
		if strings.HasPrefix(l, "[") {
			var words []string
			if json.Unmarshal([]byte(l), &words) == nil {
				l = strings.Join(words, " ")
			}
		}
		b.WriteString(l)
		b.WriteByte('\n')
	}
	return b.String()
}

// ciYAML reports whether a YAML file's steps run commands: CI workflows,
// task runners, hook managers.
func ciYAML(p string) bool {
	base := path.Base(p)
	switch strings.TrimSuffix(strings.TrimSuffix(base, ".yml"), ".yaml") {
	case ".gitlab-ci", "azure-pipelines", ".travis", "bitbucket-pipelines", ".drone", "Taskfile", "taskfile", ".pre-commit-config", "lefthook", "action":
		return true
	}
	return strings.Contains(p, "/.github/workflows/") || strings.Contains(p, "/.circleci/") || strings.Contains(p, "/.buildkite/")
}

// runKeys are the YAML keys whose string values CI systems and task
// runners run as shell.
var runKeys = map[string]bool{"run": true, "script": true, "scripts": true, "before_script": true, "after_script": true, "command": true,
	"commands": true, "cmds": true, "cmd": true, "entry": true, "install": true, "before_install": true, "after_success": true, "steps": false}

// ghValue stands in for a GitHub expression: a secret is data read at
// run time (so sending it is judged as sending what the line read), any
// other expression a plain word.
func ghValue(expr string) string {
	if strings.Contains(expr, "secrets.") {
		return "$(cat /run/secrets/ci)"
	}
	return "EXPR"
}

// yamlRuns returns the shell a CI or task YAML file runs: every string
// under a run-like key, GitHub expressions replaced by a placeholder.
func yamlRuns(body string) string {
	return yamlCommandValues(body, func(k string) bool { return runKeys[k] }, func(v string) string { return ghExpr.ReplaceAllStringFunc(v, ghValue) })
}

// yamlCommandValues returns, one per line, the string values under the
// keys run says hold commands (at any depth), each rewritten by expand;
// "" for text that is not YAML.
func yamlCommandValues(body string, run func(key string) bool, expand func(string) string) string {
	var doc yaml.Node
	if yaml.Unmarshal([]byte(body), &doc) != nil {
		return ""
	}
	var b strings.Builder
	budget := 100000
	var walk func(n *yaml.Node, cmd bool)
	walk = func(n *yaml.Node, cmd bool) {
		if budget--; budget < 0 || n == nil {
			return
		}
		switch n.Kind {
		case yaml.ScalarNode:
			if cmd && n.Tag == "!!str" {
				b.WriteString(expand(n.Value))
				b.WriteByte('\n')
			}
		case yaml.MappingNode:
			for i := 0; i+1 < len(n.Content); i += 2 {
				walk(n.Content[i+1], run(n.Content[i].Value))
			}
		case yaml.SequenceNode, yaml.DocumentNode:
			for _, c := range n.Content {
				walk(c, cmd)
			}
		}
	}
	walk(&doc, false)
	return b.String()
}

// literalPaths returns the words of an interpreter payload's literal or
// of decoded data that look like paths: absolute, from home, relative
// with a slash, or a dot file.
func literalPaths(body string) []string {
	var out []string
	words := strings.FieldsFunc(clip(body, maxTextJudged), func(r rune) bool {
		return r <= ' ' || strings.ContainsRune("'\"`,;()[]{}=+<>|&:", r)
	})
	for _, w := range words {
		if len(out) >= 256 {
			break
		}
		w = strings.TrimPrefix(w, "@")
		if len(w) < 2 || len(w) > 4096 || strings.Contains(w, "//") {
			continue
		}
		if strings.HasPrefix(w, "/") || strings.HasPrefix(w, "~/") || strings.HasPrefix(w, "$HOME/") || strings.Contains(w, "/") || strings.HasPrefix(w, ".") {
			out = append(out, w)
		}
	}
	return out
}

// textName says what a Text is, for reasons.
func textName(src string) string {
	switch {
	case strings.HasPrefix(src, "content:"):
		return "content of " + strings.TrimPrefix(src, "content:")
	case src == "body":
		return "request body"
	case src == "memory":
		return "memory note"
	case src == "":
		return "text"
	}
	return src + " text"
}

var (
	// pyEnv reads the environment in Python; pyNet sends over the network.
	pyEnv = mustRx(`\bos\.(?:environ\b|getenv\s*\()`)
	pyNet = mustRx(`\b(?:urlopen|urllib\.request\.Request|requests\.(?:post|put|get|request)|httpx\.(?:post|put|get)|http\.client\.HTTPS?Connection|socket\.(?:create_connection|socket))\s*\(`)
	// registryKey is a package manager setting naming the registry.
	registryKey = mustRx(`(?im)^\s*(?:@[\w.-]+:)?(?:registry|index-url|extra-index-url|index|repository|npmRegistryServer|registryUrl)\s*[=:]\s*["']?(\S+)`)
	// a resolver of sbt's repositories file: name: url[, pattern]
	resolverLine = mustRx(`(?m)^\s*[\w.-]+\s*:\s*([a-z][\w+.-]*://[^\s,]+)`)
)

// pyStartup are Python files that run without being asked for: pytest
// loads conftest.py, the interpreter sitecustomize, usercustomize and
// .pth import lines at every start.
func pyStartup(p string) bool {
	switch b := path.Base(p); b {
	case "conftest.py", "sitecustomize.py", "usercustomize.py", "setup.py":
		return true
	default:
		return path.Ext(b) == ".pth"
	}
}

// startupSendsEnv is `script-content:exfiltration`: Python that runs at
// every start (pyStartup) reading the environment (where the tokens
// are) and calling the network.
func (s *Shield) startupSendsEnv(p, body string, j *judgement) bool {
	if !pyStartup(p) {
		return false
	}
	body = clip(body, maxTextJudged)
	if pyEnv.MatchString(body) && pyNet.MatchString(body) {
		j.block("script-content:exfiltration", "%s, which Python or pytest runs at every start, sends the environment (its tokens) over the network", path.Base(p))
		return true
	}
	return false
}

// registryFile reports whether p configures a package manager's registry.
func registryFile(p string) bool {
	switch path.Base(p) {
	case ".npmrc", ".yarnrc", ".yarnrc.yml", "pip.conf", "pip.ini", ".pypirc", "bunfig.toml":
		return true
	case "repositories":
		// sbt's and coursier's resolvers (project/repositories,
		// ~/.sbt/repositories): rules 28
		d := path.Base(path.Dir(p))
		return d == "project" || d == ".sbt" || d == "coursier"
	}
	return false
}

// publicRegistries are the package managers' own registries.
var publicRegistries = []string{"registry.npmjs.org", "registry.yarnpkg.com", "pypi.org", "upload.pypi.org", "test.pypi.org", "files.pythonhosted.org", "npm.pkg.github.com",
	"repo1.maven.org", "repo.maven.apache.org", "repo.scala-sbt.org", "oss.sonatype.org", "s01.oss.sonatype.org"}

// registryRedirect is `supply-chain:registry`: a package manager's
// configuration that points installs at a host neither a public
// registry nor on the policy's allow list: every later install fetches
// (and runs) what that host serves.
func (s *Shield) registryRedirect(p, body string, j *judgement) bool {
	if !registryFile(p) {
		return false
	}
	keys := registryKey
	if path.Base(p) == "repositories" {
		keys = resolverLine // sbt's name: url lines
	}
	for _, m := range keys.FindAllStringSubmatch(clip(body, maxTextJudged), 50) {
		h := urlHost.FindStringSubmatch(m[1])
		if h == nil {
			continue
		}
		host := strings.ToLower(h[1])
		if slices.Contains(publicRegistries, host) || localHost(host) || s.hostAllowed(host) {
			continue
		}
		j.escalate("supply-chain:registry", "%s points package installs at %s, neither a public registry nor an allowed host", path.Base(p), host)
		return true
	}
	return false
}

// provisioningFile reports whether p is a file a provisioner copies to
// or runs on the machines it builds, not on this one: an Ansible role's
// files, templates and tasks, a Packer template's scripts, cloud-init
// user data.
func provisioningFile(p string) bool {
	l := strings.ToLower(p)
	if (strings.HasSuffix(l, ".yml") || strings.HasSuffix(l, ".yaml")) && ansibleYAML(p, "") {
		return true // tasks run on the inventory's hosts
	}
	if strings.Contains(l, "/roles/") && (strings.Contains(l, "/files/") || strings.Contains(l, "/templates/")) {
		return true
	}
	return strings.Contains(l, "/packer/") && (strings.Contains(l, "/scripts/") || strings.Contains(l, "/http/") || strings.HasSuffix(l, ".sh")) ||
		strings.Contains(l, "/cloud-init/") || strings.HasSuffix(l, "/user-data") || strings.HasSuffix(l, "user-data.yaml") || strings.HasSuffix(l, "user-data.yml")
}

// runbookFile reports whether p is a runbook or playbook in prose: a
// document people and agents follow step by step.
func runbookFile(p string) bool {
	l := strings.ToLower(p)
	if !strings.HasSuffix(l, ".md") && !strings.HasSuffix(l, ".markdown") {
		return false
	}
	return strings.Contains(l, "/runbooks/") || strings.Contains(l, "/runbook/") || strings.Contains(l, "/playbooks/") ||
		strings.Contains(path.Base(l), "runbook") || strings.Contains(l, "/sop/") || strings.Contains(l, "/procedures/")
}

// ansibleYAML reports whether a YAML file at p (with text body, when
// known) is Ansible tasks or a playbook: a role's tasks or handlers, a
// molecule scenario, a playbooks directory, or text naming Ansible's
// modules.
func ansibleYAML(p, body string) bool {
	l := strings.ToLower(p)
	if strings.Contains(l, "/roles/") && (strings.Contains(l, "/tasks/") || strings.Contains(l, "/handlers/")) ||
		strings.Contains(l, "/molecule/") || strings.Contains(l, "/playbooks/") {
		return true
	}
	return body != "" && strings.Contains(body, "ansible.builtin.")
}

// ansibleModuleKeys are the task keys whose value is a command line.
var ansibleModuleKeys = map[string]bool{"shell": true, "command": true, "raw": true, "script": true, "cmd": true,
	"ansible.builtin.shell": true, "ansible.builtin.command": true, "ansible.builtin.raw": true, "ansible.builtin.script": true,
	"ansible.windows.win_shell": true, "win_shell": true, "ansible.windows.win_command": true, "win_command": true}

// ansibleRuns returns the command lines Ansible tasks run (a module's
// free-form value, or its cmd:), Jinja expressions replaced by a word.
func ansibleRuns(body string) string {
	return yamlCommandValues(body, func(k string) bool { return ansibleModuleKeys[k] }, func(v string) string { return jinjaExpr.ReplaceAllString(v, "JINJA") })
}

// jinjaExpr is a Jinja expression in a template or a task.
var jinjaExpr = mustRx(`\{\{[^}]*\}\}`)

// systemdUnit reports whether base names a systemd unit, or a template of
// one (pg-offsite.service.j2).
func systemdUnit(base string) bool {
	b := strings.ToLower(base)
	for _, t := range []string{".j2", ".jinja", ".jinja2", ".tmpl", ".tpl", ".erb", ".in"} {
		b = strings.TrimSuffix(b, t)
	}
	switch path.Ext(b) {
	case ".service", ".timer", ".socket", ".path", ".mount":
		return true
	}
	return false
}

// unitExec is a unit's line that runs a command.
var unitExec = mustRx(`(?m)^\s*Exec(?:Start|StartPre|StartPost|Stop|StopPost|Reload|Condition)\s*=\s*[-@+!:]*(.+)$`)

// unitExecs returns the command lines a unit runs, Jinja expressions read
// as a word.
func unitExecs(body string) string {
	var b strings.Builder
	for _, m := range unitExec.FindAllStringSubmatch(body, 64) {
		b.WriteString(jinjaExpr.ReplaceAllString(strings.TrimSpace(m[1]), "JINJA"))
		b.WriteByte('\n')
	}
	return b.String()
}

// Rules 22: pixi's tasks and cylc's task scripts are shell a later run
// executes.
var (
	tomlString  = mustRx(`^\s*(?:"[^"]+"|[\w.-]+)\s*=\s*(?:\{[^}]*\bcmd\s*=\s*)?"((?:[^"\\]|\\.)*)"`)
	tomlSection = mustRx(`^\s*\[+\s*([\w."-]+)\s*\]+\s*$`)
	cylcScript  = mustRx(`^\s*(?:pre-|post-|init-|env-|err-|exit-)?script\s*=\s*(.*)$`)
)

// pixiTasks returns the commands of pixi.toml's task tables (or, for an
// edit's fragment with no table header, of its string settings whose
// value has arguments).
func pixiTasks(body string) string {
	var b strings.Builder
	section, headed := "", false
	for l := range strings.SplitSeq(body, "\n") {
		if m := tomlSection.FindStringSubmatch(l); m != nil {
			section, headed = m[1], true
			continue
		}
		m := tomlString.FindStringSubmatch(l)
		if m == nil {
			continue
		}
		if headed && !strings.HasSuffix(section, "tasks") && !strings.Contains(section, "tasks.") || !headed && !strings.Contains(m[1], " ") {
			continue
		}
		b.WriteString(strings.ReplaceAll(m[1], `\"`, `"`))
		b.WriteByte('\n')
	}
	return b.String()
}

// cylcScripts returns the shell of a cylc workflow's script settings,
// single-line or in triple quotes.
func cylcScripts(body string) string {
	var b strings.Builder
	inBlock := false
	for l := range strings.SplitSeq(body, "\n") {
		if inBlock {
			if i := strings.Index(l, `"""`); i >= 0 {
				b.WriteString(l[:i])
				b.WriteByte('\n')
				inBlock = false
				continue
			}
			b.WriteString(l)
			b.WriteByte('\n')
			continue
		}
		m := cylcScript.FindStringSubmatch(l)
		if m == nil {
			continue
		}
		v := strings.TrimSpace(m[1])
		if rest, ok := strings.CutPrefix(v, `"""`); ok {
			if i := strings.Index(rest, `"""`); i >= 0 {
				b.WriteString(rest[:i])
			} else {
				b.WriteString(rest)
				inBlock = true
			}
			b.WriteByte('\n')
			continue
		}
		b.WriteString(strings.Trim(v, `"'`))
		b.WriteByte('\n')
	}
	return b.String()
}
