package shellx_test

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/opx-dev/opx/shield/shellx"
)

// render writes a command compactly for table tests: "{via}@depth " when
// nested, assignments, then argv; a Dynamic word is prefixed "D:", a Glob
// one "G:"; redirections follow as fd, op and target; "|N" marks PipeIn.
func render(c shellx.Command) string {
	var parts []string
	if c.Via != "" || c.Depth > 0 {
		parts = append(parts, fmt.Sprintf("{%s}@%d", c.Via, c.Depth))
	}
	if c.PipeIn >= 0 {
		parts = append(parts, "|"+strconv.Itoa(c.PipeIn))
	}
	for _, a := range c.Assigns {
		parts = append(parts, a.Name+"="+renderWord(a.Value))
	}
	for _, w := range c.Args {
		parts = append(parts, renderWord(w))
	}
	for _, r := range c.Redirects {
		parts = append(parts, r.Fd+r.Op+renderWord(r.Target))
	}
	return strings.Join(parts, " ")
}

func renderWord(w shellx.Word) string {
	t := w.Text
	if t == "" || strings.ContainsAny(t, " \t\n\"\\") {
		t = strconv.Quote(t)
	}
	switch {
	case w.Dynamic && w.Glob:
		return "DG:" + t
	case w.Dynamic:
		return "D:" + t
	case w.Glob:
		return "G:" + t
	}
	return t
}

func dump(a shellx.Analysis) string {
	var b strings.Builder
	for _, c := range a.Commands {
		fmt.Fprintf(&b, "%q, // %q\n", render(c), c.Line)
	}
	for _, l := range a.Literals {
		fmt.Fprintf(&b, "lit %s: %q\n", l.Source, l.Text)
	}
	if a.Err != nil {
		fmt.Fprintf(&b, "err: %v\n", a.Err)
	}
	return b.String()
}
