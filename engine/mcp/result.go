package mcp

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"
)

// renderResult reads a tools/call result as received and renders it for
// a model (see Result). It fails only when raw is not a CallToolResult:
// not an object, or content that is not an array of objects.
func renderResult(raw json.RawMessage) (Result, error) {
	var res struct {
		Content           []json.RawMessage `json:"content"`
		StructuredContent json.RawMessage   `json:"structuredContent"`
		IsError           bool              `json:"isError"`
	}
	if t := bytes.TrimSpace(raw); len(t) == 0 || t[0] != '{' {
		return Result{}, errors.New("the result is not a JSON object")
	}
	if err := json.Unmarshal(raw, &res); err != nil {
		return Result{}, err
	}
	var w capWriter
	w.max = MaxResultBytes - 80 // room for the note of a cut
	texts := 0
	for i, c := range res.Content {
		var item struct {
			Type     string `json:"type"`
			Text     string `json:"text"`
			MimeType string `json:"mimeType"`
			Data     string `json:"data"`
			URI      string `json:"uri"`
			Name     string `json:"name"`
			Resource *struct {
				URI      string  `json:"uri"`
				MimeType string  `json:"mimeType"`
				Text     *string `json:"text"`
				Blob     string  `json:"blob"`
			} `json:"resource"`
		}
		if err := json.Unmarshal(c, &item); err != nil {
			return Result{}, fmt.Errorf("content #%d: %v", i, err)
		}
		if i > 0 {
			w.WriteString("\n")
		}
		switch item.Type {
		case "text":
			texts++
			w.WriteString(item.Text)
		case "image", "audio":
			fmt.Fprintf(&w, "[%s %s, %d bytes]", item.Type, oneLine(item.MimeType), base64Len(item.Data))
		case "resource_link":
			fmt.Fprintf(&w, "[resource link %s %s]", oneLine(item.URI), oneLine(item.Name))
		case "resource":
			switch r := item.Resource; {
			case r == nil:
				w.WriteString("[resource]")
			case r.Text != nil:
				texts++
				fmt.Fprintf(&w, "[resource %s]\n", oneLine(r.URI))
				w.WriteString(*r.Text)
			default:
				fmt.Fprintf(&w, "[resource %s %s, %d bytes]", oneLine(r.URI), oneLine(r.MimeType), base64Len(r.Blob))
			}
		default:
			fmt.Fprintf(&w, "[%s content]", oneLine(item.Type))
		}
	}
	// Structured content is rendered when there is no text to read: a
	// server that sends both puts the same in its text (as MCP asks).
	if sc := bytes.TrimSpace(res.StructuredContent); texts == 0 && len(sc) > 0 && string(sc) != "null" {
		if len(res.Content) > 0 {
			w.WriteString("\n")
		}
		w.Write(sc)
	}
	r := Result{Raw: raw, IsError: res.IsError}
	r.Text, r.Truncated = w.result()
	return r, nil
}

// capWriter keeps the first max bytes written and counts the rest.
type capWriter struct {
	max     int
	buf     []byte
	dropped int64
}

func (w *capWriter) Write(p []byte) (int, error) {
	room := w.max - len(w.buf)
	if room >= len(p) {
		w.buf = append(w.buf, p...)
	} else {
		if room > 0 {
			w.buf = append(w.buf, p[:room]...)
		}
		w.dropped += int64(len(p) - max(room, 0))
	}
	return len(p), nil
}

func (w *capWriter) WriteString(s string) { w.Write([]byte(s)) }

// result returns the text kept, valid UTF-8, with a note of the cut.
func (w *capWriter) result() (string, bool) {
	b := w.buf
	if w.dropped == 0 {
		return strings.ToValidUTF8(string(b), "\uFFFD"), false
	}
	// Do not end inside a character.
	for i := 0; i < utf8.UTFMax && len(b) > 0; i++ {
		if r, size := utf8.DecodeLastRune(b); r != utf8.RuneError || size > 1 {
			break
		}
		b = b[:len(b)-1]
	}
	total := int64(len(w.buf)) + w.dropped
	return strings.ToValidUTF8(string(b), "\uFFFD") + fmt.Sprintf("\n[opx: result cut at %d of %d bytes]", len(b), total), true
}

// base64Len is the decoded size of base64 text.
func base64Len(s string) int {
	n := len(strings.TrimRight(s, "="))
	return n * 3 / 4
}

// oneLine renders a server's string for a one-line note.
func oneLine(s string) string {
	return clip(strings.Join(strings.Fields(s), " "), 200)
}
