package ledger

import (
	"bytes"
	"testing"
	"time"
)

// envelopeSeeds are entries as the writer stores them and near misses:
// strings the fast path must leave to ParseEntry, a "prev" member inside
// data, other member orders, and damage.
func envelopeSeeds() [][]byte {
	ts := time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC)
	prev := Sum([]byte("p"))
	var out [][]byte
	for _, c := range []struct {
		seq          uint64
		session, typ string
		data         string
	}{
		{0, "", "engine.started", `{}`},
		{1, "ses_1", "tool.proposed", `{"arguments":"{\"prev\":\"x\"}","call_id":"c1"}`},
		{2, "ses_1", "note", `{"prev":"0000000000000000000000000000000000000000000000000000000000000000","x":{"prev":"1"}}`},
		{3, "ses \"q\"", "note", `{}`},
		{4, "sess-ü", "note", `{"a":[1,{"b":null}]}`},
		{5, "s\\", "n", `{}`},
		{9007199254740991, "s", "t", `{"seq":1,"session":"x","ts":"y","type":"z"}`},
	} {
		out = append(out, encodeEntry(nil, c.seq, prev, ts, c.session, c.typ, []byte(c.data)))
	}
	z := `"0000000000000000000000000000000000000000000000000000000000000000"`
	for _, s := range []string{
		`{"type":"t","ts":"","session":"","seq":0,"prev":` + z + `,"data":{}}`,
		`{"data":{},"prev":` + z + `,"seq":0,"session":"","ts":"","type":""}`,
		`{"data":{},"data":{},"prev":` + z + `,"seq":0,"session":"","ts":"","type":""}`,
		`{"data":{"a":},"prev":` + z + `,"seq":0,"session":"","ts":"","type":""}`,
		`{"data":{},"prev":` + z + `,"seq":01,"session":"","ts":"","type":""}`,
		`{"data":{},"prev":` + z + `,"seq":9007199254740992,"session":"","ts":"","type":""}`,
		`{"data":{},"prev":` + z + `,"seq":0,"session":"","ts":"","type":"","x":1}`,
		`{"data":{}, "prev":` + z + `,"seq":0,"session":"","ts":"","type":""}`,
		`{"data":{},"prev":"00","seq":0,"session":"","ts":"","type":""}`,
		`{"data":{},"prev":` + z + `,"seq":0,"session":"\"","ts":"","type":""}`,
		`{"data":{},"prev":` + z + `,"seq":0,"session":"a","ts":"b\"","type":"c"}`,
		`{"data":` + `,"prev":` + z + `,"seq":0,"session":"","ts":"","type":""}`,
		`{"data":{}}`, `{"data":"}`, `{}`, ``,
	} {
		out = append(out, []byte(s))
	}
	return out
}

// FuzzParseForFold: the folds' fast path reads exactly what ParseEntry
// reads from any entry ParseEntry accepts; what it accepts beyond that
// differs only in data (the envelope parses the same with data {}).
func FuzzParseForFold(f *testing.F) {
	for _, s := range envelopeSeeds() {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		want, werr := ParseEntry(raw)
		got, gerr := parseForFold(raw, newInterner())
		if werr == nil {
			if gerr != nil || !sameEntry(got, want) {
				t.Fatalf("%q: fast path %+v %v, ParseEntry %+v", raw, got, gerr, want)
			}
			return
		}
		fast, ok := parseEnvelope(raw, newInterner())
		if !ok {
			if gerr == nil {
				t.Fatalf("%q: ParseEntry fails (%v) but parseForFold does not", raw, werr)
			}
			return
		}
		// Accepted by the fast path only: the envelope must be right.
		rest := raw[len(envHead)+len(fast.Data):]
		clean := append([]byte(`{"data":{}`), rest...)
		e, err := ParseEntry(clean)
		if err != nil {
			t.Fatalf("%q: fast path accepted an envelope ParseEntry refuses (%v) with data {}", raw, err)
		}
		e.Data, e.Raw = fast.Data, raw
		if !sameEntry(fast, e) {
			t.Fatalf("%q: fast path read %+v, ParseEntry %+v", raw, fast, e)
		}
	})
}

func sameEntry(a, b Entry) bool {
	return a.Seq == b.Seq && a.Prev == b.Prev && a.TS == b.TS && a.Session == b.Session && a.Type == b.Type &&
		bytes.Equal(a.Data, b.Data) && bytes.Equal(a.Raw, b.Raw)
}

// The writer's entries take the fast path; entries with escapes in their
// strings do not, and still parse.
func TestParseForFold_FastPathTaken(t *testing.T) {
	seeds := envelopeSeeds()
	for i, want := range []bool{true, true, true, false, false, false, true} {
		if _, ok := parseEnvelope(seeds[i], nil); ok != want {
			t.Errorf("%s: fast path %v, want %v", seeds[i], ok, want)
		}
		if _, err := parseForFold(seeds[i], nil); err != nil {
			t.Errorf("%s: %v", seeds[i], err)
		}
	}
	e, _ := parseForFold(seeds[2], nil)
	if string(e.Data) != `{"prev":"0000000000000000000000000000000000000000000000000000000000000000","x":{"prev":"1"}}` || e.Seq != 2 {
		t.Errorf("data holding a prev member: %+v", e)
	}
}
