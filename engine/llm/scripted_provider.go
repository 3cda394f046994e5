package llm

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"regexp"
	"strings"
	"text/template"
)

// Transcript scripts the scripted model. For a request, the last user
// message picks the first turn whose Match (a regular expression) finds
// it; an empty Match takes anything. The number of assistant messages
// after that user message is the step; the step's tool calls or text is
// the answer. Past the last step the last step is repeated, so the
// model always answers. Text is a text/template over StepData.
//
// # Its words follow the tool results
//
// The scripted model must never claim what the tool results do not show:
// a step can have a condition (If) on the results so far, and answers
// Else instead when it does not hold, which ends the turn; texts see each
// result with whether it was an error or refused (StepData.Results). The
// answer is a pure function of the request, so a replay gets the same.
type Transcript struct {
	Model string `json:"model"`
	Turns []Turn `json:"turns"`
}

// Turn is the script for one kind of user message.
type Turn struct {
	Match string `json:"match"`
	Steps []Step `json:"steps"`
	re    *regexp.Regexp
}

// Step is one model answer: tool calls, or text (maybe with tool calls).
// If, when set, is a template over StepData: when it renders empty or
// "false" the step answers Else (a text template) instead, with no tool
// calls, which ends the turn.
type Step struct {
	If        string         `json:"if,omitempty"`
	Else      string         `json:"else,omitempty"`
	Text      string         `json:"text,omitempty"`
	ToolCalls []ScriptedCall `json:"tool_calls,omitempty"`
	tmpl      *template.Template
	cond      *template.Template
	elseTmpl  *template.Template
}

// ScriptedCall is one tool call of a step. Arguments is JSON text that is
// also a template over StepData (use the json function to quote values).
type ScriptedCall struct {
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
	tmpl      *template.Template
}

// StepData is what step templates see.
type StepData struct {
	User        string   // the last user message
	Match       []string // the turn's regular expression submatches in User
	ToolResults []string // tool results since that message, in order
	LastResult  string   // the last of them, or ""
	Step        int
	// Results are ToolResults with the calls they answer.
	Results []Result
	// Errors counts the results that were errors, Refused those of calls
	// Shield or a human refused; OK is true when no result was an error.
	Errors, Refused int
	OK              bool
}

// Result is one tool result the model was given, with its call. The agent
// gives an error result as "error: " and the text; the engine's answer to
// a call Shield or a human refused starts "blocked".
type Result struct {
	Tool      string
	Arguments string
	Content   string // without the "error: " mark
	Error     bool   // the tool failed, a command exited non-zero, or the call was refused
	Refused   bool   // Shield or a human refused the call: it did not run
}

// errorMark starts the content of an error result (agent/loop.go).
const errorMark = "error: "

func newResult(tool, args, content string) Result {
	r := Result{Tool: tool, Arguments: args, Content: content}
	if rest, ok := strings.CutPrefix(content, errorMark); ok {
		r.Content, r.Error = rest, true
		r.Refused = strings.HasPrefix(rest, "blocked")
	}
	return r
}

// templateFuncs are available in step templates.
var templateFuncs = template.FuncMap{
	"json": func(v any) (string, error) {
		b, err := json.Marshal(v)
		return string(b), err
	},
	"lines": func(s string) int {
		if s = strings.TrimRight(s, "\n"); s == "" {
			return 0
		}
		return strings.Count(s, "\n") + 1
	},
	"contains": strings.Contains,
	// isError and refused read a raw tool result (ToolResults, LastResult)
	// as Result does.
	"isError": func(s string) bool { return newResult("", "", s).Error },
	"refused": func(s string) bool { return newResult("", "", s).Refused },
	// find returns the first match of the regular expression re in s,
	// or "" (a bad expression is an error).
	"find": func(re, s string) (string, error) {
		r, err := regexp.Compile(re)
		if err != nil {
			return "", err
		}
		return r.FindString(s), nil
	},
	"head": func(n int, s string) string {
		parts := strings.SplitAfter(s, "\n")
		if len(parts) > n {
			parts = parts[:n]
		}
		return strings.TrimRight(strings.Join(parts, ""), "\n")
	},
}

// ParseTranscript reads and checks a transcript.
func ParseTranscript(b []byte) (*Transcript, error) {
	var t Transcript
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&t); err != nil {
		return nil, fmt.Errorf("%w: transcript: %v", ErrConfig, err)
	}
	if t.Model == "" || len(t.Turns) == 0 {
		return nil, fmt.Errorf("%w: transcript needs a model and at least one turn", ErrConfig)
	}
	for i := range t.Turns {
		turn := &t.Turns[i]
		re, err := regexp.Compile(turn.Match)
		if err != nil {
			return nil, fmt.Errorf("%w: turn %d match: %v", ErrConfig, i, err)
		}
		turn.re = re
		if len(turn.Steps) == 0 {
			return nil, fmt.Errorf("%w: turn %d has no steps", ErrConfig, i)
		}
		for j := range turn.Steps {
			st := &turn.Steps[j]
			switch {
			case st.Text == "" && len(st.ToolCalls) == 0:
				return nil, fmt.Errorf("%w: turn %d step %d is empty", ErrConfig, i, j)
			case (st.If == "") != (st.Else == ""):
				return nil, fmt.Errorf("%w: turn %d step %d: if and else go together", ErrConfig, i, j)
			}
			if st.tmpl, err = newTemplate(st.Text); err != nil {
				return nil, fmt.Errorf("%w: turn %d step %d: %v", ErrConfig, i, j, err)
			}
			if st.If != "" {
				if st.cond, err = newTemplate(st.If); err != nil {
					return nil, fmt.Errorf("%w: turn %d step %d if: %v", ErrConfig, i, j, err)
				}
				if st.elseTmpl, err = newTemplate(st.Else); err != nil {
					return nil, fmt.Errorf("%w: turn %d step %d else: %v", ErrConfig, i, j, err)
				}
			}
			for k := range st.ToolCalls {
				c := &st.ToolCalls[k]
				if c.Name == "" {
					return nil, fmt.Errorf("%w: turn %d step %d call %d has no name", ErrConfig, i, j, k)
				}
				if c.tmpl, err = newTemplate(orEmptyObject(c.Arguments)); err != nil {
					return nil, fmt.Errorf("%w: turn %d step %d call %d: %v", ErrConfig, i, j, k, err)
				}
			}
		}
	}
	return &t, nil
}

// ScriptedProvider is a deterministic model following a Transcript. It
// answers in the OpenAI streaming format, so its answers are recorded and
// replayed through the same parser as a real provider's.
type ScriptedProvider struct {
	t *Transcript
}

// NewScripted returns a scripted provider.
func NewScripted(t *Transcript) *ScriptedProvider { return &ScriptedProvider{t: t} }

// Name implements Provider.
func (p *ScriptedProvider) Name() string { return "scripted" }

// Model implements Provider.
func (p *ScriptedProvider) Model() string { return p.t.Model }

// Encode implements Provider (OpenAI request format).
func (p *ScriptedProvider) Encode(req *Request) ([]byte, error) { return encodeOpenAI(req, p.t.Model) }

// Parse implements Provider (OpenAI stream format).
func (p *ScriptedProvider) Parse(r io.Reader, fn func(Chunk) error) error { return parseOpenAI(r, fn) }

// Send implements Provider: it reads the request body it was given and
// writes the scripted answer as an OpenAI event stream.
func (p *ScriptedProvider) Send(ctx context.Context, body []byte) (io.ReadCloser, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	var req oaiRequest
	if err := json.Unmarshal(body, &req); err != nil {
		return nil, fmt.Errorf("%w: scripted model got a request that is not JSON: %v", ErrConfig, err)
	}
	data, turn, err := p.locate(req.Messages)
	if err != nil {
		return nil, err
	}
	step := turn.Steps[min(data.Step, len(turn.Steps)-1)]
	textTmpl, scripted := step.tmpl, step.ToolCalls
	if step.cond != nil {
		holds, err := render(step.cond, data)
		if err != nil {
			return nil, fmt.Errorf("%w: step condition: %v", ErrConfig, err)
		}
		if h := strings.TrimSpace(holds); h == "" || h == "false" {
			textTmpl, scripted = step.elseTmpl, nil
		}
	}
	text, err := render(textTmpl, data)
	if err != nil {
		return nil, fmt.Errorf("%w: step text: %v", ErrConfig, err)
	}
	calls := make([]ToolCall, len(scripted))
	for i, c := range scripted {
		args, err := render(c.tmpl, data)
		if err != nil || !json.Valid([]byte(args)) {
			return nil, fmt.Errorf("%w: arguments of scripted call %s are not JSON after templating: %q (%v)", ErrConfig, c.Name, args, err)
		}
		calls[i] = ToolCall{ID: fmt.Sprintf("call_%d_%d", len(req.Messages), i), Name: c.Name, Arguments: args}
	}
	return io.NopCloser(bytes.NewReader(p.stream(text, calls, len(body)))), nil
}

// locate finds the last user message, the turn for it, and the step.
func (p *ScriptedProvider) locate(msgs []oaiMessage) (StepData, *Turn, error) {
	last := -1
	for i, m := range msgs {
		if m.Role == RoleUser {
			last = i
		}
	}
	if last < 0 {
		return StepData{}, nil, fmt.Errorf("%w: no user message", ErrNoScript)
	}
	d := StepData{User: deref(msgs[last].Content)}
	asked := map[string]oaiToolCall{}
	for _, m := range msgs[last+1:] {
		switch m.Role {
		case RoleAssistant:
			d.Step++
			for _, c := range m.ToolCalls {
				asked[c.ID] = c
			}
		case RoleTool:
			content := deref(m.Content)
			c := asked[m.ToolCallID]
			r := newResult(c.Function.Name, c.Function.Arguments, content)
			d.ToolResults, d.Results = append(d.ToolResults, content), append(d.Results, r)
			if r.Error {
				d.Errors++
			}
			if r.Refused {
				d.Refused++
			}
		}
	}
	d.OK = d.Errors == 0
	if n := len(d.ToolResults); n > 0 {
		d.LastResult = d.ToolResults[n-1]
	}
	for i := range p.t.Turns {
		if m := p.t.Turns[i].re.FindStringSubmatch(d.User); m != nil {
			d.Match = m
			return d, &p.t.Turns[i], nil
		}
	}
	return d, nil, fmt.Errorf("%w: %q", ErrNoScript, truncateRunes(d.User, 60))
}

// stream renders an answer as OpenAI chat completion chunks. Text goes out
// a word at a time, like a real model's tokens. Call ids derive from the
// answer's position in the conversation (messages before it), so they are
// unique within a session and stable across replays.
func (p *ScriptedProvider) stream(text string, calls []ToolCall, reqLen int) []byte {
	var b bytes.Buffer
	emit := func(v any) {
		j, _ := json.Marshal(v)
		b.WriteString("data: ")
		b.Write(j)
		b.WriteString("\n\n")
	}
	type delta struct {
		Content   string        `json:"content,omitempty"`
		ToolCalls []oaiToolCall `json:"tool_calls,omitempty"`
	}
	type choice struct {
		Index        int     `json:"index"`
		Delta        delta   `json:"delta"`
		FinishReason *string `json:"finish_reason"`
	}
	chunk := func(c choice) map[string]any {
		return map[string]any{"object": "chat.completion.chunk", "model": p.t.Model, "choices": []choice{c}}
	}
	words := 0
	for _, w := range splitWords(text) {
		emit(chunk(choice{Delta: delta{Content: w}}))
		words++
	}
	for i, c := range calls {
		var tc oaiToolCall
		idx := i
		tc.Index, tc.ID, tc.Type = &idx, c.ID, "function"
		tc.Function.Name, tc.Function.Arguments = c.Name, c.Arguments
		emit(chunk(choice{Delta: delta{ToolCalls: []oaiToolCall{tc}}}))
	}
	reason := "stop"
	if len(calls) > 0 {
		reason = "tool_calls"
	}
	emit(chunk(choice{FinishReason: &reason}))
	emit(map[string]any{"object": "chat.completion.chunk", "model": p.t.Model, "choices": []choice{},
		"usage": map[string]int{"prompt_tokens": reqLen / 4, "completion_tokens": words + 8*len(calls)}})
	b.WriteString("data: [DONE]\n\n")
	return b.Bytes()
}

// splitWords splits text into pieces that keep their trailing space, so
// joining them gives the text back exactly.
func splitWords(s string) []string {
	var out []string
	for s != "" {
		i := strings.IndexByte(s, ' ')
		if i < 0 {
			out = append(out, s)
			break
		}
		out = append(out, s[:i+1])
		s = s[i+1:]
	}
	return out
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

func truncateRunes(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n]) + "..."
}

func newTemplate(text string) (*template.Template, error) {
	return template.New("step").Option("missingkey=error").Funcs(templateFuncs).Parse(text)
}

func render(t *template.Template, d StepData) (string, error) {
	var b bytes.Buffer
	err := t.Execute(&b, d)
	return b.String(), err
}
