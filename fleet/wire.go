package fleet

import (
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/opx-dev/opx/ledger"
)

// WireVersion names this format in every message (Opx-Wire).
const WireVersion = "opx-fleet/1"

// DefaultPrefix is the subject prefix when the config names none.
const DefaultPrefix = "opx"

// Bounds (invariant 9: every reader of fleet messages runs in bounded
// memory whatever a message holds).
const (
	// MaxChunk is the largest body of one message.
	MaxChunk = 512 << 10
	// MaxHeaderValue bounds each header value read.
	MaxHeaderValue = 256
	// MaxHelloBytes bounds a hello's body.
	MaxHelloBytes = 16 << 10
	// MaxCosigBytes bounds a cosigned checkpoint note.
	MaxCosigBytes = 64 << 10
	// MaxParts bounds the parts of one entry or blob: an entry is at most
	// ledger.MaxLineSize, a blob frame a little over ledger.MaxBlobSize.
	MaxParts = (ledger.MaxBlobSize + ledger.MaxBlobSize>>10 + 1<<16 + MaxChunk - 1) / MaxChunk
)

// DedupWindow is the ledger stream's duplicate window: a message resent
// with the same Nats-Msg-Id within it is dropped by JetStream. The
// collector drops later resends itself (an entry it holds, byte for byte).
const DedupWindow = 10 * time.Minute

// Header names.
const (
	HdrWire  = "Opx-Wire"
	HdrKind  = "Opx-Kind"
	HdrSeq   = "Opx-Seq"
	HdrBlob  = "Opx-Blob"
	HdrSize  = "Opx-Size"
	HdrPart  = "Opx-Part"
	HdrMsgID = nats.MsgIdHdr
)

// Kind is a ledger subject message's kind.
type Kind string

const (
	KindHello Kind = "hello"
	KindEntry Kind = "entry"
	KindBlob  Kind = "blob"
)

var prefixRE = regexp.MustCompile(`^[A-Za-z0-9_-]{1,32}(\.[A-Za-z0-9_-]{1,32}){0,3}$`)
var ledgerIDRE = regexp.MustCompile(`^[0-9a-f]{32}$`)

// CheckPrefix refuses a subject prefix that is not 1 to 4 tokens of
// [A-Za-z0-9_-] (no wildcards, no empty tokens).
func CheckPrefix(p string) error {
	if !prefixRE.MatchString(p) {
		return fmt.Errorf("fleet: subject prefix %q: want 1 to 4 dot-separated tokens of letters, digits, _ or -", p)
	}
	return nil
}

// CheckLedgerID refuses anything but a ledger id (32 lowercase hex).
func CheckLedgerID(id string) error {
	if !ledgerIDRE.MatchString(id) {
		return fmt.Errorf("fleet: %q is not a ledger id (32 lowercase hex)", clip(id))
	}
	return nil
}

// streamName turns a prefix into a stream name part: JetStream stream
// names take no dots.
func streamName(prefix, what string) string {
	return strings.ToUpper(strings.NewReplacer(".", "_", "-", "_").Replace(prefix)) + "_" + what
}

// LedgerStream is the name of the stream of ledgers under prefix.
func LedgerStream(prefix string) string { return streamName(prefix, "LEDGERS") }

// CosigStream is the name of the stream of cosignatures under prefix.
func CosigStream(prefix string) string { return streamName(prefix, "COSIGS") }

// LedgerSubject is the subject of one source ledger.
func LedgerSubject(prefix, ledgerID string) string { return prefix + ".ledger." + ledgerID }

// LedgerSubjects matches every source ledger's subject.
func LedgerSubjects(prefix string) string { return prefix + ".ledger.*" }

// CosigSubject is the subject of one source's cosignatures.
func CosigSubject(prefix, ledgerID string) string { return prefix + ".cosig." + ledgerID }

// CosigSubjects matches every source's cosignature subject.
func CosigSubjects(prefix string) string { return prefix + ".cosig.*" }

// EntryMsgID is the Nats-Msg-Id of an entry's last (or only) part.
func EntryMsgID(ledgerID string, seq uint64) string {
	return ledgerID + ":" + strconv.FormatUint(seq, 10)
}

// ConflictMsgID is the Nats-Msg-Id of an entry published again because
// the stream held other bytes under EntryMsgID (another history).
func ConflictMsgID(ledgerID string, seq uint64, raw []byte) string {
	h := ledger.Sum(raw)
	return EntryMsgID(ledgerID, seq) + "#" + h.String()[:16]
}

// ResendMsgID is the Nats-Msg-Id of a message (an entry's EntryMsgID, or
// a blob part's BlobMsgID) shipped again for the resend request epoch.
func ResendMsgID(msgID, epoch string) string { return msgID + "@" + epoch }

// CtlSubject is the control subject of one source.
func CtlSubject(prefix, ledgerID string) string { return prefix + ".ctl." + ledgerID }

// ResendEvery is how often a shipper honours resend requests at most (a
// request within it is ignored: a collector asks again at its next
// check).
const ResendEvery = 30 * time.Second

// MaxCtlBytes bounds a control message.
const MaxCtlBytes = 4 << 10

// ResendRequest asks a source's shipper to ship again from From (its
// entries, and the blobs they name), with message ids made unique by
// Epoch (16 to 64 hex, the collector's random choice per request).
type ResendRequest struct {
	Wire     string `json:"wire"`
	LedgerID string `json:"ledger_id"`
	From     uint64 `json:"from"`
	Epoch    string `json:"epoch"`
	Reason   string `json:"reason,omitempty"`
}

var epochRE = regexp.MustCompile(`^[0-9a-f]{16,64}$`)

// ResendMessage is a ResendRequest as a message on CtlSubject.
func ResendMessage(prefix string, r ResendRequest) (*nats.Msg, error) {
	r.Wire = WireVersion
	if err := CheckLedgerID(r.LedgerID); err != nil {
		return nil, err
	}
	if !epochRE.MatchString(r.Epoch) {
		return nil, fmt.Errorf("fleet: resend epoch %q: want 16 to 64 lowercase hex", clip(r.Epoch))
	}
	r.Reason = clip(r.Reason)
	b, err := json.Marshal(r)
	if err != nil {
		return nil, err
	}
	m := nats.NewMsg(CtlSubject(prefix, r.LedgerID))
	m.Header.Set(HdrWire, WireVersion)
	m.Data = b
	return m, nil
}

// ParseResend reads a resend request on prefix's control subject of
// ledgerID, refusing anything else (ErrMalformed, ErrWire).
func ParseResend(prefix, ledgerID string, m *nats.Msg) (ResendRequest, error) {
	var r ResendRequest
	if m.Subject != CtlSubject(prefix, ledgerID) {
		return r, fmt.Errorf("%w: subject %q", ErrMalformed, clip(m.Subject))
	}
	if w := m.Header.Get(HdrWire); w != WireVersion {
		return r, fmt.Errorf("%w %q", ErrWire, clip(w))
	}
	if len(m.Data) > MaxCtlBytes {
		return r, fmt.Errorf("%w: a control message of %d bytes (at most %d)", ErrMalformed, len(m.Data), MaxCtlBytes)
	}
	if err := json.Unmarshal(m.Data, &r); err != nil {
		return r, fmt.Errorf("%w: resend request: %v", ErrMalformed, err)
	}
	if r.Wire != WireVersion || r.LedgerID != ledgerID || !epochRE.MatchString(r.Epoch) {
		return r, fmt.Errorf("%w: resend request for %q (wire %q, epoch %q)", ErrMalformed, clip(r.LedgerID), clip(r.Wire), clip(r.Epoch))
	}
	return r, nil
}

// HelloMsgID is the Nats-Msg-Id of a hello: one per engine life.
func HelloMsgID(ledgerID, boot string) string { return ledgerID + ":hello:" + boot }

// BlobMsgID is the Nats-Msg-Id of a blob's part i.
func BlobMsgID(ledgerID string, h ledger.Hash, i int) string {
	return ledgerID + ":blob:" + h.String() + "/" + strconv.Itoa(i)
}

// Hello introduces a source: sent at each engine start (and reconnect),
// before its entries. What it says is the source's own claim: the
// collector shows it, and trusts only what the entries prove.
type Hello struct {
	Wire       string `json:"wire"`
	LedgerID   string `json:"ledger_id"`
	Boot       string `json:"boot"` // random per engine life, 32 hex
	Host       string `json:"host"`
	Workspace  string `json:"workspace"`
	OpxVersion string `json:"opx_version"`
	// VerifierKey is the ledger's checkpoint verifier key, as
	// `opx ledger key` prints it ("" when the ledger does not sign).
	VerifierKey string `json:"verifier_key,omitempty"`
	// Head is the source's head when it said hello.
	HeadSeq  uint64 `json:"head_seq"`
	HeadHash string `json:"head_hash"`
}

// Message is one parsed message of a ledger subject.
type Message struct {
	Kind     Kind
	LedgerID string
	MsgID    string
	// Entry: Seq. Blob: Blob. Both: Part of Parts, Size the whole's bytes,
	// Data this part's bytes.
	Seq         uint64
	Blob        ledger.Hash
	Part, Parts int
	Size        int64
	Data        []byte
	Hello       *Hello
}

// Errors of Parse.
var (
	ErrMalformed = errors.New("fleet: malformed message")
	ErrWire      = errors.New("fleet: unknown wire version")
)

// EntryMessages splits an entry's stored bytes into its messages.
func EntryMessages(prefix, ledgerID string, seq uint64, raw []byte) []*nats.Msg {
	parts := partsOf(len(raw))
	msgs := make([]*nats.Msg, 0, parts)
	for i := range parts {
		m := newMsg(prefix, ledgerID, KindEntry, raw[i*MaxChunk:min(len(raw), (i+1)*MaxChunk)])
		m.Header.Set(HdrSeq, strconv.FormatUint(seq, 10))
		m.Header.Set(HdrSize, strconv.Itoa(len(raw)))
		m.Header.Set(HdrPart, fmt.Sprintf("%d/%d", i, parts))
		id := EntryMsgID(ledgerID, seq)
		if i < parts-1 {
			id += "/" + strconv.Itoa(i)
		}
		m.Header.Set(HdrMsgID, id)
		msgs = append(msgs, m)
	}
	return msgs
}

// BlobMessage is part i of a blob's stored frame of size bytes; part is
// that part's bytes (at most MaxChunk).
func BlobMessage(prefix, ledgerID string, h ledger.Hash, size int64, i int, part []byte) *nats.Msg {
	m := newMsg(prefix, ledgerID, KindBlob, part)
	m.Header.Set(HdrBlob, h.String())
	m.Header.Set(HdrSize, strconv.FormatInt(size, 10))
	m.Header.Set(HdrPart, fmt.Sprintf("%d/%d", i, partsOf(int(size))))
	m.Header.Set(HdrMsgID, BlobMsgID(ledgerID, h, i))
	return m
}

// BlobParts is how many parts a blob frame of size bytes takes.
func BlobParts(size int64) int { return partsOf(int(size)) }

// HelloMessage is a source's hello.
func HelloMessage(prefix string, h Hello) (*nats.Msg, error) {
	h.Wire = WireVersion
	b, err := json.Marshal(h)
	if err != nil {
		return nil, err
	}
	m := newMsg(prefix, h.LedgerID, KindHello, b)
	m.Header.Set(HdrMsgID, HelloMsgID(h.LedgerID, h.Boot))
	return m, nil
}

func partsOf(n int) int { return max(1, (n+MaxChunk-1)/MaxChunk) }

func newMsg(prefix, ledgerID string, k Kind, data []byte) *nats.Msg {
	m := nats.NewMsg(LedgerSubject(prefix, ledgerID))
	m.Header.Set(HdrWire, WireVersion)
	m.Header.Set(HdrKind, string(k))
	m.Data = data
	return m
}

// Parse reads a message of a ledger subject under prefix, refusing what
// does not follow the format (ErrMalformed, ErrWire). It copies nothing
// larger than the message itself.
func Parse(prefix string, m *nats.Msg) (*Message, error) {
	id, ok := strings.CutPrefix(m.Subject, prefix+".ledger.")
	if !ok || CheckLedgerID(id) != nil {
		return nil, fmt.Errorf("%w: subject %q", ErrMalformed, clip(m.Subject))
	}
	hdr := func(k string) string {
		v := m.Header.Get(k)
		if len(v) > MaxHeaderValue {
			return "\x00"
		}
		return v
	}
	if w := hdr(HdrWire); w != WireVersion {
		return nil, fmt.Errorf("%w %q", ErrWire, clip(w))
	}
	out := &Message{Kind: Kind(hdr(HdrKind)), LedgerID: id, MsgID: hdr(HdrMsgID), Data: m.Data}
	bad := func(f string, a ...any) (*Message, error) {
		return nil, fmt.Errorf("%w: %s %s: %s", ErrMalformed, clip(string(out.Kind)), id, fmt.Sprintf(f, a...))
	}
	if len(m.Data) > MaxChunk && out.Kind != KindHello {
		return bad("a body of %d bytes (at most %d)", len(m.Data), MaxChunk)
	}
	switch out.Kind {
	case KindHello:
		if len(m.Data) > MaxHelloBytes {
			return bad("a hello of %d bytes (at most %d)", len(m.Data), MaxHelloBytes)
		}
		var h Hello
		if err := json.Unmarshal(m.Data, &h); err != nil {
			return bad("hello: %v", err)
		}
		if h.LedgerID != id || h.Wire != WireVersion {
			return bad("hello names ledger %q (wire %q)", clip(h.LedgerID), clip(h.Wire))
		}
		out.Hello = &h
		return out, nil
	case KindEntry, KindBlob:
	default:
		return bad("unknown kind")
	}
	size, err := strconv.ParseInt(hdr(HdrSize), 10, 64)
	if err != nil || size < 0 {
		return bad("size %q", clip(hdr(HdrSize)))
	}
	out.Size = size
	ps, qs, ok := strings.Cut(hdr(HdrPart), "/")
	p, err1 := strconv.Atoi(ps)
	q, err2 := strconv.Atoi(qs)
	if !ok || err1 != nil || err2 != nil || q < 1 || q > MaxParts || p < 0 || p >= q || q != partsOf(int(min(size, int64(MaxParts)*MaxChunk))) {
		return bad("part %q of size %d", clip(hdr(HdrPart)), size)
	}
	out.Part, out.Parts = p, q
	want := MaxChunk
	if p == q-1 {
		want = int(size - int64(q-1)*MaxChunk)
	}
	if len(m.Data) != want {
		return bad("part %d/%d holds %d bytes, want %d", p, q, len(m.Data), want)
	}
	switch out.Kind {
	case KindEntry:
		if out.Seq, err = strconv.ParseUint(hdr(HdrSeq), 10, 64); err != nil {
			return bad("seq %q", clip(hdr(HdrSeq)))
		}
		if size > ledger.MaxLineSize || size == 0 {
			return bad("an entry of %d bytes", size)
		}
	case KindBlob:
		b, err := hex.DecodeString(hdr(HdrBlob))
		if err != nil || len(b) != len(out.Blob) {
			return bad("blob %q", clip(hdr(HdrBlob)))
		}
		copy(out.Blob[:], b)
	}
	return out, nil
}

func clip(s string) string {
	if len(s) > 80 {
		return s[:80] + "…"
	}
	return s
}
