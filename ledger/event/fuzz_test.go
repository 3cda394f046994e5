package event_test

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/opx-dev/opx/ledger"
	"github.com/opx-dev/opx/ledger/event"
)

// FuzzCheck: no payload bytes make a type's strict check panic; what it
// accepts decodes to a payload that validates, marshals, and checks again
// (the agent-event validators run here: every agent.* payload the engine
// records passes through Check).
func FuzzCheck(f *testing.F) {
	for _, p := range samples {
		b, err := json.Marshal(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(p.Type(), b)
	}
	f.Add("agent.tool_call", []byte(`{"message_id":"m","call_id":"c","tool":"t","arguments":"{\"a\":[[[[[[1]]]]]]}"}`))
	f.Add("chronicle.snapshot", []byte(`{"call_id":"c","tool":"t","kind":"files","files":[{"path":"../x","state":"absent"}]}`))
	f.Fuzz(func(t *testing.T, typ string, data []byte) {
		if err := event.Check(typ, data); err != nil {
			if !errors.Is(err, event.ErrInvalidPayload) && !errors.Is(err, event.ErrUnknownType) {
				t.Fatalf("error %v is neither ErrInvalidPayload nor ErrUnknownType", err)
			}
			return
		}
		p, err := event.Decode(ledger.Entry{Type: typ, Data: data})
		if err != nil {
			t.Fatalf("Check accepted what Decode refuses: %v", err)
		}
		again, err := json.Marshal(p)
		if err != nil {
			t.Fatalf("marshal accepted payload: %v", err)
		}
		if err := event.Check(typ, again); err != nil {
			t.Fatalf("accepted payload does not check after a round trip: %v\n%s\n%s", err, data, again)
		}
	})
}
