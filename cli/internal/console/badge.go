package console

import (
	"html"
	"html/template"
	"net/url"
	"strconv"
	"strings"
)

// HTML is the badge as the session page shows it. It is written here
// rather than by a template because a timeline shows one per step (ten
// or so per tool call): html/template's reflection, a few microseconds
// an action, made the badges most of a 1,000-step page's rendering.
// Every value is escaped for where it goes: recorded text (the notes)
// is Neutral and HTML-escaped, the session id path-escaped then
// HTML-escaped, the rest are numbers, hex hashes, and the console's own
// base path (a checked source id).
func (b Badge) HTML(base string) template.HTML {
	var w strings.Builder
	w.Grow(512)
	esc := html.EscapeString
	seq := strconv.FormatUint(b.Seq, 10)
	base = esc(base)
	w.WriteString(`<span class="badge`)
	if b.Failed {
		w.WriteString(` b-failed`)
	}
	w.WriteString(`" data-seq="` + seq + `" id="seq-` + seq + `"><a class="seq" href="` + base + `/entry/` + seq +
		`" title="download the entry&#39;s stored bytes">#` + seq + `</a>`)
	if b.Hash != "" {
		h := esc(b.Hash)
		w.WriteString(` <code class="hash" title="` + h + `">` + esc(hash12(b.Hash)) + `</code>`)
	}
	switch {
	case b.Failed:
		w.WriteString(` <span class="b b-bad">does not verify</span>`)
	case b.Chain:
		w.WriteString(` <span class="b b-chain" title="chain-verified">chain ✓</span>`)
	}
	if b.Signed {
		w.WriteString(` <a class="b b-signed proof" href="` + base + `/proof/` + seq +
			`" title="download the inclusion proof (opx ledger verify-proof)">signed ✓ proof</a>`)
	}
	if b.Cosigned {
		w.WriteString(` <span class="b b-witness" title="a witness cosigned a checkpoint that holds it">witnessed ✓</span>`)
	}
	ses := esc(url.PathEscape(b.Session))
	if b.Session != "" && b.Seq != 0 {
		w.WriteString(` <a class="annotate" href="` + base + `/sessions/` + ses + `/annotate?about=` + seq +
			`" title="annotate this step (a ledger.note about entry ` + seq + `)">✎</a>`)
	}
	if b.Files && b.Seq != 0 {
		w.WriteString(` <a class="wslink" href="` + base + `/sessions/` + ses + `/workspace?at=` + seq +
			`" title="the workspace&#39;s files as the ledger knew them at this step">files</a>`)
	}
	for _, n := range b.Notes {
		ns := strconv.FormatUint(n.Seq, 10)
		w.WriteString(` <span class="annot" data-note="` + ns + `" data-about="` + seq + `">✎ #` + ns + ` ` + esc(Neutral(n.Author)))
		if n.Client != "" {
			w.WriteString(` (` + esc(Neutral(n.Client)) + `)`)
		}
		w.WriteString(`: ` + esc(short(n.Text, 2000)) + `</span>`)
	}
	w.WriteString(`</span>`)
	return template.HTML(w.String())
}
