package cli

import (
	"fmt"
	"io"

	"github.com/opx-dev/opx/cli/internal/ui"
	opxv1 "github.com/opx-dev/opx/proto/opx/v1"
)

// witnessStatusJSON is one C2SP witness of ledger.witnesses in status
// --json and doctor --json (engine/witness).
type witnessStatusJSON struct {
	URL     string `json:"url"`
	Name    string `json:"name"`
	KeyHash string `json:"key_hash"`
	// CosignedSize is the largest tree size it cosigned (recorded as
	// ledger.cosigned); 0: none yet.
	CosignedSize uint64 `json:"cosigned_size"`
	PendingSize  uint64 `json:"pending_size,omitempty"`
	Submitted    uint64 `json:"submitted"`
	Cosigned     uint64 `json:"cosigned"`
	Conflicts    uint64 `json:"conflicts"`
	LastError    string `json:"last_error,omitempty"`
	LastErrorAt  string `json:"last_error_at,omitempty"`
	// AlertKind and Alert: the last ledger.witness_alert about it not
	// followed by a cosignature.
	AlertKind string `json:"alert_kind,omitempty"`
	Alert     string `json:"alert,omitempty"`
	AlertAt   string `json:"alert_at,omitempty"`
}

func witnessesJSON(ws []*opxv1.WitnessStatus) []witnessStatusJSON {
	out := []witnessStatusJSON{}
	for _, w := range ws {
		out = append(out, witnessStatusJSON{URL: w.Url, Name: w.Name, KeyHash: w.KeyHash, CosignedSize: w.CosignedSize,
			PendingSize: w.PendingSize, Submitted: w.Submitted, Cosigned: w.Cosigned, Conflicts: w.Conflicts,
			LastError: w.LastError, LastErrorAt: w.LastErrorAt, AlertKind: w.AlertKind, Alert: w.Alert, AlertAt: w.AlertAt})
	}
	return out
}

// witnessProblems are doctor's problems: a witness with a standing alert.
// A witness that cannot be reached is retried, not a problem.
func witnessProblems(ws []witnessStatusJSON, problem func(string, ...any)) {
	for _, w := range ws {
		if w.AlertKind != "" {
			problem("witness %s (%s): alert %s: %s", w.Name, w.URL, w.AlertKind, w.Alert)
		}
	}
}

func printWitnesses(w io.Writer, ws []witnessStatusJSON) {
	if len(ws) == 0 {
		fmt.Fprintf(w, "witnesses none (ledger.witnesses)\n")
		return
	}
	for i, s := range ws {
		label := "          "
		if i == 0 {
			label = "witnesses "
		}
		cosigned := "nothing cosigned yet"
		if s.CosignedSize > 0 {
			cosigned = ui.Green(w, fmt.Sprintf("cosigned %d entries", s.CosignedSize))
		}
		fmt.Fprintf(w, "%s%s (%s) at %s: %s", label, s.Name, s.KeyHash, s.URL, cosigned)
		if s.PendingSize > 0 {
			fmt.Fprintf(w, ", %d pending", s.PendingSize)
		}
		fmt.Fprintln(w)
		if s.AlertKind != "" {
			fmt.Fprintf(w, "          %s %s: %s (%s)\n", ui.Red(w, "alert"), s.AlertKind, s.Alert, s.AlertAt)
		}
		if s.LastError != "" {
			fmt.Fprintf(w, "          %s %s (%s)\n", ui.Paint(w, "33", "last error"), s.LastError, s.LastErrorAt)
		}
	}
}

// printCheckpointKey prints the origin and the verifier key the ledger's
// checkpoints are signed with: what a witness lists the log by.
func printCheckpointKey(w io.Writer, origin, key string) {
	if origin == "" {
		return
	}
	fmt.Fprintf(w, "origin    %s\n          key %s\n", origin, key)
}
