package ocsf_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/opx-dev/opx/ocsf"
)

// TestSchema_Validate_CatchesMistakes: the validator is not vacuous: each
// mistake made to a valid event of each class is reported.
func TestSchema_Validate_CatchesMistakes(t *testing.T) {
	s := loadSchema(t)
	entries := sampleEntries(t)
	lines := mapAll(t, entries, ocsf.Options{LedgerID: ledgerID(entries), Host: "h"})
	byClass := map[float64]map[string]any{}
	for _, l := range lines {
		var ev map[string]any
		if err := json.Unmarshal(l, &ev); err != nil {
			t.Fatal(err)
		}
		if byClass[ev["class_uid"].(float64)] == nil {
			byClass[ev["class_uid"].(float64)] = ev
		}
	}
	mistakes := []struct {
		name string
		edit func(ev map[string]any)
		want string
	}{
		{"unknown attribute", func(ev map[string]any) { ev["opx_seq"] = 1 }, "opx_seq: not an attribute"},
		{"missing required", func(ev map[string]any) { delete(ev, "metadata") }, "metadata: required"},
		{"enum", func(ev map[string]any) { ev["disposition_id"] = 77.0 }, "disposition_id: 77 is not in the enum"},
		{"activity enum", func(ev map[string]any) { ev["activity_id"] = 42.0; ev["type_uid"] = ev["class_uid"].(float64)*100 + 42 }, "activity_id: 42 is not in the enum"},
		{"type", func(ev map[string]any) { ev["time"] = "yesterday" }, "time: want an integer"},
		{"boolean", func(ev map[string]any) { ev["metadata"].(map[string]any)["is_truncated"] = "no" }, "is_truncated: want a boolean"},
		{"type_uid", func(ev map[string]any) { ev["type_uid"] = 1.0 }, "type_uid 1"},
		{"category", func(ev map[string]any) { ev["category_uid"] = 5.0 }, "category_uid 5"},
		{"nested unknown", func(ev map[string]any) {
			ev["attestation_list"].([]any)[0].(map[string]any)["hash"] = "x"
		}, "attestation_list[0].hash: not an attribute of attestation"},
		{"nested required", func(ev map[string]any) {
			delete(ev["attestation_list"].([]any)[0].(map[string]any)["fingerprint"].(map[string]any), "value")
		}, "fingerprint.value: required"},
		{"array", func(ev map[string]any) { ev["attestation_list"] = map[string]any{} }, "attestation_list: want an array"},
		{"profile not named", func(ev map[string]any) {
			md := ev["metadata"].(map[string]any)
			md["profiles"] = []any{"host", "security_control"}
		}, "from profile record_integrity"},
	}
	for class, ev := range byClass {
		if p := s.Validate(ev); len(p) > 0 {
			t.Fatalf("class %v: the valid event fails: %v", class, p)
		}
		for _, m := range mistakes {
			b, _ := json.Marshal(ev)
			var bad map[string]any
			json.Unmarshal(b, &bad)
			m.edit(bad)
			problems := s.Validate(bad)
			if !strings.Contains(strings.Join(problems, "\n"), m.want) {
				t.Errorf("class %v, %s: want a problem with %q, got %v", class, m.name, m.want, problems)
			}
		}
	}
	if len(byClass) != 5 {
		t.Errorf("%d classes checked, want 5", len(byClass))
	}
}
