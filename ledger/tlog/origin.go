package tlog

import (
	"errors"
	"fmt"
	"strings"
	"unicode"
)

// MaxOriginBytes bounds an origin a team configures (ledger.origin).
const MaxOriginBytes = 256

// ErrOrigin is returned by CheckOrigin for an origin C2SP
// tlog-checkpoint (https://c2sp.org/tlog-checkpoint) does not allow, or
// that opx refuses to sign under.
var ErrOrigin = errors.New("not a checkpoint origin")

// CheckOrigin checks an origin a team chose for its ledger's checkpoints
// (and its signing key's name), by tlog-checkpoint's rules: a schema-less
// URL (no "scheme://"), printable ASCII without spaces or '+' (the note
// key format's separator), not empty, at most MaxOriginBytes; and, as it
// recommends and the witness network expects, a lower-case host (the part
// before the first '/'). An origin under OriginPrefix is opx's default
// and is not chosen: it names another ledger's id.
func CheckOrigin(origin string) error {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("origin %q: %w: %s", clip(origin), ErrOrigin, fmt.Sprintf(format, args...))
	}
	switch {
	case origin == "":
		return bad("empty")
	case len(origin) > MaxOriginBytes:
		return bad("%d bytes (at most %d)", len(origin), MaxOriginBytes)
	case strings.Contains(origin, "://"):
		return bad("a schema-less URL is wanted (example.com/log, without https://)")
	case strings.HasPrefix(origin, OriginPrefix):
		return bad("%s is opx's default origin, not one to choose", OriginPrefix)
	}
	for _, r := range origin {
		switch {
		case r == '+':
			return bad("'+' separates a note key's fields")
		case r > unicode.MaxASCII || !unicode.IsPrint(r) || unicode.IsSpace(r):
			return bad("printable ASCII without spaces is wanted")
		}
	}
	host, _, _ := strings.Cut(origin, "/")
	if host == "" {
		return bad("no host before the first '/'")
	}
	if strings.ToLower(host) != host {
		return bad("a lower-case host is wanted (%s)", strings.ToLower(host))
	}
	return nil
}

// KeyOrigin is the origin a key named name signs for in the ledger
// ledgerID, and whether such a key may sign for it at all: a name under
// OriginPrefix only as Origin(ledgerID) (a key of another ledger's id
// signs nothing of this one), any other name only when CheckOrigin
// allows it (a team's ledger.origin, recorded by ledger.key).
func KeyOrigin(ledgerID, name string) (origin string, ok bool) {
	if strings.HasPrefix(name, OriginPrefix) {
		return Origin(ledgerID), name == Origin(ledgerID)
	}
	return name, CheckOrigin(name) == nil
}
