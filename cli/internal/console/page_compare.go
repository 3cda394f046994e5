package console

import (
	"fmt"
	"net/http"
	"strings"

	"github.com/opx-dev/opx/replay"
)

// CompareLimit is the most tool calls of each session the side-by-side
// aligns (the alignment costs their product); the rest are counted, not
// shown.
const CompareLimit = 1000

// compareView is two sessions' tool calls side by side, aligned by tool
// (a longest common subsequence of their tool names), each pair marked
// same or different in arguments, verdicts and outcome.
type compareView struct {
	A, B               string
	Rows               []compareRow
	Same, Differ, Only int
	// CutA and CutB count the calls past CompareLimit left out.
	CutA, CutB int
}

// compareRow is one line: a call of A, of B, or of both (aligned).
type compareRow struct {
	A, B *compareCall
	// Kind is "same", "differ", "only-a" or "only-b"; Args, Verdicts and
	// Outcome say which of them differ for an aligned pair.
	Kind                    string
	Args, Verdicts, Outcome bool
}

// compareCall is what the side-by-side shows of one tool call.
type compareCall struct {
	Session   string // the session whose page shows it
	Seq       uint64
	Tool      string
	SubAgent  string
	Arguments string
	Verdicts  string // each tier's decision and rule, in order
	Outcome   string
	BlockedBy string
}

// compareParams reads the two session ids: ?a=&b=, or two ?s= (the
// listing's checkboxes).
func compareParams(r *http.Request) (a, b string, err error) {
	q := r.URL.Query()
	ids := q["s"]
	if len(ids) == 0 {
		ids = []string{q.Get("a"), q.Get("b")}
	}
	if len(ids) != 2 {
		return "", "", fmt.Errorf("%w: pick two sessions to compare (%d picked)", ErrBadRequest, len(ids))
	}
	for _, id := range ids {
		if !sessionID.MatchString(id) {
			return "", "", fmt.Errorf("%w: session id", ErrBadRequest)
		}
	}
	return ids[0], ids[1], nil
}

func (s *Server) comparePage(w http.ResponseWriter, r *http.Request) (any, error) {
	a, b, err := compareParams(r)
	if err != nil {
		return nil, err
	}
	va, err := s.src.Session(r.Context(), a)
	if err != nil {
		return nil, err
	}
	vb, err := s.src.Session(r.Context(), b)
	if err != nil {
		return nil, err
	}
	ca, cb := toolCalls(va.Timeline), toolCalls(vb.Timeline)
	v := &compareView{A: a, B: b}
	if len(ca) > CompareLimit {
		v.CutA, ca = len(ca)-CompareLimit, ca[:CompareLimit]
	}
	if len(cb) > CompareLimit {
		v.CutB, cb = len(cb)-CompareLimit, cb[:CompareLimit]
	}
	v.Rows = align(ca, cb)
	for _, row := range v.Rows {
		switch row.Kind {
		case "same":
			v.Same++
		case "differ":
			v.Differ++
		default:
			v.Only++
		}
	}
	return v, nil
}

// toolCalls are t's tool calls in the order they were proposed, a
// sub-agent's after the call that spawned it.
func toolCalls(t *replay.Timeline) []*compareCall {
	var out []*compareCall
	var walk func(turns []*replay.Turn)
	walk = func(turns []*replay.Turn) {
		for _, tn := range turns {
			for _, c := range tn.ToolCalls {
				cc := &compareCall{Session: t.Session, Seq: c.Seq, Tool: c.Tool, SubAgent: c.SubAgentID, Arguments: c.Arguments, Outcome: c.Outcome}
				var vs []string
				for _, x := range c.Verdicts {
					vs = append(vs, fmt.Sprintf("tier %d %s %s", x.Tier, x.Decision, x.Rule))
				}
				cc.Verdicts = strings.Join(vs, "; ")
				if c.BlockedBy != nil {
					cc.BlockedBy = c.BlockedBy.Rule
				}
				out = append(out, cc)
				if c.SubAgent != nil {
					walk(c.SubAgent.Turns)
				}
			}
		}
	}
	if t != nil {
		walk(t.Turns)
	}
	return out
}

// align pairs a's and b's calls along a longest common subsequence of
// their tool names (O(len(a)·len(b)) time, 2 bytes a cell: at most
// CompareLimit² of them).
func align(a, b []*compareCall) []compareRow {
	n, m := len(a), len(b)
	// l[i][j] is the LCS length of a[i:] and b[j:].
	l := make([][]uint16, n+1)
	for i := range l {
		l[i] = make([]uint16, m+1)
	}
	for i := n - 1; i >= 0; i-- {
		for j := m - 1; j >= 0; j-- {
			switch {
			case a[i].Tool == b[j].Tool:
				l[i][j] = l[i+1][j+1] + 1
			case l[i+1][j] >= l[i][j+1]:
				l[i][j] = l[i+1][j]
			default:
				l[i][j] = l[i][j+1]
			}
		}
	}
	var rows []compareRow
	i, j := 0, 0
	for i < n || j < m {
		switch {
		case i < n && j < m && a[i].Tool == b[j].Tool:
			r := compareRow{A: a[i], B: b[j], Args: a[i].Arguments != b[j].Arguments,
				Verdicts: a[i].Verdicts != b[j].Verdicts, Outcome: a[i].Outcome != b[j].Outcome}
			r.Kind = "same"
			if r.Args || r.Verdicts || r.Outcome {
				r.Kind = "differ"
			}
			rows = append(rows, r)
			i, j = i+1, j+1
		case j == m || (i < n && l[i+1][j] >= l[i][j+1]):
			rows = append(rows, compareRow{A: a[i], Kind: "only-a"})
			i++
		default:
			rows = append(rows, compareRow{B: b[j], Kind: "only-b"})
			j++
		}
	}
	return rows
}
