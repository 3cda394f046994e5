package ocsf_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/klauspost/compress/zstd"

	"github.com/opx-dev/opx/ledger"
	"github.com/opx-dev/opx/ocsf"
	"github.com/opx-dev/opx/ocsf/ocsftest"
)

var (
	schemaOnce sync.Once
	schemaVal  *ocsftest.Schema
	schemaErr  error
)

// loadSchema reads testdata/schema once.
func loadSchema(t testing.TB) *ocsftest.Schema {
	t.Helper()
	schemaOnce.Do(func() { schemaVal, schemaErr = ocsftest.Load("testdata/schema") })
	if schemaErr != nil {
		t.Fatalf("schema: %v", schemaErr)
	}
	return schemaVal
}

// sampleEntries reads the sample ledger fixtures/ledgers/sample.jsonl.zst
// (written by fixtures/fixturegen from real engine shapes: every entry
// type, sub-agents, MCP, an off-the-record session, signed checkpoints),
// checking its chain.
func sampleEntries(t testing.TB) []ledger.Entry {
	return fixtureEntries(t, "../fixtures/ledgers/sample.jsonl.zst")
}

// fixtureEntries reads a JSONL export, checking its chain.
func fixtureEntries(t testing.TB, path string) []ledger.Entry {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := zstd.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	defer zr.Close()
	sc := bufio.NewScanner(zr)
	sc.Buffer(nil, ledger.MaxLineSize)
	var out []ledger.Entry
	var prev ledger.Hash
	for seq := uint64(0); sc.Scan(); seq++ {
		e, err := ledger.ParseStored(seq, append([]byte(nil), sc.Bytes()...))
		if err != nil {
			t.Fatal(err)
		}
		if e.Prev != prev {
			t.Fatalf("entry %d does not chain", seq)
		}
		prev = e.Hash()
		out = append(out, e)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// mapAll maps entries as `opx ledger export --format ocsf` does: the
// latest signed checkpoint first, then every entry in order.
func mapAll(t testing.TB, entries []ledger.Entry, o ocsf.Options) [][]byte {
	t.Helper()
	m := ocsf.NewMapper(o)
	for i := len(entries) - 1; i >= 0; i-- {
		if cp, ok := ocsf.ParseCheckpoint(&entries[i]); ok {
			m.SetCheckpoint(cp)
			break
		}
	}
	var buf []byte
	for i := range entries {
		var err error
		if buf, _, err = m.Map(buf, &entries[i]); err != nil {
			t.Fatal(err)
		}
	}
	return bytes.SplitAfter(buf, []byte("\n"))[:bytes.Count(buf, []byte("\n"))]
}

// checkLines validates every line against the schema and returns the
// decoded events.
func checkLines(t *testing.T, lines [][]byte) []map[string]any {
	t.Helper()
	s := loadSchema(t)
	var evs []map[string]any
	uids := map[string]bool{}
	for i, l := range lines {
		if bytes.Count(l, []byte("\n")) != 1 || l[len(l)-1] != '\n' {
			t.Fatalf("line %d is not one line: %q", i, l)
		}
		var ev map[string]any
		if err := json.Unmarshal(l, &ev); err != nil {
			t.Fatalf("line %d: %v: %s", i, err, l)
		}
		for _, p := range s.Validate(ev) {
			t.Errorf("line %d (class %v): %s", i, ev["class_uid"], p)
		}
		uid := ev["metadata"].(map[string]any)["uid"].(string)
		if uids[uid] {
			t.Errorf("line %d: metadata.uid %s twice", i, uid)
		}
		uids[uid] = true
		evs = append(evs, ev)
	}
	return evs
}

// ledgerID is the id the genesis entry names.
func ledgerID(entries []ledger.Entry) string {
	var id string
	json.Unmarshal(entries[0].Data, &struct {
		LedgerID *string `json:"ledger_id"`
	}{&id})
	return id
}

// TestMapper_Map_RecordedDemoSigned: the demo ledger a real engine
// recorded (fixtures/recorded, a signing ledger) maps to valid events,
// those its latest signed checkpoint covers carrying it.
func TestMapper_Map_RecordedDemoSigned(t *testing.T) {
	entries := fixtureEntries(t, "../fixtures/recorded/demo.jsonl.zst")
	id := ledgerID(entries)
	evs := checkLines(t, mapAll(t, entries, ocsf.Options{LedgerID: id, Host: "h"}))
	signed := 0
	for _, ev := range evs {
		att := ev["attestation_list"].([]any)[0].(map[string]any)
		if sigs, ok := att["signatures"].([]any); ok && len(sigs) == 1 {
			signed++
			cp := ev["unmapped"].(map[string]any)["opx"].(map[string]any)["checkpoint"].(map[string]any)
			if !strings.Contains(cp["note"].(string), id) {
				t.Errorf("checkpoint note %q does not name the ledger", cp["note"])
			}
			if att["authority_uid"] == "" {
				t.Error("a signed attestation without its authority")
			}
		}
	}
	if len(evs) == 0 || signed == 0 {
		t.Fatalf("%d events, %d signed", len(evs), signed)
	}
	t.Logf("%d entries, %d events, %d covered by the signed checkpoint", len(entries), len(evs), signed)
}

func TestMapper_Map_SampleLedgerValidates(t *testing.T) {
	entries := sampleEntries(t)
	id := ledgerID(entries)
	evs := checkLines(t, mapAll(t, entries, ocsf.Options{LedgerID: id, Host: "build-7", Version: "test"}))
	classes := map[float64]int{}
	dispositions := map[float64]bool{}
	var aiModel, chained int
	for _, ev := range evs {
		classes[ev["class_uid"].(float64)]++
		if d, ok := ev["disposition_id"].(float64); ok {
			dispositions[d] = true
		}
		att := ev["attestation_list"].([]any)[0].(map[string]any)
		if att["chain_uid"] != id {
			t.Errorf("chain_uid %v, want the ledger id %s", att["chain_uid"], id)
		}
		if _, ok := att["prev_event"]; ok {
			chained++
		}
		if a, ok := ev["ai_agent"].(map[string]any); ok && a["ai_model"] != nil {
			aiModel++
		}
		if d := ev["device"].(map[string]any); d["hostname"] != "build-7" {
			t.Errorf("device %v, want the engine's host", d)
		}
	}
	for _, c := range []float64{1001, 1007, 2004, 3003, 6003} {
		if classes[c] == 0 {
			t.Errorf("no event of class %v from the sample ledger (got %v)", c, classes)
		}
	}
	for _, d := range []float64{1, 2, 8, 25} { // allowed, blocked, approved, rejected (denied)
		if !dispositions[d] {
			t.Errorf("no event with disposition_id %v (got %v)", d, dispositions)
		}
	}
	if aiModel == 0 || chained != len(evs) {
		t.Errorf("with an AI model %d, chained %d of %d events", aiModel, chained, len(evs))
	}
	t.Logf("%d entries, %d events: %v", len(entries), len(evs), classes)
}

// TestMapper_Map_OTRWithheld: nothing of an off-the-record session's
// content reaches an event, and no withheld commitment either.
func TestMapper_Map_OTRWithheld(t *testing.T) {
	entries := sampleEntries(t)
	otr := map[string]bool{}
	for _, e := range entries {
		if e.Type == "session.created" && strings.Contains(string(e.Data), `"mode":"otr"`) {
			otr[e.Session] = true
		}
	}
	if len(otr) == 0 {
		t.Fatal("the sample ledger has no off-the-record session")
	}
	lines := mapAll(t, entries, ocsf.Options{LedgerID: "x"})
	seen := 0
	for _, l := range lines {
		if bytes.Contains(l, []byte("otr:v1:")) {
			t.Errorf("a withheld value in %s", l)
		}
		var ev struct {
			ClassUID int `json:"class_uid"`
			Unmapped struct {
				OPX struct {
					Session string `json:"session"`
				} `json:"opx"`
			} `json:"unmapped"`
			Process *struct {
				CmdLine string `json:"cmd_line"`
			} `json:"process"`
			Message string `json:"message"`
		}
		json.Unmarshal(l, &ev)
		if !otr[ev.Unmapped.OPX.Session] {
			continue
		}
		seen++
		if ev.ClassUID == 1001 || ev.Message != "" || ev.Process != nil && ev.Process.CmdLine != "" {
			t.Errorf("content of an off-the-record session: %s", l)
		}
	}
	if seen == 0 {
		t.Error("no event of the off-the-record session (its envelope should still show)")
	}
}
