package event

import (
	"errors"
	"strings"

	"github.com/opx-dev/opx/ledger/tlog"
)

// TypeKey records the verifier key of the ledger's checkpoint signing key
// (ledger.key), an extension of DESIGN's table: the engine records it when
// it creates the key, and again whenever the key it finds is not the one
// recorded last (the key file was lost or replaced), so an investigator
// sees every key change and which checkpoints each key signed.
const TypeKey = "ledger.key"

// Reasons of a ledger.key entry.
const (
	// KeyCreated: the ledger's first signing key.
	KeyCreated = "created"
	// KeyReplaced: the key file held another key than the one recorded
	// last, or none (it was lost); later checkpoints are signed by this
	// one.
	KeyReplaced = "replaced"
)

func init() { register(func() Payload { return &Key{} }) }

// Key is the verifier key (note format, "<origin>+<hash>+<key>") that
// signs the ledger's checkpoints from this entry on.
type Key struct {
	VKey   string `json:"vkey"`
	Reason string `json:"reason"`
	// Detail says, for a replaced key, what happened to the previous one.
	Detail string `json:"detail,omitempty"`
}

func (*Key) Type() string { return TypeKey }

func (k *Key) Validate() error {
	v, err := tlog.ParseVerifierKey(k.VKey)
	if err != nil {
		return err
	}
	if v.String() != k.VKey || !IsLedgerOrigin(v.Name()) {
		return errors.New("vkey is not an opx ledger's verifier key")
	}
	if k.Reason != KeyCreated && k.Reason != KeyReplaced {
		return errors.New("reason is not created or replaced")
	}
	return nil
}

// IsLedgerOrigin reports whether origin may name an opx ledger's key:
// the default, tlog.OriginPrefix and an id, or one a team chose
// (ledger.origin, tlog.CheckOrigin).
func IsLedgerOrigin(origin string) bool {
	return strings.HasPrefix(origin, tlog.OriginPrefix) || tlog.CheckOrigin(origin) == nil
}
