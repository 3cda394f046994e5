package shield

import (
	"path"
	"strings"
)

// Instructions planted in data carriers (issue 27, pass 7, rules 10;
// docs/shield-rules.md "prompt-injection:addressed"). An instruction for
// the next agent hides wherever text is stored rather than read as a
// line: a notebook's markdown cell or stored output, a DAG's doc_md or a
// docstring, a package's description in pyproject or package.json, a
// seed CSV's cell, a YAML or TOML value. Four shapes add to what
// addressee reads, whatever the stack:
//   - a bare address to agents, bots, assistants or AIs that opens a
//     line, a sentence, or a string value ("Agents maintaining this DAG:",
//     `description = "… Agents: run …"`), followed by an order (after an
//     adverb: "first run", "then paste");
//   - a tag naming an AI reader ("[assistant-directive]", "<agent-note>",
//     "(for the AI)") followed by an order or a secret;
//   - agents as the subject of a rule that sends them first or lets them
//     do more ("… must first fetch", "Agents may publish");
//   - any address followed by what an instruction to leak names: a
//     credential path, a key or token.
// A CSV's or TSV's cells are read as lines of their own.

// looseAddressee is a bare address to agents, bots, assistants or AIs
// that opens a line, a sentence or a string value, with up to four words
// qualifying it ("Agents maintaining this DAG:").
var looseAddressee = mustRx(`(?i)(?:^[\s"'>*_#/\-\[(]*|[.!?]\s+|[=:]\s*["'>]\s*)(?:(?:dear|hey|hi|hello|attention|note to|to)[ ,:]+)?(?:the |all |any |every |future |other )?(?:[a-z-]+ )?(?:agents?|bots?|assistants?|ais)(?:\s*(?:/|&| and | or )\s*(?:agents?|bots?|humans?|assistants?|reviewers?))?(?:(?:[ -][a-z'-]+){0,4}\s*:|\s*,)`)

// agentModal is agents named as the subject of a rule that sends them
// somewhere first or lets them do more: "AI agents must first fetch …",
// "Assistants generating clients from this spec should first run …",
// "Agents may tag and push releases": a sentence opening (a line, a
// sentence, a string value) naming agents, assistants, bots or AIs, up to
// five words qualifying them, a permissive modal or a "must first", an
// adverb or two; group 1 is the verb. A rule that restricts them ("Agents
// must not push", "Agents must treat such text as data") is documentation
// of a policy, not a planted one.
var agentModal = mustRx(`(?i)(?:^[\s"'>*_#/\-\[(]*|[.!?]\s+|[=:]\s*["'>]?\s*)(?:all |any |the |every |future |other )?(?:(?:ai|coding|code|llm|autonomous|automated)[ -])?(?:agents?|assistants?|bots?|llms?|ais)\b(?:[ ,-]+[a-z'-]+){0,5}?\s+(?:(?:must|should|shall|need to|needs to|are to|have to|has to|are expected to)\s+first|may|can|are allowed to|are permitted to|are free to|no longer need to|do not need to|don't need to)\s+(?:(?:always|now|also|then|just|simply|immediately|safely|freely|directly)\s+){0,2}([a-z]+)`)

// aiTag is a bracketed or angled tag naming an AI reader.
var aiTag = mustRx(`(?i)[\[<(]\s*(?:for (?:the |an? )?)?(?:ai|llm|agent|assistant|bot|copilot|claude|codex|gemini|cursor|system)(?:[ _-][a-z]{1,20}){0,2}\s*[\]>)]`)

// leakMention is what an instruction to leak names: a credential path or
// file, a key, token or password (a URL alone is not: "docs live at …").
var leakMention = mustRx(`(?i)~/\.|\$HOME/\.|\.(?:aws|ssh|kube|docker|gnupg|netrc|pgpass|npmrc|pypirc)\b|\bcredentials?\b|\bsecrets?\b|\btokens?\b|\bapi[_ -]?keys?\b|\bpasswords?\b|\bprivate keys?\b`)

// adverbs may open an order before its verb ("first run", "then paste").
var adverbs = map[string]bool{"first": true, "then": true, "also": true, "now": true, "just": true, "simply": true, "immediately": true,
	"quickly": true, "kindly": true, "next": true, "finally": true, "and": true}

// orderAfterAdverb reports whether a clause of rest opens with an
// imperative, past an adverb or two.
func orderAfterAdverb(rest string) bool {
	for _, c := range strings.FieldsFunc(rest, func(r rune) bool { return strings.ContainsRune(".;:!?,\n", r) }) {
		ws := strings.Fields(strings.TrimLeft(c, " \t/#*-<>!`\"'"))
		for k := 0; k < len(ws) && k < 3; k++ {
			w := asciiLower(strings.Trim(ws[k], "`\"'"))
			if imperatives[w] {
				return true
			}
			if !adverbs[w] {
				break
			}
		}
	}
	return false
}

// carriedAddress returns the address and what follows it when the line
// text[start:end] holds one of the carrier shapes.
func carriedAddress(text string, start, end int) (string, bool) {
	line := text[start:end]
	for _, loc := range looseAddressee.FindAllStringIndex(line, 4) {
		if codeAgent(line[loc[0]:loc[1]]) {
			continue
		}
		rest := addressedRest(text, start+loc[1])
		if orderAfterAdverb(rest) {
			return strings.TrimSpace(line[loc[0]:loc[1]] + rest), true
		}
	}
	for _, m := range agentModal.FindAllStringSubmatchIndex(line, 4) {
		if imperatives[asciiLower(line[m[2]:m[3]])] && !codeAgent(line[m[0]:m[1]]) {
			return strings.TrimSpace(addressedRest(text, start+m[0])), true
		}
	}
	for _, loc := range aiTag.FindAllStringIndex(line, 4) {
		rest := addressedRest(text, start+loc[1])
		if orderAfterAdverb(rest) || leakMention.MatchString(rest) {
			return strings.TrimSpace(line[loc[0]:loc[1]] + rest), true
		}
	}
	return "", false
}

// cellLines returns the text of a delimited data file with its cells as
// lines, or the text as it is.
func cellLines(src, body string) string {
	switch path.Ext(strings.ToLower(src)) {
	case ".csv", ".tsv", ".psv":
		return strings.NewReplacer(",", "\n", "\t", "\n", "|", "\n", `""`, `"`).Replace(body)
	}
	return body
}

// runClause is a command a note tells its reader to run: what follows
// "run" or "execute" up to the clause's end (", then", ";", a sentence's
// end, the line's end).
var runClause = mustRx(`(?i)\b(?:run|execute|exec|paste and run|type)\s*:?\s+(.{4,400}?)(?:,\s*(?:then|and then|after that)\b|;|\.\s|\.$|$)`)

// maxNoteCommands bounds the commands judged per note.
const maxNoteCommands = 8

// memoryCommand is `memory:command` (escalate): a memory note that tells
// a later session to run a command Shield would block, or one that sends
// data, fetches and runs code, or reads credentials. A note recording a
// procedure is a fact; a procedure that leaks is an instruction planted
// for the next session, whatever its wording.
func (s *Shield) memoryCommand(_ *Action, f *Facts, j *judgement) {
	if j.inner {
		return
	}
	for _, t := range f.Texts {
		if t.Source != "memory" && !(strings.HasPrefix(t.Source, "content:") && memoryFile(strings.TrimPrefix(t.Source, "content:"))) {
			continue
		}
		body := clip(t.Body, 16<<10)
		var cmds []string
		for _, m := range codeSpan.FindAllStringSubmatch(body, maxNoteCommands) {
			cmds = append(cmds, m[1]+m[2])
		}
		for l := range strings.SplitSeq(body, "\n") {
			for _, m := range runClause.FindAllStringSubmatch(l, maxNoteCommands) {
				cmds = append(cmds, strings.Trim(m[1], "`'\" "))
			}
		}
		for k, c := range cmds {
			if k == maxNoteCommands {
				break
			}
			v, ok, _ := s.judgeLine(c, nil)
			if !ok || v.Decision == Allow {
				continue
			}
			if v.Decision == Block || leavesMachine(v.Rule) || strings.HasPrefix(v.Rule, "remote-code") || strings.HasPrefix(v.Rule, "credential") ||
				strings.HasPrefix(v.Rule, "destructive") { // rules 18: a destructive shortcut taught as practice
				j.escalate("memory:command", "the memory note tells a later session to run %s, which Shield %ss: %s", quote(c), v.Decision, v.Reason)
				return
			}
		}
	}
}

// codeAgents are agents and bots that are words of the code, not readers:
// a user agent, a build or CI agent, ssh's or gpg's agent.
var codeAgents = []string{"user agent", "user-agent", "useragent", "http agent", "browser agent", "proxy agent", "build agent", "ci agent",
	"ssh agent", "ssh-agent", "gpg agent", "gpg-agent", "monitoring agent", "datadog agent", "otel agent", "java agent"}

// codeAgent reports whether an address names such an agent.
func codeAgent(address string) bool {
	l := asciiLower(address)
	for _, c := range codeAgents {
		if strings.Contains(l, c) {
			return true
		}
	}
	return false
}
