package mcp

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestRenderResult(t *testing.T) {
	tests := []struct {
		name    string
		raw     string
		text    string
		isError bool
		err     bool
	}{
		{"Text", `{"content":[{"type":"text","text":"a"},{"type":"text","text":"b"}]}`, "a\nb", false, false},
		{"Image", `{"content":[{"type":"image","mimeType":"image/png","data":"AAAA"}]}`, "[image image/png, 3 bytes]", false, false},
		{"Audio", `{"content":[{"type":"audio","mimeType":"audio/wav","data":"AAAAAA=="}]}`, "[audio audio/wav, 4 bytes]", false, false},
		{"Link", `{"content":[{"type":"resource_link","uri":"file:///x","name":"x"}]}`, "[resource link file:///x x]", false, false},
		{"EmbeddedText", `{"content":[{"type":"resource","resource":{"uri":"file:///a","text":"body"}}]}`, "[resource file:///a]\nbody", false, false},
		{"EmbeddedBlob", `{"content":[{"type":"resource","resource":{"uri":"file:///b","mimeType":"x/y","blob":"AAAA"}}]}`, "[resource file:///b x/y, 3 bytes]", false, false},
		{"Unknown", `{"content":[{"type":"hologram"}]}`, "[hologram content]", false, false},
		{"NewlinesInNote", `{"content":[{"type":"image","mimeType":"a\nb","data":""}]}`, "[image a b, 0 bytes]", false, false},
		{"Structured", `{"content":[],"structuredContent":{"n":1}}`, `{"n":1}`, false, false},
		{"StructuredBesideText", `{"content":[{"type":"text","text":"n=1"}],"structuredContent":{"n":1}}`, "n=1", false, false},
		{"Error", `{"content":[{"type":"text","text":"no"}],"isError":true}`, "no", true, false},
		{"Empty", `{}`, "", false, false},
		{"InvalidUTF8", "{\"content\":[{\"type\":\"text\",\"text\":\"a\\udc00b\"}]}", "a\uFFFDb", false, false},
		{"NotObject", `[1]`, "", false, true},
		{"ContentNotArray", `{"content":"x"}`, "", false, true},
		{"ItemNotObject", `{"content":[1]}`, "", false, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := renderResult(json.RawMessage(tt.raw))
			if (err != nil) != tt.err {
				t.Fatalf("err %v", err)
			}
			if err != nil {
				return
			}
			if r.Text != tt.text || r.IsError != tt.isError || r.Truncated || string(r.Raw) != tt.raw {
				t.Errorf("got %+v, want text %q", r, tt.text)
			}
		})
	}
}

func TestRenderResult_Cut(t *testing.T) {
	// Multi-byte characters across the cut: the text stays valid UTF-8.
	body := strings.Repeat("é", MaxResultBytes)
	raw, _ := json.Marshal(map[string]any{"content": []any{map[string]any{"type": "text", "text": body}}})
	r, err := renderResult(raw)
	if err != nil {
		t.Fatal(err)
	}
	if !r.Truncated || len(r.Text) > MaxResultBytes || !utf8.ValidString(r.Text) || !strings.HasSuffix(r.Text, " bytes]") ||
		!strings.Contains(r.Text, "of 2097152 bytes") {
		t.Errorf("truncated %v, %d bytes, valid %v, ends %q", r.Truncated, len(r.Text), utf8.ValidString(r.Text), r.Text[len(r.Text)-50:])
	}
}

func TestToolsFromListing_Hostile(t *testing.T) {
	for _, listing := range []string{``, `[]`, `{"tools":{}}`, `{"tools":[1,"x",null,{}]}`, strings.Repeat("[", 100000),
		`{"tools":[{"name":"a","inputSchema":{"type":"object"}}]` + strings.Repeat(" ", MaxListingBytes+(2<<20)) + `}`} {
		tools, refused, err := ToolsFromListing("s", false, []byte(listing))
		if err == nil && len(tools) != 0 {
			t.Errorf("%.40q: tools %+v refused %q", listing, tools, refused)
		}
	}
	tools, refused, err := ToolsFromListing("s", true, []byte(`{"tools":[{"name":"ok","inputSchema":{"type":"object"},"annotations":{"readOnlyHint":true}},{"name":"ok","inputSchema":{"type":"object"}},{"name":"x y"}]}`))
	if err != nil || len(tools) != 1 || !tools[0].Mutating || !tools[0].ReadOnlyHint || len(refused) != 2 {
		t.Errorf("tools %+v refused %q %v", tools, refused, err)
	}
}
