package rerun

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/opx-dev/opx/chronicle/textdiff"
	"github.com/opx-dev/opx/ledger"
	"github.com/opx-dev/opx/ledger/event"
)

// Result is the outcome of a comparison.
type Result struct {
	Identical bool `json:"identical"`
	// Events counts the recorded entries compared; Produced the entries
	// the rerun produced in the session.
	Events   int `json:"events"`
	Produced int `json:"produced"`
	// Matched counts the recorded entries that matched before the
	// divergence (Events when identical).
	Matched int `json:"matched"`
	// Divergence is the first difference; nil when identical.
	Divergence *Divergence `json:"divergence,omitempty"`
}

// Divergence kinds.
const (
	// KindPayload: same type, different data.
	KindPayload = "payload"
	// KindType: another type of entry at this point.
	KindType = "type"
	// KindMissing: the rerun ended (or stopped) before this recorded entry.
	KindMissing = "missing"
	// KindExtra: the rerun produced an entry after the record's last.
	KindExtra = "extra"
)

// Divergence is the first point where the rerun differs from the record.
type Divergence struct {
	Kind string `json:"kind"`
	// Seq and Type are the recorded entry's (Seq 0 and Type "" for
	// KindExtra, where AfterSeq is the record's last entry).
	Seq          uint64 `json:"seq"`
	Type         string `json:"type"`
	AfterSeq     uint64 `json:"after_seq,omitempty"`
	ProducedSeq  uint64 `json:"produced_seq,omitempty"`
	ProducedType string `json:"produced_type,omitempty"`
	// Recorded and Produced are the normalised payloads compared
	// (canonical JSON); Diff is the unified diff between them.
	Recorded json.RawMessage `json:"recorded,omitempty"`
	Produced json.RawMessage `json:"produced,omitempty"`
	Diff     string          `json:"diff"`
}

// item is an entry, or a merged token run, as compared.
type item struct {
	seq  uint64
	typ  string
	data map[string]any
	n    int // entries it stands for
}

// Compare compares the entries a rerun produced in the session with the
// recorded ones, after the normalisation the package documents. Both
// lists hold only the session's entries, in seq order. The error is set
// only for an entry whose data is not a JSON object.
func Compare(recorded, produced []ledger.Entry) (*Result, error) {
	rec, err := normalize(recorded)
	if err != nil {
		return nil, fmt.Errorf("recorded: %w", err)
	}
	pro, err := normalize(produced)
	if err != nil {
		return nil, fmt.Errorf("produced: %w", err)
	}
	res := &Result{Events: len(recorded), Produced: len(produced)}
	ids := renaming{to: map[string]string{}, from: map[string]string{}}
	for i := 0; i < len(rec) || i < len(pro); i++ {
		var d *Divergence
		switch {
		case i >= len(pro):
			d = divergence(KindMissing, &rec[i], nil)
		case i >= len(rec):
			d = divergence(KindExtra, nil, &pro[i])
			if len(recorded) > 0 {
				d.AfterSeq = recorded[len(recorded)-1].Seq
			}
		case rec[i].typ != pro[i].typ:
			d = divergence(KindType, &rec[i], &pro[i])
		default:
			ids.apply(rec[i], pro[i])
			dropAdded(rec[i], pro[i])
			if !bytes.Equal(canonical(rec[i].data), canonical(pro[i].data)) {
				d = divergence(KindPayload, &rec[i], &pro[i])
			}
		}
		if d != nil {
			res.Divergence = d
			return res, nil
		}
		res.Matched += rec[i].n
	}
	res.Identical = true
	return res, nil
}

// normalize decodes entries, drops volatile fields and merges token runs.
func normalize(entries []ledger.Entry) ([]item, error) {
	out := make([]item, 0, len(entries))
	for i := 0; i < len(entries); {
		if !inTokenRun(entries[i].Type) {
			it, err := decodeItem(entries[i])
			if err != nil {
				return nil, err
			}
			out = append(out, it)
			i++
			continue
		}
		j := i
		for j < len(entries) && inTokenRun(entries[j].Type) {
			j++
		}
		run, err := mergeRun(entries[i:j])
		if err != nil {
			return nil, err
		}
		out = append(out, run...)
		i = j
	}
	return out, nil
}

func inTokenRun(typ string) bool { return typ == event.TypeAgentTokens || typ == event.TypeLLMResponse }

// mergeRun returns a run's llm.response entries in order, then one
// agent.tokens per message (and sub-agent), text joined, counts summed.
func mergeRun(run []ledger.Entry) ([]item, error) {
	var out, tokens []item
	byKey := map[string]int{} // index in tokens
	for _, en := range run {
		it, err := decodeItem(en)
		if err != nil {
			return nil, err
		}
		if en.Type == event.TypeLLMResponse {
			out = append(out, it)
			continue
		}
		key := fmt.Sprint(it.data["subagent_id"], "\x00", it.data["message_id"])
		k, ok := byKey[key]
		if !ok {
			byKey[key] = len(tokens)
			tokens = append(tokens, it)
			continue
		}
		tokens[k].n++
		t := tokens[k].data
		t["text"] = fmt.Sprint(t["text"]) + fmt.Sprint(it.data["text"])
		t["count"] = json.Number(fmt.Sprint(number(t["count"]) + number(it.data["count"])))
	}
	return append(out, tokens...), nil
}

// volatile are the fields each type drops before comparing.
var volatile = map[string][]string{
	event.TypeLLMResponse:   {"latency_ms"},
	event.TypeExecCompleted: {"duration_ms"},
	event.TypeExecFailed:    {"duration_ms"},
}

// added are members a payload gained after ledgers were recorded without
// them: compared only when the recorded entry has them.
var added = map[string][]string{
	event.TypeApprovalRequested: {"message_id", "arguments"},
}

// dropAdded removes from the produced payload the added members the
// recorded one lacks.
func dropAdded(rec, pro item) {
	for _, k := range added[rec.typ] {
		if _, ok := rec.data[k]; !ok {
			delete(pro.data, k)
		}
	}
}

func decodeItem(en ledger.Entry) (item, error) {
	dec := json.NewDecoder(bytes.NewReader(en.Data))
	dec.UseNumber()
	var m map[string]any
	if err := dec.Decode(&m); err != nil || m == nil {
		return item{}, fmt.Errorf("entry %d: data is not a JSON object", en.Seq)
	}
	for _, k := range volatile[en.Type] {
		delete(m, k)
	}
	return item{seq: en.Seq, typ: en.Type, data: m, n: 1}, nil
}

func number(v any) int64 {
	var n int64
	if s, ok := v.(json.Number); ok {
		n, _ = s.Int64()
	}
	return n
}

// renaming maps the ids a rerun minted to the recorded ones, one to one,
// in order of first appearance.
type renaming struct {
	to   map[string]string // produced -> recorded
	from map[string]string // recorded -> produced
}

// idFields are the members holding per-run ids, by type.
var idFields = map[string]string{
	event.TypeLLMRequest:  "request_id",
	event.TypeLLMResponse: "request_id",
}

// apply renames p's ids to r's where the renaming allows it; p and r are
// of the same type.
func (n *renaming) apply(r, p item) {
	if f, ok := idFields[p.typ]; ok {
		pv, _ := p.data[f].(string)
		rv, _ := r.data[f].(string)
		if _, mapped := n.to[pv]; !mapped && pv != "" {
			if _, taken := n.from[rv]; !taken {
				n.to[pv], n.from[rv] = rv, pv
			}
		}
		if v, ok := n.to[pv]; ok {
			p.data[f] = v
		}
	}
}

// canonical returns data in the ledger's canonical JSON form.
func canonical(data map[string]any) []byte {
	b, err := json.Marshal(data)
	if err != nil {
		return nil
	}
	c, err := ledger.Canonicalize(b)
	if err != nil {
		return b
	}
	return c
}

// divergence describes a difference; either side may be nil.
func divergence(kind string, r, p *item) *Divergence {
	d := &Divergence{Kind: kind}
	var rText, pText []byte
	rName, pName := "recorded (none)", "produced (none)"
	if r != nil {
		d.Seq, d.Type, d.Recorded = r.seq, r.typ, canonical(r.data)
		rText, rName = pretty(r.typ, d.Recorded), fmt.Sprintf("recorded seq %d %s", r.seq, r.typ)
	}
	if p != nil {
		d.ProducedSeq, d.ProducedType, d.Produced = p.seq, p.typ, canonical(p.data)
		pText, pName = pretty(p.typ, d.Produced), fmt.Sprintf("produced seq %d %s", p.seq, p.typ)
	}
	d.Diff = textdiff.Unified(rName, pName, rText, pText, 3)
	return d
}

// pretty lays canonical data out one member per line (keys stay sorted),
// under its type, so the diff shows which member differs.
func pretty(typ string, data []byte) []byte {
	var b bytes.Buffer
	b.WriteString("type: " + typ + "\n")
	if err := json.Indent(&b, data, "", "  "); err != nil {
		b.Write(data)
	}
	b.WriteByte('\n')
	return b.Bytes()
}
