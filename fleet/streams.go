package fleet

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// LedgerStreamConfig is the ledger stream's configuration. Retention is
// the operator's (MaxAge 0: kept until they set limits); replicas 1 on a
// single server, 3 on a cluster.
func LedgerStreamConfig(prefix string, replicas int) jetstream.StreamConfig {
	return jetstream.StreamConfig{
		Name:        LedgerStream(prefix),
		Description: "opx ledgers shipped by engines (" + WireVersion + ")",
		Subjects:    []string{LedgerSubjects(prefix)},
		Retention:   jetstream.LimitsPolicy,
		Storage:     jetstream.FileStorage,
		Replicas:    max(replicas, 1),
		Duplicates:  DedupWindow,
		MaxMsgSize:  MaxChunk + 4096,
		Discard:     jetstream.DiscardOld,
	}
}

// CosigStreamConfig is the cosignature stream's configuration: every
// cosigned checkpoint of each source, none displaced by a later message
// (MaxMsgsPerSubject -1). Keeping only the latest let whoever may publish
// on a source's subject replace the witness's latest cosignature with an
// older genuine one (every one is in the source's own ledger.cosigned
// entries), lowering the reference `opx ledger verify --witness` proves
// the ledger extends: with every one kept, a publish can only add, and
// verify takes the largest.
func CosigStreamConfig(prefix string, replicas int) jetstream.StreamConfig {
	return jetstream.StreamConfig{
		Name:              CosigStream(prefix),
		Description:       "opx witness cosignatures (" + WireVersion + ")",
		Subjects:          []string{CosigSubjects(prefix)},
		Retention:         jetstream.LimitsPolicy,
		Storage:           jetstream.FileStorage,
		Replicas:          max(replicas, 1),
		MaxMsgsPerSubject: -1,
		MaxMsgSize:        MaxCosigBytes + 4096,
	}
}

// EnsureStreams creates both streams under prefix unless they exist (an
// existing stream's configuration is the operator's and left alone).
func EnsureStreams(ctx context.Context, js jetstream.JetStream, prefix string, replicas int) error {
	for _, cfg := range []jetstream.StreamConfig{LedgerStreamConfig(prefix, replicas), CosigStreamConfig(prefix, replicas)} {
		if _, err := js.Stream(ctx, cfg.Name); err == nil {
			continue
		} else if !errors.Is(err, jetstream.ErrStreamNotFound) {
			return fmt.Errorf("fleet: stream %s: %w", cfg.Name, err)
		}
		if _, err := js.CreateStream(ctx, cfg); err != nil && !errors.Is(err, jetstream.ErrStreamNameAlreadyInUse) {
			return fmt.Errorf("fleet: creating stream %s: %w", cfg.Name, err)
		}
	}
	return nil
}

// CollectorOnly are the subjects under prefix only a collector should
// publish on: cosignatures (a publish there is taken as the witness's),
// resend requests, and the JetStream API requests that create, change,
// purge or delete a stream or its messages (an engine finds both streams
// made by the collector). natsrv.Guard keeps them to the collector on an
// embedded server; on a cluster they are the operator's permissions.
func CollectorOnly(prefix string) []string {
	return []string{
		prefix + ".cosig.>",
		prefix + ".ctl.>",
		"$JS.API.STREAM.CREATE.>",
		"$JS.API.STREAM.UPDATE.>",
		"$JS.API.STREAM.DELETE.>",
		"$JS.API.STREAM.PURGE.>",
		"$JS.API.STREAM.MSG.DELETE.>",
		"$JS.API.STREAM.RESTORE.>",
		"$JS.API.STREAM.PEER.REMOVE.>",
	}
}

// legacyCosigPerSubject is what CosigStreamConfig kept per source before
// it kept every cosignature.
const legacyCosigPerSubject = 1

// KeepCosigHistory makes an existing cosignature stream under prefix keep
// every cosignature: a stream created by an earlier opx (one message per
// source) is updated to MaxMsgsPerSubject -1, its other settings left as
// they are. A per-source limit other than the one earlier opx set is the
// operator's and left alone. It reports whether it updated the stream;
// the collector calls it (engines need no right to update streams).
func KeepCosigHistory(ctx context.Context, js jetstream.JetStream, prefix string) (bool, error) {
	st, err := js.Stream(ctx, CosigStream(prefix))
	if err != nil {
		return false, fmt.Errorf("fleet: stream %s: %w", CosigStream(prefix), err)
	}
	cfg := st.CachedInfo().Config
	if cfg.MaxMsgsPerSubject != legacyCosigPerSubject {
		return false, nil
	}
	cfg.MaxMsgsPerSubject = -1
	if _, err := js.UpdateStream(ctx, cfg); err != nil {
		return false, fmt.Errorf("fleet: keeping every cosignature on %s: %w", cfg.Name, err)
	}
	return true, nil
}

// CosigLimits says how the cosignature stream's limits let a message
// displace another ("" when none can): a limit per source, on messages
// or on bytes (with Discard old) lets whoever may publish push the
// witness's latest cosignature out with older ones.
func CosigLimits(cfg jetstream.StreamConfig) string {
	var l []string
	if cfg.MaxMsgsPerSubject > 0 {
		l = append(l, fmt.Sprintf("at most %d per source", cfg.MaxMsgsPerSubject))
	}
	if cfg.Discard == jetstream.DiscardOld {
		if cfg.MaxMsgs > 0 {
			l = append(l, fmt.Sprintf("at most %d messages", cfg.MaxMsgs))
		}
		if cfg.MaxBytes > 0 {
			l = append(l, fmt.Sprintf("at most %d bytes", cfg.MaxBytes))
		}
	}
	return strings.Join(l, ", ")
}

// CosigMessage is a witness's cosigned checkpoint of a source at size: the
// checkpoint note with the source's signature and the witness's
// cosignature line(s).
func CosigMessage(prefix, ledgerID string, size uint64, note []byte) *nats.Msg {
	m := nats.NewMsg(CosigSubject(prefix, ledgerID))
	m.Header.Set(HdrWire, WireVersion)
	m.Header.Set(HdrSize, strconv.FormatUint(size, 10))
	m.Data = note
	return m
}

// ParseCosig reads a cosignature message: the source it is for, the tree
// size and the note (unverified: the reader checks it against its own
// tree and keys).
func ParseCosig(prefix string, m *nats.Msg) (ledgerID string, size uint64, note []byte, err error) {
	id, ok := strings.CutPrefix(m.Subject, prefix+".cosig.")
	if !ok || CheckLedgerID(id) != nil {
		return "", 0, nil, fmt.Errorf("%w: subject %q", ErrMalformed, clip(m.Subject))
	}
	if w := m.Header.Get(HdrWire); w != WireVersion {
		return "", 0, nil, fmt.Errorf("%w %q", ErrWire, clip(w))
	}
	if len(m.Data) > MaxCosigBytes {
		return "", 0, nil, fmt.Errorf("%w: a cosigned note of %d bytes (at most %d)", ErrMalformed, len(m.Data), MaxCosigBytes)
	}
	size, err = strconv.ParseUint(m.Header.Get(HdrSize), 10, 64)
	if err != nil || size == 0 {
		return "", 0, nil, fmt.Errorf("%w: cosignature size %q", ErrMalformed, clip(m.Header.Get(HdrSize)))
	}
	return id, size, m.Data, nil
}
