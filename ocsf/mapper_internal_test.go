package ocsf

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/opx-dev/opx/ledger"
	"github.com/opx-dev/opx/ledger/event"
)

// TestMapper_State_Bounded: calls that never end and sessions without
// number leave the mapper's state within its bounds.
func TestMapper_State_Bounded(t *testing.T) {
	m := NewMapper(Options{LedgerID: "L"})
	for i := 0; i < 3*maxCalls; i++ {
		s := fmt.Sprintf("s%d", i)
		for _, p := range []event.Payload{&event.SessionCreated{Mode: "normal"}, &event.ToolProposed{CallID: "c", Tool: "read_file"}} {
			data, _ := json.Marshal(p)
			if _, _, err := m.Map(nil, &ledger.Entry{Seq: uint64(i), Session: s, Type: p.Type(), Data: data}); err != nil {
				t.Fatal(err)
			}
		}
	}
	for i := 0; i < 2*maxSessions; i++ {
		m.session(fmt.Sprint(i))
	}
	if len(m.calls) > maxCalls || len(m.callRing) != maxCalls {
		t.Errorf("calls %d, ring %d", len(m.calls), len(m.callRing))
	}
	if len(m.sessions) > maxSessions || len(m.sessRing) != maxSessions {
		t.Errorf("sessions %d, ring %d", len(m.sessions), len(m.sessRing))
	}
}
