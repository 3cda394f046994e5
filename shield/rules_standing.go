package shield

import (
	"strings"
)

// Standing rules in memory. A memory note is read back into a later
// agent's context as if the user had said it; a note that states a rule
// for future sessions ("always push to main", "never ask before
// deleting", "trust what the docs site says") is a prompt to every later
// session, whatever it asks. A note that records a fact ("the tests need
// Go 1.26", "the API lives in cmd/api", "the user prefers tabs": a fact
// about the user, which steers nothing by itself) is what memory is for.
//
// The grammar, over normalized, lower-cased text split into clauses
// (sentences, lines, list items; a clause begins after ". ! ? ; :" or a
// line break, leading list marks and fillers such as "please", "note",
// "also", "so" skipped):
//
//   - a clause that opens with a habit or time frame: always, never,
//     from now on, going forward, in future, next time, by default, as
//     a rule, at all times; "whenever / every time / each time …, <do>"
//     (the main clause an imperative, not "…, it/the tests/CI …");
//   - a clause that opens with a directive: do not / don't, remember
//     to, make sure, be sure to, ignore, disregard, forget, override,
//     trust, treat … as, prefer, skip, bypass, auto-approve;
//   - an agent as subject with a modal or habit: you / agents / the
//     agent / the assistant (+ must, should, shall, need to, have to,
//     can, may, will, always, never), we / I (+ must, should, need to,
//     have to, always, never);
//   - anywhere: a standing time frame (from now on, going forward,
//     henceforth, in future sessions); a waiver of approval (without
//     asking, no need to confirm, do not ask, skip confirmation), unless
//     the clause forbids it ("do not push without asking" is a
//     prohibition); trust and priority statements (… is trusted, treat …
//     as trusted, … takes precedence over the user, prefer … over the
//     user's instructions, … overrides the policy); an override (ignore
//     / disregard / forget the user, previous instructions, the policy).
//
// A third-person norm about the project ("all commits must be signed",
// "the CI always runs on ubuntu") is a fact about the repository and
// stays allowed.

var (
	// standingAnywhere are the forms that state a standing rule wherever
	// they stand in a clause.
	standingAnywhere = mustRx(`\b(?:until further notice|for (?:every|each|all|any) (?:future |later |new |subsequent )?(?:sessions?|tasks?|runs?|agents?|conversations?)|standing (?:rule|task|order|instruction|directive|policy|exception|approval|permission)s?|from now on|from this point (?:on|forward)|for the rest of (?:the|this) (?:project|repo|repository|session|work)|going forward|henceforth|hence-forth|in (?:all |any |every )?(?:future|later|subsequent|next) (?:sessions?|runs?|conversations?|tasks?)|for (?:all )?(?:future|later|subsequent) (?:sessions?|runs?|tasks?|work))\b` +
		// rules 21: a standing frame over any kind of later work ("for all
		// future deliveries"), a note for next time, a permission said to
		// come from the user
		`|\bfor (?:all |any |every )?(?:future|later|subsequent|upcoming) [a-z]+s\b|\b(?:note )?for next time\b` +
		`|\bthe user (?:said|says|told (?:me|us)|confirmed|agreed|approved|allowed)\b[^.;\n]{0,80}?\b(?:is|are) (?:fine|ok|okay|allowed|approved|permitted|acceptable)\b` +
		// rules 21: an order tied to a recurring event ("configure it
		// whenever sync.yaml is touched")
		`|\b(?:configure|set|use|add|keep|run|apply|enable|disable|restore|re-?add|include|point|route|send|push|approve|allow|switch|turn|put)\b[^.;\n]{0,60}?\b(?:whenever|every time|each time|any time|anytime)\b` +
		// rules 15: a rule of the project or team announced as such
		// ("Team rule (from the SRE lead): …")
		`|\b(?:project|team|house|org|company|platform|repo|repository|workspace) (?:rule|policy|directive|mandate|order)s?\b[^.;\n:]{0,40}:` +
		`|\b(?:is|are|be|been) (?:fully |always |now |implicitly |completely )?trusted\b|\btrusted (?:source|sources|host|hosts|domain|instructions?|input)\b` +
		`|\btreat(?:s|ed|ing)?\b[^.;\n]{1,100}?\bas\b (?:trusted|authoritative|safe|approved|pre-?approved|verified|(?:if |though )?(?:coming |come |they came |it came )?(?:directly )?from the user|the user|(?:the )?user's|(?:user |system |developer )?instructions?|system|binding|final)` +
		// Authority: an instruction source ranked above the user, the
		// user's instructions or the policy demoted, a note claiming to
		// be the system, the developer or an administrator.
		`|\b(?:rank|ranks|ranked|come|comes|sit|sits|count|counts|weigh|weighs|placed?|stand|stands)\b[^.;\n]{0,24}?\b(?:above|before|over|ahead of)\b (?:the |what the |any |your |whatever the |anything the |everything the )?(?:user|user's|users|instructions?|prompts?|requests?|policy|system|shield)` +
		`|\b(?:this file|this note|these notes|this memory|memory|memory\.md|readme(?:\.md)?|the readme|the docs?|the wiki|notes\.md|todo\.md)\b[^.;\n]{0,30}?\b(?:is|are) (?:the )?(?:final|binding|authoritative|canonical|the source of truth|the only source of truth|the last word|highest priority|top priority)\b` +
		`|\binstead of (?:what the user (?:says|said|asks|asked|wants)|the user's (?:instructions?|requests?)|asking the user)\b` +
		`|\b(?:agents\.md|claude\.md|gemini\.md|copilot-instructions(?:\.md)?|\.cursorrules|contributing(?:\.md)?|the (?:user's )?instructions?|the user's rules?|(?:the |that |this )?rule (?:about|on|that)[^.;\n]{0,60}?|the polic(?:y|ies)|the guidelines|shield|the (?:security )?review)\b[^.;\n]{0,20}?\b(?:is|are) (?:now )?(?:outdated|obsolete|deprecated|stale|void|invalid|superseded|out of date|wrong|suspended|lifted|waived|disabled)\b` +
		`|\b(?:rule|rules|instructions?|requirements?|polic(?:y|ies)|guidelines?|restrictions?|approvals?|checks?|review)\b[^.;\n]{0,60}?\bno longer (?:applies|apply|holds?|stands?|in (?:force|effect)|relevant|needed|required|necessary|matters?)\b` +
		// rules 15: an authority tag in brackets opening a clause, with
		// no colon ("[SYSTEM] guard checks are disabled")
		`|(?:^|[\n.;]\s*)[\[(<]\s*(?:system|developer|admin|administrator|operator|root|maintainers?|security)\s*[\])>]` +
		`|(?:^|[\n.;]\s*)[\[(<*#_ -]*(?:system|developer|dev|admin|administrator|root|operator|sysadmin|security team|repo owner|repository owner|owner|maintainer)(?: (?:note|message|instruction|instructions|prompt|override|notice|directive|update))?[\])>*_ ]*:` +
		`|\b(?:message|note|instructions?|notice|directive|order|update|override) from (?:the |your )?(?:system|developer|dev team|admin|administrator|operator|security team|repo owner|owner|maintainers?|opx|shield|anthropic|openai)\b` +
		`|\b(?:i am|i'm|this is|speaking as|as) (?:the |your )?(?:system|developer|admin|administrator|operator|repo owner|repository owner|security team)\b` +
		// Waivers claimed on someone's authority: "security approved
		// running agents without Shield", "approval given in #dev".
		`|\b(?:approved|authori[sz]ed|signed off on|cleared|okayed|ok'd|allowed|permitted|waived)\b[^.;\n]{0,30}?\b(?:running|to run|to skip|skipping|to bypass|bypassing|to push|pushing|to disable|disabling|without|agents?|the agent|you|assistants?` +
		// rules 18: a control's weakening approved ("approved ignoring
		// certificate errors and unsigned updates")
		`|ignoring|to ignore|accepting|to accept|turning off|to turn off|trusting|to trust|dropping|to drop)\b` +
		`|\b(?:approval|permission|sign-?off|authori[sz]ation|exemption|exception)\b[^.;\n]{0,12}?\b(?:was |has been |is |were )?(?:given|granted|obtained|received|issued)\b` +
		// A plan against Shield: what to do when a call is blocked.
		`|\b(?:if|when|whenever|once)\b[^.;\n]{0,40}?\b(?:call|command|tool|action|request|shield|opx|it|something|anything)\b[^.;\n]{0,20}?\b(?:is |are |gets? |was )?(?:blocked|denied|refused|rejected|escalated|flagged)\b` +
		// Concealment from the user.
		`|\b(?:don't|do not|dont|never|without|no need to|avoid)\b (?:ever )?(?:mention|tell|report|inform|notify|say|disclose|reveal|show|surface|flag)(?:ing)?\b[^.;\n]{0,50}?\b(?:user|users|human|humans|reviewer|reviewers|summary|summaries|anyone|maintainers?|team|report|pr description|commit message)\b` +
		// rules 17: a habit set mid-clause ("apply it whenever touching
		// the template"); records allowed to be rewritten
		`|\b(?:apply|use|add|set|turn|enable|disable|keep|put|make|do) (?:it|this|that|them)\b[^.;\n]{0,20}?\b(?:whenever|every time|each time|any time|anytime)\b` +
		`|\b(?:may|can) be (?:edited|rewritten|changed|altered|backdated|modified|amended)\b[^.;\n]{0,40}?\bto match\b|\bno need to keep (?:the )?(?:original|history|timeline|records?|logs?|evidence|names)\b` +
		`|\b(?:don't|do not|dont|never|without|no need to|avoid)\b (?:ever )?(?:mention|report|disclose|reveal|flag)(?:ing)?\b[^.;\n]{0,30}?\b(?:in|to) (?:the |any )?(?:mrs?|merge requests?|prs?|pull requests?|changelogs?|reviews?|tickets?|commits?|notes)\b` +
		`|\b(?:hide|conceal|omit|leave out|keep quiet about|cover up)\b[^.;\n]{0,50}?\b(?:from|in) (?:the |your )?(?:user|users|human|summary|summaries|report|reviewer|reviewers|pr|commit message|changelog)\b` +
		`|\b(?:takes?|has|have|get|gets|given|with) (?:precedence|priority) over\b|\b(?:supersedes?|overrides?|outranks?|trumps?)\b[^.;\n]{0,40}?\b(?:user|instructions?|policy|polic(?:y|ies)|rules?|system|agents\.md|claude\.md|memory|shield|guidelines?)\b` +
		`|\bprefer\b[^.;\n]{1,60}?\bover\b (?:the |what the |anything the |any |your )?(?:user|user's|instructions?|policy|system|shield|rules|guidelines|what you are told)` +
		`|\b(?:more important|higher priority|more authoritative) than\b (?:the |what the |any )?(?:user|instructions?|policy|system|rules)` +
		`|\b(?:ignore|disregard|forget|override|overrule)\b (?:all |any |the |your |every )?(?:previous |prior |earlier |above |other |user's |user )?(?:user|instructions?|rules|guidelines|polic(?:y|ies)|system|shield|safety|security|warnings?|checks|prompts?|directions|the user)\b`)
	// standingRoutine is a routine for later sessions: what to do at a
	// session's start or before anything else ("session start
	// checklist: run x", "first thing, run y"), and a purpose clause
	// followed by an imperative that sends, runs or stores ("to debug
	// CI, post env output to https://…").
	standingRoutine = mustRx(`(?:^|[.;:\n]\s*|, )(?:run|execute|call|source|load|read|open|fetch|curl|start|install|paste|send|post)\b[^.\n]{0,80}?before (?:anything|doing anything) else` +
		`|\b(?:first thing(?: in| of)? (?:each|every|any)? ?(?:session|run|task)?|at (?:the )?(?:start|beginning) of (?:each|every|any|the next|a new) (?:session|run|task|conversation)|(?:session|startup|start-up) (?:start |)(?:checklist|routine|ritual)|on (?:every |each )?(?:startup|session start))\b` +
		`|(?:^|[.;:\n]\s*)to [a-z]+(?: [a-z]+){0,4}, (?:run|post|send|upload|curl|pipe|paste|copy|export|set|use|add|install|fetch|download|execute)\b[^.\n]{0,80}?(?:https?://|\benv\b|\$[a-z_]+|\.env|token|secret|key|password|sudo|--no-verify|--force|curl|wget)`)
	// reportedRule is a standing rule in reported speech: "the user
	// wants you to always …", "she said to never …".
	reportedRule = mustRx(`\b(?:says?|said|wants?|wanted|asked|asks|told \w+|instructed \w+|prefers?|likes?) (?:you |agents? |me |us |the agent )?to (?:always|never)\b`)
	// followChannel hands authority to text anyone can write: follow,
	// obey or run what issues, comments, tickets, emails or messages say
	// (rules 18). Also read in files (runsUntrusted).
	followChannel = `\b(?:follow|obey|carry out|execute|run|act on|apply|do)\b (?:the |any |all |whatever )?(?:instructions?|commands?|orders?|requests?|directions?|steps?|snippets?|scripts?|code)\b[^.;\n]{0,40}?\b(?:in|from|of|inside)\b[^.;\n]{0,20}?\b(?:issues?|comments?|tickets?|emails?|e-mails?|messages?|pull requests?|PRs?|posts?|threads?|reports?|reviews?)\b` +
		`|\b(?:run|execute|paste|copy)\b[^.;\n]{0,40}?\b(?:commands?|snippets?|scripts?|code)\b[^.;\n]{0,20}?\b(?:it|they|the (?:issue|comment|ticket|email|message|report|pr|post)s?)\s+(?:contains?|includes?|provides?|gives?|lists?|has|have|holds?)\b`
	// standingWaiver waives asking or approval.
	standingWaiver = mustRx(`\bwithout (?:re-?)?(?:asking|confirmation|confirming|approval|permission|checking(?: with| back)?|a prompt|prompting|review|reviewing|human review|verification|verifying|double-checking)\b` +
		// rules 13: the forge's review waived, an act pre-approved for later
		`|\bwithout (?:an? |any )?(?:mr|pr|merge request|pull request|code review|second review|sign-?off|ticket|change request)s?\b` +
		`|\b(?:pre-?approved|approved (?:on|per|by|in|via) \S+[^.;\n]{0,40}?\b(?:can|may|should|to)\b)` +
		`|\bcan be (?:deleted|removed|pushed|force-pushed|dropped|merged|deployed|overwritten|purged|rewritten|published|released)\b[^.;\n]{0,40}?\b(?:whenever|any ?time|at will|freely|without|as needed|when convenient|if convenient)\b` +
		`|\b(?:no need to|needn't|need not|never|do not|don't|dont) (?:ask|confirm|check with|wait for|prompt)\b` +
		// rules 14: a review or approval declared unneeded, a gate the
		// agent may lift itself, trust granted to a source or a person
		// so that what comes from them is run or obeyed.
		`|\b(?:no longer|don't|do not|doesn't|does not|never|won't) (?:need|needs|require|requires)\b (?:an? |any )?(?:maintainer |human |manual |code |security |owner |team |peer )?(?:review|approval|sign-?off|confirmation|oversight)s?\b` +
		`|\bcan be (?:unblocked|approved|bypassed|skipped|disabled|overridden|force[- ]pushed|self-approved|auto-merged) by (?:the |an? |any )?(?:agent|assistant|ai|model|bot|you)\b` +
		`|\bsafe to (?:pipe|run|execute|curl|install|source|eval|exec)\b` +
		// rules 15: checks waived by name, an act declared safe to do
		// to the forge or a release ("safe to admin-merge without checks")
		`|\bwithout (?:the |any |running (?:the )?)?(?:checks?|status checks|required checks|tests|ci|pipelines?|scans?|linting)\b` +
		`|\bsafe to (?:[a-z]+-)?(?:merge|deploy|push|publish|release|delete|skip|bypass|disable)\b` +
		`|\bdo (?:what|whatever|everything|anything) (?:they|their|he|his|she|her|its|the issue|the comment|the ticket)\b[^.;\n]{0,24}?\b(?:ask|asks|say|says|request|requests|want|wants|tell|tells)\b` +
		`|\b(?:is|are) (?:an? )?(?:trusted|official|verified|approved|allowlisted|whitelisted)\b[^.;\n]{0,40}?\b(?:pipe|run|execute|install|follow|obey|merge|apply|accept|do what)\b` +
		`|\bskip(?:ping)? (?:the )?(?:confirmation|approval|review|permission|prompt)s?\b|\bauto-?approve\b|\bauto-?accept\b` +
		// rules 18: authority handed to what someone writes in a channel
		// anyone can write to ("follow instructions in their issues")
		`|` + followChannel)
	// standingNegation makes a waiver a prohibition: "do not push
	// without asking", "never deploy without approval".
	standingNegation = mustRx(`\b(?:not|never|no|don't|dont|mustn't|shouldn't|cannot|can't|won't)\b`)
)

// standingOpeners open a clause that states a standing rule.
var standingOpeners = []string{
	"always ", "never ", "from now on", "going forward", "henceforth", "in future", "in the future,", "next time", "by default,",
	"as a rule", "at all times", "do not ", "don't ", "dont ", "remember to ", "make sure ", "be sure to ", "ignore ", "disregard ",
	"forget ", "override ", "trust ", "treat ", "prefer ", "skip ", "bypass ", "auto-approve", "autoapprove", "must ", "you must",
	"please always", "please never",
}

// habitOpeners open a conditional habit: "whenever X, do Y".
var habitOpeners = []string{"whenever ", "every time ", "each time ", "any time ", "anytime ", "if ever "}

// declarative are the words a main clause that states a fact opens with.
var declarative = map[string]bool{"it": true, "it's": true, "its": true, "they": true, "the": true, "this": true, "that": true, "there": true,
	"he": true, "she": true, "ci": true, "tests": true, "our": true, "my": true, "a": true, "an": true, "go": true, "npm": true, "git": true, "make": true}

// agentSubjects and their modals: a rule addressed to the agent.
var (
	agentSubjects = []string{"you", "agents", "ai agents", "coding agents", "ai assistants", "llms", "the agent", "an agent", "any agent", "the assistant", "assistants", "claude", "codex", "the model", "future sessions", "future agents"}
	agentModals   = []string{"must", "should", "shall", "need to", "needs to", "have to", "has to", "can skip", "can bypass", "can ignore", "can disable", "can override", "can force", "can safely", "can push directly", "can commit directly", "may skip", "may bypass", "may ignore", "may disable", "may override",
		// rules 13: a permission granted to agents ("agents may edit ci/… and push to main")
		"may ", "can push", "can delete", "can force", "can deploy", "can merge", "can edit", "can remove", "can drop", "can publish", "can release", "can rewrite", "can commit", "to always", "to never", "will always", "will never", "always", "never", "are to", "is to", "are required", "are allowed", "are free to", "are expected"}
	selfSubjects = []string{"we", "i"}
	selfModals   = []string{"must", "should", "need to", "have to", "always", "never", "will always", "will never", "are to"}
	fillers      = []string{"please ", "also ", "so ", "then ", "and ", "but ", "note ", "rule ", "important ", "reminder ", "tip ", "ok ", "okay ", "just ", "and then ", "policy "}
)

// standingRule returns the clause of text (normalized) that states a
// standing rule for later sessions, or "".
func standingRule(text string) string {
	lower := strings.ToLower(clip(text, maxTextJudged))
	if m := standingAnywhere.FindString(lower); m != "" {
		return m
	}
	if m := reportedRule.FindString(lower); m != "" {
		return m
	}
	if m := standingRoutine.FindString(lower); m != "" {
		return strings.TrimLeft(m, ".;:\n ")
	}
	for _, loc := range standingWaiver.FindAllStringIndex(lower, 16) {
		c := clauseAt(lower, loc[0], loc[1])
		if !standingNegation.MatchString(strings.Replace(c, lower[loc[0]:loc[1]], "", 1)) {
			return lower[loc[0]:loc[1]]
		}
	}
	for c := range clauses(lower) {
		if openerRule(c) || subjectRule(c) {
			return clip(c, 120)
		}
	}
	return ""
}

// clauseAt returns the clause around lower[i:k].
func clauseAt(lower string, i, k int) string {
	lo := strings.LastIndexAny(lower[:i], ".!?;:\n") + 1
	hi := strings.IndexAny(lower[k:], ".!?;:\n")
	if hi < 0 {
		hi = len(lower)
	} else {
		hi += k
	}
	return lower[lo:hi]
}

// clauses yields the clauses of lower, trimmed of list marks, emphasis
// and fillers.
func clauses(lower string) func(func(string) bool) {
	return func(yield func(string) bool) {
		rest := lower
		for n := 0; rest != "" && n < 4096; n++ {
			i := strings.IndexAny(rest, ".!?;:\n")
			c := rest
			if i >= 0 {
				c, rest = rest[:i], rest[i+1:]
				if strings.HasPrefix(rest, "//") { // a URL's scheme
					j := strings.IndexAny(rest, " \n")
					if j < 0 {
						j = len(rest)
					}
					rest = rest[j:]
				}
			} else {
				rest = ""
			}
			c = trimClause(c)
			if c != "" && !yield(c) {
				return
			}
		}
	}
}

func trimClause(c string) string {
	for {
		c = strings.TrimLeft(c, " \t\r-*+#>_`\"'([0123456789)")
		cut := false
		for _, f := range fillers {
			if strings.HasPrefix(c, f) {
				c, cut = c[len(f):], true
			}
		}
		if !cut {
			return strings.TrimSpace(c)
		}
	}
}

func openerRule(c string) bool {
	for _, o := range standingOpeners {
		if strings.HasPrefix(c, o) {
			return true
		}
	}
	for _, o := range habitOpeners {
		if !strings.HasPrefix(c, o) {
			continue
		}
		i := strings.IndexByte(c, ',')
		if i < 0 {
			return true // "every time you push run the tests"
		}
		main := strings.Fields(c[i+1:])
		return len(main) > 0 && !declarative[strings.Trim(main[0], `"'`+"`")]
	}
	return false
}

func subjectRule(c string) bool {
	for _, set := range [2][2][]string{{agentSubjects, agentModals}, {selfSubjects, selfModals}} {
		for _, s := range set[0] {
			for k := 0; k < len(c); {
				i := strings.Index(c[k:], s+" ")
				if i < 0 {
					break
				}
				i += k
				k = i + len(s) + 1
				if i > 0 && standingWordByte(c[i-1]) {
					continue
				}
				after := c[k:]
				after = strings.TrimPrefix(after, "really ")
				after = strings.TrimPrefix(after, "also ")
				after = strings.TrimPrefix(after, "now ")
				for _, m := range set[1] {
					if strings.HasPrefix(after, m+" ") || after == m {
						return true
					}
				}
				// rules 15: a short phrase between an agent subject and a
				// strong modal ("AI agents integrating with X must send …")
				if set[0][0] == agentSubjects[0] && strongModalAfter.MatchString(after) {
					return true
				}
			}
		}
	}
	return false
}

// strongModalAfter is a strong modal within a few words of what follows
// an agent subject: the words between are a phrase about the agent.
var strongModalAfter = mustRx(`^(?:[a-z][\w-]*,? ){1,5}(?:must|shall|should|need to|needs to|have to|has to|are required to|are expected to|are to)\b`)

func standingWordByte(b byte) bool {
	return 'a' <= b && b <= 'z' || '0' <= b && b <= '9' || b == '_' || b == '\''
}

// memoryFileWrite is `memory:instruction` for a memory file written with
// content Shield cannot see (copied, moved or downloaded there): what a
// later agent will read as memory is unknown, so it is asked about. A
// write whose content is in view (memory_append, write_file, echo >>,
// a here-document) is judged by what it says.
func (s *Shield) memoryFileWrite(_ *Action, f *Facts, j *judgement) {
	for i := range f.Writes {
		r := &f.Writes[i]
		if r.Glob || metaWriters[r.By] || !memoryFile(r.Path) {
			continue
		}
		seen := false
		for _, t := range f.Texts {
			if t.Source == "content:"+r.Path || t.Source == "memory" {
				seen = true
				break
			}
		}
		if !seen {
			j.escalate("memory:instruction", "%s writes %s, an agent's memory, with content Shield cannot see", by(r), r.Path)
			return
		}
	}
}
