package shield

import "fmt"

// Results opx does not control: what an MCP server answers reaches the
// model, so it is read for instructions aimed at an AI agent (the
// prompt-injection rules that judge what the agent writes) before the
// model sees it. A finding does not block anything (the call has run):
// the engine records it (shield.result_flagged) and puts a warning in
// front of the result.

// Result rules, as shield.result_flagged records them.
const (
	// RulePromptInjection: the result carries instructions aimed at an
	// AI agent.
	RulePromptInjection = "prompt-injection"
	// RuleResultTooLarge: the result holds more text that could carry
	// such instructions than Shield searches.
	RuleResultTooLarge = "input:too-large-to-judge"
)

// resultChunk is the part of a result searched with one budget
// (maxScanned), and maxResultJudged the most of a result searched: a
// result of any size costs at most maxResultJudged/resultChunk budgets.
const (
	resultChunk     = 64 << 10
	maxResultJudged = 2 << 20
)

// JudgeResult reads an untrusted tool result for instructions aimed at an
// AI agent. It returns the rule and the reason, or "" when nothing was
// found. The result is searched in chunks (overlapping by more than any
// match is long), each with its own budget, up to maxResultJudged bytes;
// a chunk that holds more keywords than its budget searches, or a result
// longer than that, is reported as too large to judge.
func JudgeResult(text string) (rule, reason string) {
	over := len(text) > maxResultJudged
	body := text
	if over {
		body = text[:maxResultJudged]
	}
	body = normalizeResult(body)
	const overlap = windowBefore + windowAfter
	for lo := 0; lo < len(body); lo += resultChunk {
		hi := min(len(body), lo+resultChunk+overlap)
		chunk := body[lo:hi]
		m, chunkOver := find(injection, chunk, asciiLower(chunk))
		if m != "" {
			return RulePromptInjection, "the result carries instructions aimed at an AI agent: " + quote(m)
		}
		over = over || chunkOver
	}
	if over {
		return RuleResultTooLarge, fmt.Sprintf("the result (%d bytes) holds more text that could carry instructions to an agent than Shield searches", len(text))
	}
	return "", ""
}
