package rerun

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

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
	// SubAgents counts the sub-agent threads compared (the record's and
	// the rerun's).
	SubAgents int `json:"subagents"`
	// Uncompared counts the recorded entries left out of the comparison:
	// those of sub-agent processes (agent.spawned, sandbox.canary,
	// agent.ready, agent.exited, agent.crashed), a sub-agent's last
	// words after its end (see lastWords), and an mcp-proxy session's
	// upstream life (see upstreamEntries).
	Uncompared int `json:"uncompared,omitempty"`
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
	// SubAgentID names the sub-agent whose thread diverged; "" for the
	// session's own agent.
	SubAgentID string `json:"subagent_id,omitempty"`
	// Seq and Type are the recorded entry's (Seq 0 and Type "" for
	// KindExtra, where AfterSeq is the thread's last recorded entry, or
	// the record's last for a thread the record does not have).
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
	seq  uint64 // its (first) entry's
	last uint64 // the last entry it stands for
	typ  string
	data map[string]any
	n    int // entries it stands for
}

// Compare compares the entries a rerun produced in the session with the
// recorded ones, thread by thread, after the normalisation the package
// documents. Both lists hold only the session's entries, in seq order.
// The error is set only for an entry whose data is not a JSON object.
func Compare(recorded, produced []ledger.Entry) (*Result, error) {
	rec, err := threads(recorded)
	if err != nil {
		return nil, fmt.Errorf("recorded: %w", err)
	}
	pro, err := threads(produced)
	if err != nil {
		return nil, fmt.Errorf("produced: %w", err)
	}
	res := &Result{Events: rec.n, Produced: pro.n, Uncompared: len(recorded) - rec.n}
	var last uint64 // the record's last entry, after which an extra thread's entries come
	if len(recorded) > 0 {
		last = recorded[len(recorded)-1].Seq
	}
	ids := renaming{to: map[string]string{}, from: map[string]string{}}
	var matched []item
	for _, id := range threadOrder(rec, pro) {
		r, p := rec.items[id], pro.items[id]
		after := last
		if len(r) > 0 {
			after = r[len(r)-1].last
		}
		m, d := compareThread(r, p, &ids, after)
		matched = append(matched, m...)
		if id != "" {
			res.SubAgents++
		}
		if d != nil {
			d.SubAgentID = id
			if res.Divergence == nil || position(d) < position(res.Divergence) {
				res.Divergence = d
			}
		}
	}
	for _, it := range matched {
		if res.Divergence == nil || it.seq < position(res.Divergence) {
			res.Matched += it.n
		}
	}
	res.Identical = res.Divergence == nil
	return res, nil
}

// compareThread compares one thread's normalised entries; it returns the
// recorded items that matched before its first divergence, and that
// divergence (nil when the thread is identical). after is the seq an
// extra entry is reported after.
func compareThread(rec, pro []item, ids *renaming, after uint64) ([]item, *Divergence) {
	for i := 0; i < len(rec) || i < len(pro); i++ {
		var d *Divergence
		switch {
		case i >= len(pro):
			d = divergence(KindMissing, &rec[i], nil)
		case i >= len(rec):
			d = divergence(KindExtra, nil, &pro[i])
			d.AfterSeq = after
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
			return rec[:i], d
		}
	}
	return rec, nil
}

// position orders divergences of different threads by where they are in
// the record: at the recorded entry, or just after the entry an extra one
// follows.
func position(d *Divergence) uint64 {
	if d.Kind == KindExtra {
		return d.AfterSeq + 1
	}
	return d.Seq
}

// threaded is a list of entries split by thread, each thread normalised.
type threaded struct {
	items map[string][]item // by subagent_id; "" the session's own agent
	order []string          // thread ids in order of first entry
	n     int               // entries compared
}

// processEntries are a sub-agent's process lifecycle, recorded in its
// parent's session but, like the session's own agent's (recorded
// engine-wide), not compared: pids, ports, canary timestamps, and how
// its process ended after it answered depend on the run. What decides
// anything is compared: a refused sandbox or a crash ends the sub-agent
// with subagent.failed.
var processEntries = map[string]bool{
	event.TypeAgentSpawned: true, event.TypeSandboxCanary: true, event.TypeAgentReady: true,
	event.TypeAgentExited: true, event.TypeAgentCrashed: true,
}

// upstreamEntries are the life of an mcp-proxy session's upstream server:
// its start (pid), tool listings, protocol errors and end, served to a
// rerun from the record (no server runs) and, like an agent's process
// lifecycle, not compared. What they decide is compared: the tools a call
// names, judged under the recorded listing, and every request and answer
// (mcp.request, mcp.response).
var upstreamEntries = map[string]bool{
	event.TypeMCPServerStarted: true, event.TypeMCPServerExited: true, event.TypeMCPServerFailed: true,
	event.TypeMCPToolsListed: true, event.TypeMCPProtocolError: true,
}

// threads decodes entries and splits them by the sub-agent they name
// (member subagent_id; the session's own agent's have none), then
// normalises each thread on its own: how parallel sub-agents' entries
// interleave depends on scheduling, their order within a thread does not.
func threads(entries []ledger.Entry) (*threaded, error) {
	t := &threaded{items: map[string][]item{}}
	raw := map[string][]item{}
	ended := map[string]bool{}               // sub-agents whose end entry was seen
	proposed := map[string]map[string]bool{} // call ids proposed, by thread
	for _, en := range entries {
		if processEntries[en.Type] || upstreamEntries[en.Type] {
			continue
		}
		it, err := decodeItem(en)
		if err != nil {
			return nil, err
		}
		id, _ := it.data["subagent_id"].(string)
		call, _ := it.data["call_id"].(string)
		if ended[id] && lastWords(en.Type, proposed[id][call]) {
			continue
		}
		t.n++
		switch {
		case en.Type == event.TypeToolProposed:
			if proposed[id] == nil {
				proposed[id] = map[string]bool{}
			}
			proposed[id][call] = true
		case id != "" && event.SubAgentEnded(en.Type):
			ended[id] = true
		}
		if _, seen := raw[id]; !seen {
			t.order = append(t.order, id)
		}
		raw[id] = append(raw[id], it)
	}
	for id, its := range raw {
		t.items[id] = normalize(its)
	}
	return t, nil
}

// lastWords reports whether an entry of a sub-agent after its end entry is
// what its dying process still sent (agent.*: tokens, an error, a tool
// call) or the refusal of a call it sent then (an engine.tool_result for
// a call never proposed): whether its process got them out before it was
// killed depends on scheduling. What the engine does after the end for
// calls in flight at it (the answer, the result, the denial) is compared.
func lastWords(typ string, proposedCall bool) bool {
	return strings.HasPrefix(typ, "agent.") || (typ == event.TypeToolResult && !proposedCall)
}

// threadOrder is the session's own thread first, then the sub-agents in
// the order the record first names them, then those only the rerun has.
func threadOrder(rec, pro *threaded) []string {
	out := []string{""}
	seen := map[string]bool{"": true}
	for _, t := range [...]*threaded{rec, pro} {
		for _, id := range t.order {
			if !seen[id] {
				seen[id] = true
				out = append(out, id)
			}
		}
	}
	return out
}

// normalize merges a thread's token runs.
func normalize(items []item) []item {
	out := make([]item, 0, len(items))
	for i := 0; i < len(items); {
		if !inTokenRun(items[i].typ) {
			out = append(out, items[i])
			i++
			continue
		}
		j := i
		for j < len(items) && inTokenRun(items[j].typ) {
			j++
		}
		out = append(out, mergeRun(items[i:j])...)
		i = j
	}
	return out
}

func inTokenRun(typ string) bool { return typ == event.TypeAgentTokens || typ == event.TypeLLMResponse }

// mergeRun returns a run's llm.response entries in order, then one
// agent.tokens per message, text joined, counts summed.
func mergeRun(run []item) []item {
	var out, tokens []item
	byMessage := map[string]int{} // index in tokens
	for _, it := range run {
		if it.typ == event.TypeLLMResponse {
			out = append(out, it)
			continue
		}
		key := fmt.Sprint(it.data["message_id"])
		k, ok := byMessage[key]
		if !ok {
			byMessage[key] = len(tokens)
			tokens = append(tokens, it)
			continue
		}
		tokens[k].n++
		tokens[k].last = it.last
		t := tokens[k].data
		t["text"] = fmt.Sprint(t["text"]) + fmt.Sprint(it.data["text"])
		t["count"] = json.Number(fmt.Sprint(number(t["count"]) + number(it.data["count"])))
	}
	return append(out, tokens...)
}

// volatile are the fields each type drops before comparing.
var volatile = map[string][]string{
	event.TypeLLMResponse:   {"latency_ms"},
	event.TypeExecCompleted: {"duration_ms"},
	event.TypeExecFailed:    {"duration_ms"},
	// A sub-agent's life: how long it ran.
	event.TypeSubAgentCompleted: {"duration_ms"},
	event.TypeSubAgentFailed:    {"duration_ms"},
	event.TypeSubAgentCancelled: {"duration_ms"},
	event.TypeSubAgentTimedOut:  {"duration_ms"},
	// A proxied request's answer: how long the upstream took.
	event.TypeMCPResponse: {"duration_ms"},
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
	return item{seq: en.Seq, last: en.Seq, typ: en.Type, data: m, n: 1}, nil
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
