package console

import (
	"strings"
	"testing"
)

// TestBadge_HTML_Hostile: the badge written in Go escapes what it shows
// of recorded content (a note's author, client and text, the session id)
// and neutralises controls, as the templates do.
func TestBadge_HTML_Hostile(t *testing.T) {
	b := Badge{Seq: 7, Hash: "ab\"><script>", Chain: true, Signed: true, Cosigned: true, Files: true,
		Session: `ses_"><img src=x onerror=alert(1)>`,
		Notes: []annotation{{Seq: 9, Author: "<script>alert(1)</script>", Client: `"onmouseover="x`,
			Text: "javascript:alert(1) \x1b[2J \u202e" + strings.Repeat("A", 5000)}}}
	got := string(b.HTML("/sources/abc"))
	for _, bad := range []string{"<script", "<img", `"onmouseover`, "\x1b", "\u202e", `ses_">`} {
		if strings.Contains(got, bad) {
			t.Errorf("badge holds %q: %s", bad, got)
		}
	}
	for _, want := range []string{`href="/sources/abc/proof/7"`, "&lt;script&gt;alert(1)&lt;/script&gt;", "␛[2J", `\u202e`, "…</span>",
		`href="/sources/abc/sessions/ses_%22%3E%3Cimg%20src=x%20onerror=alert%281%29%3E/annotate?about=7"`} {
		if !strings.Contains(got, want) {
			t.Errorf("badge lacks %q: %.600s", want, got)
		}
	}
	if len(got) > 4000 {
		t.Errorf("a note of 5,000 bytes shown whole (%d bytes)", len(got))
	}
}
