package shield

import "context"

// Helpers of the rules 13 tables (rules13_*_test.go): the actions the
// judge hands Shield for a file tool in testShield's workspace (/ws), and
// the rules' verdict of one.

// editAct is edit_file of p (relative to /ws) from old to new.
func editAct(p, old, new string) Action {
	return Action{Tool: "edit_file", Facts: Facts{Writes: []Ref{{Path: "/ws/" + p}},
		Texts: []Text{{Source: "content:/ws/" + p, Body: new}}, Removed: []Text{{Source: "content:/ws/" + p, Body: old}}}}
}

// writeAct is write_file of body to p (relative to /ws).
func writeAct(p, body string) Action {
	return Action{Tool: "write_file", Facts: Facts{Writes: []Ref{{Path: "/ws/" + p}}, Texts: []Text{{Source: "content:/ws/" + p, Body: body}}}}
}

// rulesVerdict is the rules' verdict of a: the last one Evaluate gives,
// the learned scorer's (learned:risk, after heuristics:none) left out —
// these tables test the rules.
func rulesVerdict(s *Shield, a Action) Verdict {
	vs := s.Evaluate(context.Background(), a)
	if n := len(vs); n > 1 && vs[n-1].Rule == "learned:risk" {
		return vs[n-2]
	}
	return vs[len(vs)-1]
}
