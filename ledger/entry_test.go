package ledger_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/opx-dev/opx/ledger"
)

// TestParseEntry_Fields decodes line 2 of testdata/kat.jsonl, and the same
// entry written loosely.
func TestParseEntry_Fields(t *testing.T) {
	goodEntry := string(katLines(t)[1])
	e, err := ledger.ParseEntry([]byte(goodEntry))
	if err != nil {
		t.Fatal(err)
	}
	if e.Seq != 1 || e.Prev.String() != katHashes[0] || e.Session != "ses_1" || e.Type != "ledger.note" ||
		e.TS != "2026-11-22T10:00:00.001000000Z" || string(e.Data) != `{"author":"ir","text":"café \"quoted\" \n line"}` ||
		string(e.Raw) != goodEntry {
		t.Errorf("ParseEntry = %+v", e)
	}
	if h := e.Hash().String(); h != katHashes[1] {
		t.Errorf("Hash = %s, want %s", h, katHashes[1])
	}
	ts, err := e.Time()
	if err != nil || !ts.Equal(time.Date(2026, 11, 22, 10, 0, 0, 1000000, time.UTC)) {
		t.Errorf("Time = %v, %v", ts, err)
	}
	// Members in any order and with white space parse to the same fields
	// (verify then reports not-canonical rather than unreadable), and
	// Raw keeps the bytes as given.
	loose := " {\n \"type\" : \"ledger.note\", \"ts\":\"2026-11-22T10:00:00.001000000Z\",\t\"session\":\"ses_\\u0031\"," +
		"\"seq\": 1 ,\"prev\":\"04ac7fd32ceb18df8a242ef515747094dac05612e637c997bef44358d209b763\"," +
		"\"data\" : {\"text\":\"café \\\"quoted\\\" \\n line\", \"author\":\"ir\"} } \n"
	l, err := ledger.ParseEntry([]byte(loose))
	if err != nil {
		t.Fatal(err)
	}
	if l.Seq != e.Seq || l.Prev != e.Prev || l.Session != e.Session || l.Type != e.Type || l.TS != e.TS || string(l.Raw) != loose {
		t.Errorf("loose entry = %+v", l)
	}
	if ledger.IsCanonical(l.Raw) {
		t.Error("IsCanonical(loose entry) = true")
	}
	if c, err := ledger.Canonicalize(l.Raw); err != nil || string(c) != goodEntry {
		t.Errorf("Canonicalize(loose entry) = %s, %v", c, err)
	}
}

func TestParseEntry_Rejects(t *testing.T) {
	const zeros = "0000000000000000000000000000000000000000000000000000000000000000"
	members := map[string]string{
		"data":    `"data":{}`,
		"prev":    `"prev":"` + zeros + `"`,
		"seq":     `"seq":0`,
		"session": `"session":""`,
		"ts":      `"ts":"2026-11-22T10:00:00.000000000Z"`,
		"type":    `"type":"ledger.genesis"`,
	}
	order := []string{"data", "prev", "seq", "session", "ts", "type"}
	build := func(replace map[string]string, extra ...string) string {
		var parts []string
		for _, k := range order {
			v, ok := replace[k]
			if !ok {
				v = members[k]
			}
			if v != "" {
				parts = append(parts, v)
			}
		}
		return "{" + strings.Join(append(parts, extra...), ",") + "}"
	}
	if _, err := ledger.ParseEntry([]byte(build(nil))); err != nil {
		t.Fatalf("the base entry does not parse: %v", err)
	}
	tests := map[string]string{
		"not an object":        `["data"]`,
		"a string":             `"entry"`,
		"empty input":          ``,
		"empty object":         `{}`,
		"unterminated":         build(nil)[:40],
		"trailing data":        build(nil) + `{}`,
		"trailing comma":       build(nil)[:len(build(nil))-1] + `,}`,
		"extra member":         build(nil, `"extra":1`),
		"member named Data":    build(map[string]string{"data": `"Data":{}`}),
		"duplicate data":       build(nil, `"data":{}`),
		"duplicate seq":        build(nil, `"seq":0`),
		"duplicate type":       build(nil, `"type":"ledger.genesis"`),
		"data array":           build(map[string]string{"data": `"data":[]`}),
		"data string":          build(map[string]string{"data": `"data":"{}"`}),
		"data null":            build(map[string]string{"data": `"data":null`}),
		"data bad json":        build(map[string]string{"data": `"data":{"a":}`}),
		"data float":           build(map[string]string{"data": `"data":{"a":1.5}`}),
		"data exponent":        build(map[string]string{"data": `"data":{"a":1e5}`}),
		"data bad escape":      build(map[string]string{"data": `"data":{"a":"\q"}`}),
		"prev uppercase":       build(map[string]string{"prev": `"prev":"` + strings.ToUpper("ab"+zeros[2:]) + `"`}),
		"prev 63 chars":        build(map[string]string{"prev": `"prev":"` + zeros[1:] + `"`}),
		"prev 65 chars":        build(map[string]string{"prev": `"prev":"0` + zeros + `"`}),
		"prev not hex":         build(map[string]string{"prev": `"prev":"g` + zeros[1:] + `"`}),
		"prev escaped":         build(map[string]string{"prev": `"prev":"\u0030` + zeros[1:] + `"`}),
		"prev number":          build(map[string]string{"prev": `"prev":0`}),
		"prev null":            build(map[string]string{"prev": `"prev":null`}),
		"seq negative":         build(map[string]string{"seq": `"seq":-1`}),
		"seq negative zero":    build(map[string]string{"seq": `"seq":-0`}),
		"seq fraction":         build(map[string]string{"seq": `"seq":1.0`}),
		"seq exponent":         build(map[string]string{"seq": `"seq":1e2`}),
		"seq string":           build(map[string]string{"seq": `"seq":"1"`}),
		"seq leading zero":     build(map[string]string{"seq": `"seq":01`}),
		"seq above 2^53-1":     build(map[string]string{"seq": `"seq":9007199254740992`}),
		"seq null":             build(map[string]string{"seq": `"seq":null`}),
		"session number":       build(map[string]string{"session": `"session":1`}),
		"session null":         build(map[string]string{"session": `"session":null`}),
		"ts number":            build(map[string]string{"ts": `"ts":1`}),
		"type object":          build(map[string]string{"type": `"type":{}`}),
		"type bad utf-8":       build(map[string]string{"type": "\"type\":\"\xff\""}),
		"type lone surrogate":  build(map[string]string{"type": `"type":"\ud800"`}),
		"missing colon":        strings.Replace(build(nil), `"seq":`, `"seq"`, 1),
		"single-quoted member": strings.Replace(build(nil), `"seq"`, `'seq'`, 1),
	}
	for _, m := range order {
		tests["missing "+m] = build(map[string]string{m: ""})
	}
	for name, in := range tests {
		if e, err := ledger.ParseEntry([]byte(in)); err == nil {
			t.Errorf("%s: ParseEntry(%q) = %+v, want an error", name, in, e)
		}
	}
}

func TestHash_Text(t *testing.T) {
	const hex = "04ac7fd32ceb18df8a242ef515747094dac05612e637c997bef44358d209b763"
	h, err := ledger.ParseHash(hex)
	if err != nil || h.String() != hex || h.IsZero() {
		t.Fatalf("ParseHash = %s, %v", h, err)
	}
	if !ledger.ZeroHash.IsZero() || ledger.ZeroHash.String() != strings.Repeat("0", 64) {
		t.Error("ZeroHash")
	}
	b, err := json.Marshal(map[string]ledger.Hash{"h": h})
	if err != nil || string(b) != `{"h":"`+hex+`"}` {
		t.Errorf("json.Marshal = %s, %v", b, err)
	}
	var back struct{ H ledger.Hash }
	if err := json.Unmarshal(b, &back); err != nil || back.H != h {
		t.Errorf("json.Unmarshal = %v, %v", back.H, err)
	}
	for _, bad := range []string{"", strings.ToUpper(hex), hex[:63], hex + "0", "x" + hex[1:], " " + hex[1:], hex[:62] + "\u00e9"} {
		if _, err := ledger.ParseHash(bad); err == nil {
			t.Errorf("ParseHash(%q) accepted", bad)
		}
		var h ledger.Hash
		if err := h.UnmarshalText([]byte(bad)); err == nil {
			t.Errorf("UnmarshalText(%q) accepted", bad)
		}
	}
}

func TestBlobRefs(t *testing.T) {
	h := func(c string) string { return ledger.Sum([]byte(c)).String() }
	a, b, c, d := h("a"), h("b"), h("c"), h("d")
	data := `{"z_blob":"` + b + `","blob":"` + a + `","nested":{"files":[{"pre_blob":"` + c + `"},{"blob":"not a hash"},{"blob":"` + strings.ToUpper(d) + `"}]},` +
		`"blobs":["` + d + `"],"blobber":"` + d + `","request":{"blob":1},"text":"blob\""}`
	refs, err := ledger.BlobRefs([]byte(data))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range refs {
		got = append(got, r.String())
	}
	// Members are walked in key order: "blob", "nested" (→ pre_blob), "z_blob".
	if want := []string{a, c, b}; !reflect.DeepEqual(got, want) {
		t.Errorf("BlobRefs = %v, want %v", got, want)
	}
	if refs, err := ledger.BlobRefs([]byte(`{"text":"no refs"}`)); err != nil || refs != nil {
		t.Errorf("BlobRefs(no refs) = %v, %v", refs, err)
	}
	if _, err := ledger.BlobRefs([]byte(`{"blob":`)); err == nil {
		t.Error("BlobRefs accepted broken JSON")
	}
	pruned, err := ledger.PrunedBlobs([]byte(`{"blobs":["` + a + `","` + b + `"],"reason":"retention"}`))
	if err != nil || len(pruned) != 2 || pruned[0].String() != a || pruned[1].String() != b {
		t.Errorf("PrunedBlobs = %v, %v", pruned, err)
	}
	if _, err := ledger.PrunedBlobs([]byte(`{"blobs":["xyz"]}`)); err == nil {
		t.Error("PrunedBlobs accepted a bad hash")
	}
}

// TestLedger_Append_StoresCanonicalBytes appends records whose data arrives in
// every accepted form and checks the stored entry is canonical and
// carries the data canonicalised.
func TestLedger_Append_StoresCanonicalBytes(t *testing.T) {
	l, _ := mustCreate(t)
	ctx := context.Background()
	for name, data := range map[string]any{
		"nil":         nil,
		"raw message": json.RawMessage(" { \"b\" : [ 2 , 1 ] , \"a\" : \"\\u00e9\\/\" } "),
		"bytes":       []byte(`{"b":[2,1],"a":"é/"}`),
		"map":         map[string]any{"b": []int{2, 1}, "a": "é/"},
		"struct": struct {
			B []int `json:"b"`
			A string
		}{[]int{2, 1}, "é/"},
	} {
		a, err := l.Append(ctx, ledger.Sync, ledger.Record{Session: "s\n\"", Type: "x.y", Data: data})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		e, err := l.Get(a[0].Seq)
		if err != nil {
			t.Fatal(err)
		}
		want := `{"A":"é/","b":[2,1]}`
		switch name {
		case "nil":
			want = `{}`
		case "raw message", "bytes", "map":
			want = `{"a":"é/","b":[2,1]}`
		}
		if string(e.Data) != want || !ledger.IsCanonical(e.Raw) || e.Session != "s\n\"" || !bytes.Contains(e.Raw, []byte(`"session":"s\n\""`)) {
			t.Errorf("%s: stored %s", name, e.Raw)
		}
		if e.Hash() != a[0].Hash {
			t.Errorf("%s: Append returned hash %s, stored entry hashes to %s", name, a[0].Hash, e.Hash())
		}
	}
	if _, err := l.Append(ctx, ledger.Sync, ledger.Record{Type: "x.y", Data: json.RawMessage(`null`)}); !errors.Is(err, ledger.ErrInvalidRecord) {
		t.Errorf("data null: %v, want ErrInvalidRecord", err)
	}
}
