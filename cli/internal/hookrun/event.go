package hookrun

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strings"
	"unicode"

	"github.com/opx-dev/opx/agents/hookproto"
	"github.com/opx-dev/opx/internal/textclip"
)

// readEvent reads the hook's stdin: at most hookproto.MaxEventBytes, a
// longer input refused after MaxEventBytes+1 bytes (their first chunk
// returned, so that the event's name can still be looked for). It reads
// in chunks and joins them once, so memory is about twice the event,
// never more than twice the bound.
func readEvent(r io.Reader) ([]byte, error) {
	var chunks [][]byte
	n, size := 0, 64<<10
	for n <= hookproto.MaxEventBytes {
		buf := make([]byte, min(size, hookproto.MaxEventBytes+1-n))
		k, err := io.ReadFull(r, buf)
		chunks, n, size = append(chunks, buf[:k]), n+k, 1<<20
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("%w: %v", hookproto.ErrRead, err)
		}
	}
	if n > hookproto.MaxEventBytes {
		return chunks[0], fmt.Errorf("%w: more than %d bytes on stdin", hookproto.ErrTooLarge, hookproto.MaxEventBytes)
	}
	return bytes.Join(chunks, nil), nil
}

// eventNameAt finds the first hook_event_name member with a plain name
// in text that is not JSON (cut, or broken): each CLI writes it before
// the tool's input, so the first one is the event's.
var eventNameAt = regexp.MustCompile(`"hook_event_name"\s*:\s*"([A-Za-z]{1,64})"`)

// sniffKind is the name and kind of an event that could not be decoded,
// as far as its name says: KindPreTool when it names none (fail closed),
// so only an event that says it is something else is not denied.
func sniffKind(agent hookproto.Agent, raw []byte) (string, hookproto.Kind) {
	var w struct {
		Name *string `json:"hook_event_name"`
	}
	name := ""
	switch err := json.Unmarshal(raw, &w); {
	case err == nil && w.Name != nil:
		name = *w.Name
	case err != nil:
		if m := eventNameAt.FindSubmatch(raw); m != nil {
			name = string(m[1])
		}
	}
	if name == "" || len(name) > hookproto.MaxNameBytes || strings.ContainsFunc(name, unicode.IsControl) {
		return "", hookproto.KindPreTool
	}
	return name, hookproto.KindOf(agent, name)
}

// fitEvent returns the event to send the engine: raw if it fits in a
// message. A larger tool call is refused (opx judges calls of at most
// maxSend bytes); any other larger event is sent with its
// tool_response cut to its first cutResponse bytes, as a string,
// and a member "opx_truncated" giving the response's size.
func fitEvent(raw []byte, kind hookproto.Kind) ([]byte, error) {
	if len(raw) <= maxSend {
		return raw, nil
	}
	if kind == hookproto.KindPreTool {
		return nil, fmt.Errorf("the call's event is %d bytes; opx judges tool calls of at most %d bytes", len(raw), maxSend)
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, fmt.Errorf("%w: %v", hookproto.ErrMalformed, err)
	}
	resp, ok := m["tool_response"]
	if !ok {
		return nil, fmt.Errorf("the event is %d bytes, more than opx records (%d) and has no tool response to cut", len(raw), maxSend)
	}
	var text string
	if json.Unmarshal(resp, &text) != nil {
		text = string(resp) // not a string: its JSON text
	}
	text = strings.ToValidUTF8(textclip.Cut(text, cutResponse), "\uFFFD")
	cut, err := json.Marshal(text)
	if err != nil {
		return nil, err
	}
	m["tool_response"] = cut
	m["opx_truncated"] = fmt.Appendf(nil, "%d", len(resp))
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	// Not escaped: Gemini's derived tool-use id hashes the tool input,
	// which must reach the engine as the CLI wrote it.
	enc.SetEscapeHTML(false)
	if err := enc.Encode(m); err != nil {
		return nil, err
	}
	out := bytes.TrimSuffix(b.Bytes(), []byte("\n"))
	if len(out) > maxSend {
		return nil, fmt.Errorf("the event is %d bytes with its tool response cut, more than opx records (%d)", len(out), maxSend)
	}
	return out, nil
}
