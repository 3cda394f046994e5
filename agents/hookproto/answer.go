package hookproto

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
)

// Decision is what opx answers a hook.
type Decision string

// The decisions.
const (
	// Allow lets the event go on; for a tool call, the CLI's own
	// permission rules then apply as if no hook had run.
	Allow Decision = "allow"
	// Deny stops a tool call; the reason goes to the model.
	Deny Decision = "deny"
	// Ask hands the call to the CLI's own prompt to the user.
	Ask Decision = "ask"
)

// MaxReasonBytes bounds the reason sent back to a CLI.
const MaxReasonBytes = 4096

// DefaultReason is the reason given when a denial names none (Codex
// refuses a denial without one).
const DefaultReason = "denied by opx"

// Answer is opx's answer to one event.
type Answer struct {
	Decision Decision
	// Reason says why; the model sees a denial's, the user an ask's. It
	// is cut to MaxReasonBytes and its control characters (other than
	// newline and tab) become U+FFFD, so it cannot drive a terminal.
	Reason string
	// UpdatedInput, with Allow (or, for Claude, Ask), replaces the tool's
	// input: a JSON object. Gemini merges it over the input member by
	// member, so it must name every member it changes; Codex takes only
	// a string "command".
	UpdatedInput json.RawMessage
}

// Reply is what the hook process must do: write Stdout and Stderr, then
// exit with ExitCode.
type Reply struct {
	Stdout   []byte
	Stderr   []byte
	ExitCode int
}

// Encode returns the reply that tells agent's CLI answer a for an event
// of kind (see the table in the package documentation).
func Encode(agent Agent, kind Kind, a Answer) (Reply, error) {
	if _, err := ParseAgent(string(agent)); err != nil {
		return Reply{}, err
	}
	switch a.Decision {
	case Allow, Deny, Ask:
	default:
		return Reply{}, fmt.Errorf("%w: decision %q", ErrBadAnswer, clip(string(a.Decision), 40))
	}
	if len(a.UpdatedInput) > 0 {
		in := bytes.TrimSpace(a.UpdatedInput)
		if len(in) == 0 || in[0] != '{' || !json.Valid(in) {
			return Reply{}, fmt.Errorf("%w: updated input is not a JSON object", ErrBadAnswer)
		}
		a.UpdatedInput = in
	}
	if kind != KindPreTool {
		if a.Decision != Allow || len(a.UpdatedInput) > 0 {
			return Reply{}, fmt.Errorf("%w: %s of a %s event (only a pre-tool event takes one)", ErrUnsupported, a.Decision, kind)
		}
		return Reply{}, nil
	}
	reason := sanitizeReason(a.Reason)
	switch agent {
	case Claude, Codex:
		return encodeClaudeCodex(agent, a, reason)
	default:
		return encodeGemini(a, reason)
	}
}

// hookSpecific is the pre-tool answer of Claude Code and Codex.
type hookSpecific struct {
	HookEventName            string          `json:"hookEventName"`
	PermissionDecision       Decision        `json:"permissionDecision"`
	PermissionDecisionReason string          `json:"permissionDecisionReason,omitempty"`
	UpdatedInput             json.RawMessage `json:"updatedInput,omitempty"`
}

func encodeClaudeCodex(agent Agent, a Answer, reason string) (Reply, error) {
	switch {
	case a.Decision == Deny:
		if reason == "" {
			reason = DefaultReason
		}
		return Reply{Stderr: []byte(reason + "\n"), ExitCode: 2}, nil
	case a.Decision == Allow && len(a.UpdatedInput) == 0:
		return Reply{}, nil
	case agent == Codex && a.Decision == Ask:
		return Reply{}, fmt.Errorf("%w: Codex has no ask (its PreToolUse takes deny, or allow with updatedInput)", ErrUnsupported)
	}
	h := hookSpecific{HookEventName: preToolEvent[agent], PermissionDecision: a.Decision, UpdatedInput: a.UpdatedInput}
	if agent == Codex {
		// Codex refuses an updatedInput without a string command, and
		// an allow with a reason.
		var c struct {
			Command *string `json:"command"`
		}
		if json.Unmarshal(a.UpdatedInput, &c) != nil || c.Command == nil {
			return Reply{}, fmt.Errorf("%w: Codex takes an updated input only with a string command", ErrBadAnswer)
		}
	} else {
		h.PermissionDecisionReason = reason
	}
	out, err := encodeJSON(struct {
		HookSpecificOutput hookSpecific `json:"hookSpecificOutput"`
	}{h})
	return Reply{Stdout: out}, err
}

func encodeGemini(a Answer, reason string) (Reply, error) {
	switch {
	case a.Decision == Deny:
		if reason == "" {
			reason = DefaultReason
		}
		out, err := encodeJSON(struct {
			Decision Decision `json:"decision"`
			Reason   string   `json:"reason"`
		}{Deny, reason})
		return Reply{Stdout: out}, err
	case a.Decision == Allow && len(a.UpdatedInput) == 0:
		return Reply{}, nil
	case a.Decision == Ask && len(a.UpdatedInput) > 0:
		return Reply{}, fmt.Errorf("%w: Gemini cannot ask about a rewritten input", ErrUnsupported)
	case a.Decision == Ask:
		out, err := encodeJSON(struct {
			Decision      Decision `json:"decision"`
			Reason        string   `json:"reason,omitempty"`
			SystemMessage string   `json:"systemMessage,omitempty"`
		}{Ask, reason, reason})
		return Reply{Stdout: out}, err
	}
	out, err := encodeJSON(struct {
		HookSpecificOutput struct {
			ToolInput json.RawMessage `json:"tool_input"`
		} `json:"hookSpecificOutput"`
	}{struct {
		ToolInput json.RawMessage `json:"tool_input"`
	}{a.UpdatedInput}})
	return Reply{Stdout: out}, err
}

// Refuse is the reply to an event that could not be decoded or judged:
// exit 2 with "opx: " and the reason on stderr, which each CLI takes as
// the denial of a tool call (fail closed).
func Refuse(reason string) Reply {
	r := sanitizeReason(reason)
	if r == "" {
		r = DefaultReason
	}
	return Reply{Stderr: []byte("opx: " + r + "\n"), ExitCode: 2}
}

// encodeJSON is one line of JSON without HTML escaping, newline ended.
func encodeJSON(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrBadAnswer, err)
	}
	return b.Bytes(), nil
}

// sanitizeReason cuts r to MaxReasonBytes and replaces what could drive
// a terminal (controls other than newline and tab, bidirectional
// overrides) and invalid UTF-8 with U+FFFD.
func sanitizeReason(r string) string {
	r = strings.ToValidUTF8(r, "\uFFFD")
	r = strings.Map(func(c rune) rune {
		if c != '\n' && c != '\t' && unsafeRune(c) {
			return '\uFFFD'
		}
		return c
	}, r)
	return strings.TrimSpace(clip(r, MaxReasonBytes))
}
