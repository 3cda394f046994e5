package tlog

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"strconv"
)

// The C2SP tlog-witness protocol (https://c2sp.org/tlog-witness): a log
// POSTs an add-checkpoint request to a witness, which answers with its
// cosignature lines (200), or with its latest size for the origin (409,
// ContentTypeSize). This file is the wire form of both bodies, shared by
// the engine (the client) and the collector (the witness).
const (
	// AddCheckpointPath is the add-checkpoint call's path, after the
	// witness's submission prefix.
	AddCheckpointPath = "/add-checkpoint"
	// ContentTypeSize is the content type of a 409 answer, whose body is
	// the witness's latest cosigned size for the origin (FormatSize).
	ContentTypeSize = "text/x.tlog.size"
	// MaxProofLines is the most consistency proof lines a request may
	// carry (the spec's "MUST NOT send more than 63").
	MaxProofLines = 63
	// MaxAddCheckpointBytes bounds an add-checkpoint request body: the
	// old size line, MaxProofLines lines of base64 hashes, the empty line
	// and a checkpoint note of at most MaxNoteBytes.
	MaxAddCheckpointBytes = len("old 18446744073709551615\n") + MaxProofLines*(44+1) + 1 + MaxNoteBytes
	// MaxSizeBytes bounds a ContentTypeSize body: 20 digits and a newline.
	MaxSizeBytes = 21
)

// AddCheckpointRequest is the body of an add-checkpoint request: the size
// the client believes the witness last cosigned (OldSize), the RFC 6962
// consistency proof from that size to the checkpoint's, and the signed
// checkpoint note as it is (it may carry several signatures).
//
// The codec checks the form only. What the form cannot tell (the old
// size against the checkpoint's size, a proof with an old size of 0, the
// signature) is for the witness to check, because the protocol answers
// each with its own status.
type AddCheckpointRequest struct {
	OldSize    uint64
	Proof      [][32]byte
	Checkpoint []byte
}

// Marshal returns the request in the spec's text form:
//
//	old <OldSize, decimal>\n
//	<one proof hash per line, base64 std>\n ...
//	\n
//	<checkpoint>
func (r AddCheckpointRequest) Marshal() []byte {
	b := make([]byte, 0, 32+len(r.Proof)*45+len(r.Checkpoint))
	b = append(b, "old "...)
	b = strconv.AppendUint(b, r.OldSize, 10)
	b = append(b, '\n')
	for _, h := range r.Proof {
		b = base64.StdEncoding.AppendEncode(b, h[:])
		b = append(b, '\n')
	}
	b = append(b, '\n')
	return append(b, r.Checkpoint...)
}

// ParseAddCheckpointRequest parses an add-checkpoint request body,
// strictly: the first line is "old N" (decimal, no sign, no leading zero
// but for 0 itself, at most 2^64-1); each following line up to the empty
// line is one 32-byte hash in canonical padded standard base64; there are
// at most MaxProofLines of them; every line ends in "\n" (a "\r" is a
// malformation); the checkpoint after the empty line is not empty and at
// most MaxNoteBytes; the whole body at most MaxAddCheckpointBytes. Any
// other body is an error wrapping ErrMalformed. The checkpoint is copied,
// so body may be reused.
func ParseAddCheckpointRequest(body []byte) (AddCheckpointRequest, error) {
	var r AddCheckpointRequest
	if len(body) > MaxAddCheckpointBytes {
		return r, fmt.Errorf("add-checkpoint: %w: body of %d bytes (at most %d)", ErrMalformed, len(body), MaxAddCheckpointBytes)
	}
	line, rest, ok := bytes.Cut(body, []byte{'\n'})
	if !ok {
		return r, fmt.Errorf("add-checkpoint: %w: no old size line", ErrMalformed)
	}
	num, ok := bytes.CutPrefix(line, []byte("old "))
	if !ok {
		return r, fmt.Errorf("add-checkpoint: %w: first line is not \"old <size>\"", ErrMalformed)
	}
	n, err := parseDecimal(num)
	if err != nil {
		return r, fmt.Errorf("add-checkpoint: %w: old size: %v", ErrMalformed, err)
	}
	r.OldSize = n
	for {
		line, rest, ok = bytes.Cut(rest, []byte{'\n'})
		if !ok {
			return r, fmt.Errorf("add-checkpoint: %w: no empty line before the checkpoint", ErrMalformed)
		}
		if len(line) == 0 {
			break
		}
		if len(r.Proof) == MaxProofLines {
			return r, fmt.Errorf("add-checkpoint: %w: more than %d proof lines", ErrMalformed, MaxProofLines)
		}
		h, err := parseHashLine(line)
		if err != nil {
			return r, fmt.Errorf("add-checkpoint: %w: proof line %d: %v", ErrMalformed, len(r.Proof)+1, err)
		}
		r.Proof = append(r.Proof, h)
	}
	switch {
	case len(rest) == 0:
		return r, fmt.Errorf("add-checkpoint: %w: no checkpoint after the empty line", ErrMalformed)
	case len(rest) > MaxNoteBytes:
		return r, fmt.Errorf("add-checkpoint: %w: checkpoint of %d bytes (at most %d)", ErrMalformed, len(rest), MaxNoteBytes)
	}
	r.Checkpoint = bytes.Clone(rest)
	return r, nil
}

// FormatSize is the body of a 409 answer: n in decimal and a newline.
func FormatSize(n uint64) []byte {
	return append(strconv.AppendUint(make([]byte, 0, MaxSizeBytes), n, 10), '\n')
}

// ParseSize parses a ContentTypeSize body: a decimal size (no sign, no
// leading zero but for 0 itself) followed by one newline. A missing final
// newline is tolerated (a client should not refuse a witness's retry hint
// over it); anything else is ErrMalformed.
func ParseSize(body []byte) (uint64, error) {
	if len(body) > MaxSizeBytes {
		return 0, fmt.Errorf("tlog size: %w: %d bytes (at most %d)", ErrMalformed, len(body), MaxSizeBytes)
	}
	n, err := parseDecimal(bytes.TrimSuffix(body, []byte{'\n'}))
	if err != nil {
		return 0, fmt.Errorf("tlog size: %w: %v", ErrMalformed, err)
	}
	return n, nil
}

// parseDecimal parses an unsigned decimal with no leading zero (but for
// "0"), no sign and no space, that fits in 64 bits.
func parseDecimal(b []byte) (uint64, error) {
	if len(b) == 0 {
		return 0, fmt.Errorf("empty number")
	}
	if len(b) > 20 {
		return 0, fmt.Errorf("number of %d digits", len(b))
	}
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, fmt.Errorf("%q is not a decimal number", b)
		}
	}
	if b[0] == '0' && len(b) > 1 {
		return 0, fmt.Errorf("%q has a leading zero", b)
	}
	n, err := strconv.ParseUint(string(b), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%q does not fit in 64 bits", b)
	}
	return n, nil
}

// parseHashLine decodes one proof line: exactly 44 characters of padded
// standard base64 that decode to 32 bytes and re-encode to themselves (so
// one hash has one spelling).
func parseHashLine(line []byte) ([32]byte, error) {
	var h [32]byte
	if len(line) != 44 {
		return h, fmt.Errorf("%d characters, want 44 (32 bytes of base64)", len(line))
	}
	var buf [33]byte // DecodedLen(44)
	n, err := base64.StdEncoding.Strict().Decode(buf[:], line)
	if err != nil || n != 32 {
		return h, fmt.Errorf("not 32 bytes of standard base64")
	}
	copy(h[:], buf[:32])
	return h, nil
}
