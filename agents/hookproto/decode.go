package hookproto

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"path"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// wire is the union of the fields the three CLIs send. The fields that
// identify the event are typed strictly (a wrong type is ErrMalformed);
// the rest are read leniently (a wrong type is Event.Ignored).
type wire struct {
	HookEventName  *string         `json:"hook_event_name"`
	SessionID      *string         `json:"session_id"`
	Cwd            *string         `json:"cwd"`
	TranscriptPath *string         `json:"transcript_path"`
	ToolName       *string         `json:"tool_name"`
	ToolUseID      *string         `json:"tool_use_id"`
	TurnID         *string         `json:"turn_id"`
	PromptID       *string         `json:"prompt_id"`
	ToolInput      json.RawMessage `json:"tool_input"`
	ToolResponse   json.RawMessage `json:"tool_response"`

	Model                json.RawMessage `json:"model"`
	PermissionMode       json.RawMessage `json:"permission_mode"`
	Source               json.RawMessage `json:"source"`
	Reason               json.RawMessage `json:"reason"`
	Prompt               json.RawMessage `json:"prompt"`
	LastAssistantMessage json.RawMessage `json:"last_assistant_message"`
	PromptResponse       json.RawMessage `json:"prompt_response"`
	Error                json.RawMessage `json:"error"`
	DurationMS           json.RawMessage `json:"duration_ms"`
	Timestamp            json.RawMessage `json:"timestamp"`
}

// Decode reads one hook event of agent from r and checks it (see the
// package documentation for what is refused). getenv, if not nil, is
// asked for the CLI's project directory variable (ProjectDirEnv).
func Decode(agent Agent, r io.Reader, getenv func(string) string) (*Event, error) {
	if _, err := ParseAgent(string(agent)); err != nil {
		return nil, err
	}
	raw, err := io.ReadAll(io.LimitReader(r, MaxEventBytes+1))
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrRead, err)
	}
	if len(raw) > MaxEventBytes {
		return nil, fmt.Errorf("%w: more than %d bytes on stdin", ErrTooLarge, MaxEventBytes)
	}
	return Parse(agent, raw, getenv)
}

// Parse is Decode of an event already read; raw is kept as Event.Raw.
func Parse(agent Agent, raw []byte, getenv func(string) string) (*Event, error) {
	if _, err := ParseAgent(string(agent)); err != nil {
		return nil, err
	}
	if len(raw) > MaxEventBytes {
		return nil, fmt.Errorf("%w: %d bytes, more than %d", ErrTooLarge, len(raw), MaxEventBytes)
	}
	if err := checkJSON(raw); err != nil {
		return nil, err
	}
	var w wire
	if err := json.Unmarshal(raw, &w); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			return nil, fmt.Errorf("%w: field %s is a JSON %s", ErrMalformed, te.Field, te.Value)
		}
		return nil, fmt.Errorf("%w: %v", ErrMalformed, err)
	}
	e := &Event{Agent: agent, Raw: raw}
	if err := e.identify(&w); err != nil {
		return nil, err
	}
	if getenv != nil && ProjectDirEnv[agent] != "" {
		if d := getenv(ProjectDirEnv[agent]); d != "" {
			if err := checkPath(ProjectDirEnv[agent], d); err != nil {
				return nil, err
			}
			e.ProjectDir = d
		}
	}
	e.details(&w)
	if e.Kind == KindPreTool || e.Kind == KindPostTool {
		if err := e.tool(&w); err != nil {
			return nil, err
		}
	}
	return e, nil
}

// identify fills the fields that say which event of which session this
// is, refusing any that is missing or unsafe.
func (e *Event) identify(w *wire) error {
	if w.HookEventName == nil || *w.HookEventName == "" {
		return fmt.Errorf("%w: no hook_event_name", ErrBadField)
	}
	if err := checkName("hook_event_name", *w.HookEventName); err != nil {
		return err
	}
	e.Name = *w.HookEventName
	e.Kind = KindOf(e.Agent, e.Name)
	if w.SessionID == nil {
		return fmt.Errorf("%w: no session_id", ErrBadID)
	}
	if err := checkID("session_id", *w.SessionID); err != nil {
		return err
	}
	e.SessionID = *w.SessionID
	if w.Cwd == nil {
		return fmt.Errorf("%w: no cwd", ErrBadPath)
	}
	if err := checkPath("cwd", *w.Cwd); err != nil {
		return err
	}
	e.Cwd = *w.Cwd
	if w.TranscriptPath != nil && *w.TranscriptPath != "" {
		if err := checkPath("transcript_path", *w.TranscriptPath); err != nil {
			return err
		}
		e.TranscriptPath = *w.TranscriptPath
	}
	for _, f := range []struct {
		name string
		v    *string
		to   *string
	}{{"turn_id", w.TurnID, &e.TurnID}, {"prompt_id", w.PromptID, &e.PromptID}} {
		if f.v == nil || *f.v == "" {
			continue
		}
		if err := checkID(f.name, *f.v); err != nil {
			return err
		}
		*f.to = *f.v
	}
	return nil
}

// details fills the informative fields, leaving out (Event.Ignored) any
// of an unexpected type or, for the short ones, an unsafe text.
func (e *Event) details(w *wire) {
	short := func(name string, raw json.RawMessage, to *string) {
		if s, ok := e.str(name, raw); ok {
			if checkName(name, s) != nil {
				e.Ignored = append(e.Ignored, name)
				return
			}
			*to = s
		}
	}
	short("model", w.Model, &e.Model)
	short("permission_mode", w.PermissionMode, &e.PermissionMode)
	short("source", w.Source, &e.Source)
	short("reason", w.Reason, &e.Reason)
	if s, ok := e.str("prompt", w.Prompt); ok {
		e.Prompt = s
	}
	if s, ok := e.str("last_assistant_message", w.LastAssistantMessage); ok {
		e.Response = s
	}
	if s, ok := e.str("prompt_response", w.PromptResponse); ok && e.Response == "" {
		e.Response = s
	}
	if s, ok := e.str("timestamp", w.Timestamp); ok {
		if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
			e.Timestamp = t.UTC()
		} else {
			e.Ignored = append(e.Ignored, "timestamp")
		}
	}
	if len(w.DurationMS) > 0 && string(w.DurationMS) != "null" {
		var ms float64
		// At most a year: anything longer is not a tool's run time.
		if json.Unmarshal(w.DurationMS, &ms) == nil && ms >= 0 && ms <= 365*24*3600e3 && !math.IsNaN(ms) {
			e.Duration, e.HasDuration = time.Duration(ms*float64(time.Millisecond)), true
		} else {
			e.Ignored = append(e.Ignored, "duration_ms")
		}
	}
}

// str returns raw as a string if it is one; absent and null are not
// strings, and anything else is recorded as ignored.
func (e *Event) str(name string, raw json.RawMessage) (string, bool) {
	if len(raw) == 0 || string(raw) == "null" {
		return "", false
	}
	var s string
	if json.Unmarshal(raw, &s) != nil {
		e.Ignored = append(e.Ignored, name)
		return "", false
	}
	return s, true
}

// tool fills the fields of a pre- or post-tool event.
func (e *Event) tool(w *wire) error {
	if w.ToolName == nil || *w.ToolName == "" {
		return fmt.Errorf("%w: %s names no tool_name", ErrBadField, e.Name)
	}
	if err := checkName("tool_name", *w.ToolName); err != nil {
		return err
	}
	e.Tool = *w.ToolName
	in := bytes.TrimSpace(w.ToolInput)
	if len(in) == 0 || in[0] != '{' {
		return fmt.Errorf("%w: %s's tool_input is not a JSON object", ErrMalformed, e.Name)
	}
	e.ToolInput = in
	switch {
	case w.ToolUseID != nil && *w.ToolUseID != "":
		if err := checkID("tool_use_id", *w.ToolUseID); err != nil {
			return err
		}
		e.ToolUseID = *w.ToolUseID
	case e.Agent == Gemini:
		e.ToolUseID, e.ToolUseIDDerived = DeriveToolUseID(e.SessionID, e.Tool, e.ToolInput), true
	default:
		return fmt.Errorf("%w: %s names no tool_use_id", ErrBadID, e.Name)
	}
	if e.Name == "PostToolUseFailure" {
		e.Failed = true
	}
	if len(w.Error) > 0 && string(w.Error) != "null" {
		e.Failed = true
		if s, ok := e.str("error", w.Error); ok {
			e.Error = clip(s, MaxNameBytes*16)
		} else {
			e.Error = clip(string(w.Error), MaxNameBytes*16)
		}
	}
	resp := bytes.TrimSpace(w.ToolResponse)
	if len(resp) == 0 || string(resp) == "null" {
		return nil
	}
	e.ToolResponseBytes = len(resp)
	if len(resp) > MaxToolResponse {
		e.ToolResponseTruncated = true
		e.ToolResponseText = clip(string(resp), MaxToolResponse)
	} else {
		e.ToolResponse = resp
	}
	if resp[0] == '{' {
		// What the response itself says of failure and interruption
		// (Claude's Bash: interrupted; Gemini: error).
		var r struct {
			Interrupted *bool           `json:"interrupted"`
			IsError     *bool           `json:"is_error"`
			Error       json.RawMessage `json:"error"`
		}
		if json.Unmarshal(resp, &r) == nil {
			e.Interrupted = r.Interrupted != nil && *r.Interrupted
			if r.IsError != nil && *r.IsError {
				e.Failed = true
			}
			if len(r.Error) > 0 && string(r.Error) != "null" && string(r.Error) != `""` {
				e.Failed = true
				if e.Error == "" {
					var m struct {
						Message string `json:"message"`
					}
					var s string
					switch {
					case json.Unmarshal(r.Error, &s) == nil:
						e.Error = clip(s, MaxNameBytes*16)
					case json.Unmarshal(r.Error, &m) == nil && m.Message != "":
						e.Error = clip(m.Message, MaxNameBytes*16)
					}
				}
			}
		}
	}
	return nil
}

// DeriveToolUseID is the tool-use id of a Gemini call (which has none):
// "gemini-" and the first 32 hex digits of the SHA-256 of the session
// id, the tool name and the tool input with its insignificant white space
// removed, joined by NUL bytes.
func DeriveToolUseID(session, tool string, input json.RawMessage) string {
	var c bytes.Buffer
	if json.Compact(&c, input) != nil {
		c.Reset()
		c.Write(input)
	}
	h := sha256.New()
	h.Write([]byte(session))
	h.Write([]byte{0})
	h.Write([]byte(tool))
	h.Write([]byte{0})
	h.Write(c.Bytes())
	return "gemini-" + hex.EncodeToString(h.Sum(nil))[:32]
}

// checkID refuses an id that is empty, longer than MaxIDBytes or holds a
// byte outside [A-Za-z0-9._:-].
func checkID(name, id string) error {
	if id == "" {
		return fmt.Errorf("%w: %s is empty", ErrBadID, name)
	}
	if len(id) > MaxIDBytes {
		return fmt.Errorf("%w: %s is %d bytes, more than %d", ErrBadID, name, len(id), MaxIDBytes)
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '.' || c == '_' || c == ':' || c == '-') {
			return fmt.Errorf("%w: %s %q holds %q: only letters, digits and . _ : - are allowed", ErrBadID, name, clip(id, 40), c)
		}
	}
	return nil
}

// checkPath refuses a path that is empty, relative, not clean, longer
// than MaxPathBytes or holds a control character.
func checkPath(name, p string) error {
	switch {
	case p == "":
		return fmt.Errorf("%w: %s is empty", ErrBadPath, name)
	case len(p) > MaxPathBytes:
		return fmt.Errorf("%w: %s is %d bytes, more than %d", ErrBadPath, name, len(p), MaxPathBytes)
	case !utf8.ValidString(p) || strings.IndexFunc(p, unsafeRune) >= 0:
		return fmt.Errorf("%w: %s %q holds a control character", ErrBadPath, name, clip(p, 80))
	case !path.IsAbs(p):
		return fmt.Errorf("%w: %s %q is not absolute", ErrBadPath, name, clip(p, 80))
	case path.Clean(p) != p:
		return fmt.Errorf("%w: %s %q is not clean (it would be %q)", ErrBadPath, name, clip(p, 80), clip(path.Clean(p), 80))
	}
	return nil
}

// checkName refuses a short text longer than MaxNameBytes or holding a
// control or bidirectional-override character.
func checkName(name, s string) error {
	if len(s) > MaxNameBytes {
		return fmt.Errorf("%w: %s is %d bytes, more than %d", ErrBadField, name, len(s), MaxNameBytes)
	}
	if strings.IndexFunc(s, unsafeRune) >= 0 {
		return fmt.Errorf("%w: %s %q holds a control character", ErrBadField, name, clip(s, 80))
	}
	return nil
}

// unsafeRune reports the characters no name or path of an event may
// hold: controls (C0, DEL, C1), the line and paragraph separators, and
// the bidirectional overrides and isolates that make text display as
// something else.
func unsafeRune(r rune) bool {
	return unicode.IsControl(r) || r == utf8.RuneError || r == '\u2028' || r == '\u2029' ||
		('\u202a' <= r && r <= '\u202e') || ('\u2066' <= r && r <= '\u2069')
}

// clip returns s cut to at most n bytes at a rune boundary.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	s = s[:n]
	for len(s) > 0 && !utf8.ValidString(s) {
		s = s[:len(s)-1]
	}
	return s
}
