package ocsf_test

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/opx-dev/opx/ledger"
	"github.com/opx-dev/opx/ledger/event"
	"github.com/opx-dev/opx/ocsf"
)

// FuzzMapper_Map: whatever an entry's payload holds, the mapper writes
// whole lines of valid JSON, one per event it counts, within the bounds.
//
//	go test ./ocsf -run '^$' -fuzz FuzzMapper_Map -fuzztime 30s
func FuzzMapper_Map(f *testing.F) {
	types := []string{event.TypeSessionCreated, event.TypeLLMRequest, event.TypeEngineStarted, event.TypeToolProposed,
		event.TypeSnapshot, event.TypeShieldVerdict, event.TypeApprovalResolved, event.TypeResultFlagged,
		event.TypeExecCompleted, event.TypeExecFailed, event.TypeMCPResponse, ledger.TypeCheckpoint}
	f.Add(uint8(3), []byte(`{"call_id":"c","tool":"execute_command","arguments":"{\"command\":\"ls\"}"}`), "s")
	f.Add(uint8(8), []byte(`{"call_id":"c","tool":"write_file","post":[{"path":"a\u2028b","hash":"x"}],"pre":[{"path":"a\u2028b","state":"absent"}]}`), "s")
	f.Add(uint8(5), []byte(`{"call_id":"c","decision":"block","rule":"otr:v1:3:ab","reason":"\u001b[2J"}`), "s\n")
	f.Add(uint8(11), []byte(`{"note":"o\n1\nAAAA\n\n\u2014 k sig\n","tree_size":0}`), "")
	f.Fuzz(func(t *testing.T, typ uint8, data []byte, session string) {
		m := ocsf.NewMapper(ocsf.Options{LedgerID: "L", Host: session})
		e := ledger.Entry{Seq: 1, TS: "2026-12-02T10:00:00Z", Session: session, Type: types[int(typ)%len(types)], Data: data, Raw: data}
		if cp, ok := ocsf.ParseCheckpoint(&e); ok {
			m.SetCheckpoint(cp)
		}
		// Twice: the second sees the state the first left.
		for i := 0; i < 2; i++ {
			out, n, err := m.Map(nil, &e)
			if err != nil {
				return
			}
			if n > 1+ocsf.MaxFileEvents || bytes.Count(out, []byte("\n")) != n {
				t.Fatalf("%d events, %d lines", n, bytes.Count(out, []byte("\n")))
			}
			for _, l := range bytes.SplitAfter(out, []byte("\n"))[:n] {
				if !json.Valid(l) || len(l) > 64<<10 {
					t.Fatalf("line of %d bytes, valid %v: %q", len(l), json.Valid(l), l)
				}
			}
		}
	})
}
