package cli

import (
	"fmt"
	"io"
	"time"

	"github.com/opx-dev/opx/cli/internal/ui"
	opxv1 "github.com/opx-dev/opx/proto/opx/v1"
)

// fleetStatusJSON is the shipping state in status --json (absent when
// fleet shipping is off).
type fleetStatusJSON struct {
	URL       string `json:"url"`
	Stream    string `json:"stream"`
	Subject   string `json:"subject"`
	Connected bool   `json:"connected"`
	// AckedSeq: every entry up to it is on the stream (null: none yet).
	AckedSeq     *uint64 `json:"acked_seq"`
	DurableSeq   uint64  `json:"durable_seq"`
	LagEntries   uint64  `json:"lag_entries"`
	LagSeconds   float64 `json:"lag_seconds"`
	LastError    string  `json:"last_error,omitempty"`
	LastErrorAt  string  `json:"last_error_at,omitempty"`
	CosignedSize uint64  `json:"cosigned_size"`
	Witness      string  `json:"witness,omitempty"`
	Duplicates   uint64  `json:"duplicates"`
}

func fleetJSON(f *opxv1.FleetStatus) *fleetStatusJSON {
	if f == nil {
		return nil
	}
	out := &fleetStatusJSON{URL: f.Url, Stream: f.Stream, Subject: f.Subject, Connected: f.Connected, DurableSeq: f.DurableSeq,
		LagEntries: f.LagEntries, LagSeconds: float64(f.LagMs) / 1000, LastError: f.LastError, LastErrorAt: f.LastErrorAt,
		CosignedSize: f.CosignedSize, Witness: f.Witness, Duplicates: f.Duplicates}
	if f.HasAcked {
		a := f.AckedSeq
		out.AckedSeq = &a
	}
	return out
}

func printFleet(w io.Writer, f *fleetStatusJSON) {
	if f == nil {
		fmt.Fprintf(w, "fleet     off\n")
		return
	}
	state := ui.Green(w, "connected")
	if !f.Connected {
		state = ui.Red(w, "not connected")
	}
	acked := "nothing acknowledged yet"
	if f.AckedSeq != nil {
		acked = fmt.Sprintf("acknowledged up to %d of %d", *f.AckedSeq, f.DurableSeq)
	}
	fmt.Fprintf(w, "fleet     %s to %s (%s), %s\n", state, f.URL, f.Subject, acked)
	lag := fmt.Sprintf("lag %d entries", f.LagEntries)
	if f.LagEntries > 0 {
		lag += fmt.Sprintf(", %s", (time.Duration(f.LagSeconds*1000) * time.Millisecond).String())
		lag = ui.Red(w, lag)
	}
	fmt.Fprintf(w, "          %s\n", lag)
	if f.CosignedSize > 0 {
		fmt.Fprintf(w, "          cosigned up to tree size %d by %s\n", f.CosignedSize, f.Witness)
	}
	if f.LastError != "" {
		fmt.Fprintf(w, "          last error %s: %s\n", f.LastErrorAt, f.LastError)
	}
}
