package event

import (
	"errors"
	"net/url"
)

// TypeWitnessAlert records that a C2SP tlog-witness the engine submits its
// checkpoints to (config ledger.witnesses, engine/witness) refused one in a
// way that says something is wrong with the key, the tree or the witness
// (ledger.witness_alert), an extension of DESIGN's table. Network errors
// and a witness that is down are not recorded: they are retried, and shown
// in `opx status`.
const TypeWitnessAlert = "ledger.witness_alert"

// Witness alert kinds (ledger.witness_alert kind), normative: `opx status`
// and `opx doctor` show them, and reviewers filter on them.
const (
	// WitnessUnknownOrigin: 404, the witness does not know the log's
	// origin (it is not listed with that witness, or under another key).
	WitnessUnknownOrigin = "unknown-origin"
	// WitnessBadSignature: 403, the witness does not accept the log's
	// signature on the checkpoint (it lists another verifier key).
	WitnessBadSignature = "bad-signature"
	// WitnessBadProof: 422, the consistency proof from the size the
	// witness holds does not verify: the ledger is not an extension of the
	// tree the witness saw (rewritten, or restored from an older copy and
	// grown since).
	WitnessBadProof = "bad-proof"
	// WitnessAhead: the witness holds a larger tree of this log than the
	// ledger has (409 with a size beyond the ledger's): the ledger was
	// truncated or restored from an older copy.
	WitnessAhead = "ahead"
	// WitnessRewound: the witness states a size below one it cosigned
	// before (recorded in ledger.cosigned): it lost its state, or is not
	// the witness it was.
	WitnessRewound = "rewound"
	// WitnessBadCosignature: the witness answered 200 with no cosignature
	// line that verifies under its configured key.
	WitnessBadCosignature = "bad-cosignature"
	// WitnessProtocol: an answer the protocol does not allow (a 409 whose
	// body is not a size, another 4xx).
	WitnessProtocol = "protocol"
)

// WitnessAlertKinds lists every witness alert kind.
var WitnessAlertKinds = []string{WitnessUnknownOrigin, WitnessBadSignature, WitnessBadProof, WitnessAhead,
	WitnessRewound, WitnessBadCosignature, WitnessProtocol}

func init() { register(func() Payload { return &WitnessAlert{} }) }

// WitnessAlert is a witness's refusal of a checkpoint: the witness (its
// verifier key's name and key hash, its URL), the kind, the tree size
// submitted, the old size sent with it, the HTTP status (0: none, the
// finding is opx's own) and the witness's size when it stated one.
type WitnessAlert struct {
	Witness     string `json:"witness"`
	KeyHash     string `json:"key_hash"` // 8 hex, as in the witness's verifier key
	URL         string `json:"url"`
	Kind        string `json:"kind"`
	TreeSize    uint64 `json:"tree_size"`
	OldSize     uint64 `json:"old_size"`
	Status      int    `json:"status"`
	WitnessSize uint64 `json:"witness_size,omitempty"`
	Detail      string `json:"detail"`
}

func (*WitnessAlert) Type() string { return TypeWitnessAlert }

func (a *WitnessAlert) Validate() error {
	if err := need("witness", a.Witness, "url", a.URL, "detail", a.Detail); err != nil {
		return err
	}
	if !isLowerHex(a.KeyHash, 8) {
		return errors.New("key_hash is not 8 lowercase hex")
	}
	if u, err := url.Parse(a.URL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return errors.New("url is not an http(s) URL")
	}
	known := false
	for _, k := range WitnessAlertKinds {
		known = known || k == a.Kind
	}
	if !known {
		return errors.New("kind is not a witness alert kind")
	}
	if a.TreeSize == 0 {
		return errors.New("tree_size is required (a checkpoint covers at least genesis)")
	}
	if a.Status != 0 && (a.Status < 100 || a.Status > 599) {
		return errors.New("status is not an HTTP status")
	}
	if len(a.Detail) > MaxAlertDetail+8 {
		return errors.New("detail is too long")
	}
	return nil
}
