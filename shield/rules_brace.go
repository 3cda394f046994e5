package shield

import "strings"

// braceCommand is `obfuscation:brace-command` (escalate; rules 14): a
// command whose program is spelled by a brace expansion ({rm,-rf,src},
// {cu,}rl …): the shell makes the program and its arguments from a
// comma list, which nobody writes to run a program but to keep its name
// and flags off the line. Shield judges the expanded command too; this
// asks about the disguise itself.
func (s *Shield) braceCommand(_ *Action, f *Facts, j *judgement) {
	for i := range f.Runs {
		r := &f.Runs[i]
		w := leadProgram(r.Line)
		if open := strings.IndexByte(w, '{'); open >= 0 {
			if k := strings.IndexByte(w[open:], '}'); k > 0 && strings.Contains(w[open:open+k], ",") {
				j.escalate("obfuscation:brace-command", "%s spells its program with a brace expansion (%s): a disguise, not a way to run a program", quote(r.Line), clipText(w, 40))
				return
			}
		}
	}
}
