package event

import (
	"errors"
)

// The fleet collector's own ledger (fleet.*), an extension of DESIGN's
// table: what the collector found in the ledgers it collects (alerts),
// the source keys it pinned and the checkpoints it cosigned as a witness.
const (
	TypeFleetAlert    = "fleet.alert"
	TypeFleetPinned   = "fleet.pinned"
	TypeFleetCosigned = "fleet.cosigned"
	// TypeFleetWitnessed: a checkpoint the collector cosigned as a C2SP
	// tlog-witness (an add-checkpoint request over HTTP).
	TypeFleetWitnessed = "fleet.witnessed"
)

// Alert kinds (fleet.alert kind), normative: `opx fleet alerts` and
// scripts read them.
const (
	AlertBrokenChain  = "broken-chain"  // an entry whose prev is not the hash of the one before
	AlertGap          = "gap"           // entries missing and not coming
	AlertBadSignature = "bad-signature" // a checkpoint not signed by the source's pinned key
	AlertFork         = "fork"          // two checkpoints for one size, or two histories under one id
	AlertRewind       = "rewind"        // a source whose head is behind what it shipped
	AlertRewrite      = "rewrite"       // an entry shipped again with other bytes
	AlertStalled      = "stalled"       // a source that stopped shipping
	AlertKeyReplaced  = "key-replaced"  // a ledger.key other than the pinned one
	AlertMalformed    = "malformed"     // a message or entry that does not parse
	AlertBadBlob      = "bad-blob"      // a blob that does not hash to its name
	AlertTooLarge     = "too-large"     // an entry or blob larger than this collector takes (nothing wrong with it)
	AlertTooMany      = "too-many"      // a source refused: the collector has max_sources already
)

// AlertKinds lists every alert kind.
var AlertKinds = []string{AlertBrokenChain, AlertGap, AlertBadSignature, AlertFork, AlertRewind,
	AlertRewrite, AlertStalled, AlertKeyReplaced, AlertMalformed, AlertBadBlob, AlertTooLarge, AlertTooMany}

// MaxAlertDetail bounds an alert's detail.
const MaxAlertDetail = 1024

// isSource reports whether s is a ledger id (32 lower-case hex digits) or
// "-" (no source).
func isSource(s string) bool { return s == "-" || isLowerHex(s, 32) }

func init() {
	register(func() Payload { return &FleetAlert{} })
	register(func() Payload { return &FleetPinned{} })
	register(func() Payload { return &FleetCosigned{} })
	register(func() Payload { return &FleetWitnessed{} })
}

// FleetAlert is something wrong with a source ledger: its id ("-" when
// the message named none), the kind, the source seq it concerns and what
// was found.
type FleetAlert struct {
	Source string `json:"source"`
	Kind   string `json:"kind"`
	Seq    uint64 `json:"seq"`
	Detail string `json:"detail"`
}

func (*FleetAlert) Type() string { return TypeFleetAlert }

func (a *FleetAlert) Validate() error {
	if !isSource(a.Source) {
		return errors.New("source is not a ledger id")
	}
	known := false
	for _, k := range AlertKinds {
		known = known || k == a.Kind
	}
	if !known {
		return errors.New("kind is not an alert kind")
	}
	if len(a.Detail) > MaxAlertDetail+8 {
		return errors.New("detail is too long")
	}
	return need("detail", a.Detail)
}

// FleetPinned is the key the collector checks a source's checkpoints
// with from now on: the source's first ledger.key (From "ledger.key",
// Seq its seq) or the collector's allow-list (From "allow-list").
type FleetPinned struct {
	Source string `json:"source"`
	VKey   string `json:"vkey"`
	From   string `json:"from"`
	Seq    uint64 `json:"seq"`
}

func (*FleetPinned) Type() string { return TypeFleetPinned }

func (p *FleetPinned) Validate() error {
	if !isSource(p.Source) || p.Source == "-" {
		return errors.New("source is not a ledger id")
	}
	if p.From != "ledger.key" && p.From != "allow-list" {
		return errors.New("from is not ledger.key or allow-list")
	}
	return need("vkey", p.VKey)
}

// FleetCosigned is a checkpoint of a source that the collector verified
// and cosigned: the whole cosigned note (the checkpoint, the source's
// signature, the witness's cosignature/v1 line), recorded before it is
// published, and published again as recorded (never signed again).
type FleetCosigned struct {
	Source   string `json:"source"`
	TreeSize uint64 `json:"tree_size"`
	TreeRoot string `json:"tree_root"`
	Note     string `json:"note"`
}

func (*FleetCosigned) Type() string { return TypeFleetCosigned }

func (c *FleetCosigned) Validate() error {
	if !isSource(c.Source) || c.Source == "-" {
		return errors.New("source is not a ledger id")
	}
	if err := needTree(c.TreeSize, c.TreeRoot); err != nil {
		return err
	}
	if len(c.Note) > MaxCosignedNote {
		return errors.New("note is larger than 64 KiB")
	}
	return need("note", c.Note)
}

// MaxWitnessedOrigin bounds a witnessed checkpoint's origin.
const MaxWitnessedOrigin = 1024

// FleetWitnessed is a checkpoint the collector cosigned as a C2SP
// tlog-witness, answering an add-checkpoint request: the log's origin,
// the tree, and the note as answered (the checkpoint, the log's
// signatures that verified, the witness's cosignature/v1 line). It is
// recorded, and synced, before the answer is sent: the latest one per
// origin (with the fleet.cosigned of an opx source's origin) is the
// witness's state, rebuilt from the ledger after a restart, so it never
// cosigns a tree that does not extend one it cosigned.
type FleetWitnessed struct {
	Origin   string `json:"origin"`
	TreeSize uint64 `json:"tree_size"`
	TreeRoot string `json:"tree_root"`
	Note     string `json:"note"`
}

func (*FleetWitnessed) Type() string { return TypeFleetWitnessed }

func (w *FleetWitnessed) Validate() error {
	if err := need("origin", w.Origin, "note", w.Note); err != nil {
		return err
	}
	if len(w.Origin) > MaxWitnessedOrigin {
		return errors.New("origin is longer than 1024 bytes")
	}
	if err := needTree(w.TreeSize, w.TreeRoot); err != nil {
		return err
	}
	if len(w.Note) > MaxCosignedNote {
		return errors.New("note is larger than 64 KiB")
	}
	return nil
}
