package tlog_test

import (
	"bytes"
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/opx-dev/opx/ledger/tlog"
)

// specExample is the example request body of https://c2sp.org/tlog-witness
// (add-checkpoint), byte for byte: the spec's text with its indentation
// removed.
const specExample = "old 20852014\n" +
	"PlRNCrwHpqhGrupue0L7gxbjbMiKA9temvuZZDDpkaw=\n" +
	"jrJZDmY8Y7SyJE0MWLpLozkIVMSMZcD5kvuKxPC3swk=\n" +
	"5+pKlUdi2LeF/BcMHBn+Ku6yhPGNCswZZD1X/6QgPd8=\n" +
	"/6WVhPs2CwSsb5rYBH5cjHV/wSmA79abXAwhXw3Kj/0=\n" +
	"\n" +
	"example.com/behind-the-sofa\n" +
	"20852163\n" +
	"CsUYapGGPo4dkMgIAUqom/Xajj7h2fB2MPA3j2jxq2I=\n" +
	"\n" +
	"— example.com/behind-the-sofa Az3grlgtzPICa5OS8npVmf1Myq/5IZniMp+ZJurmRDeOoRDe4URYN7u5/Zhcyv2q1gGzGku9nTo+zyWE+xeMcTOAYQ8=\n" +
	"— example.com/behind-the-sofa opLqBQsREYCgu6xQkYQwJr9fo45a62DN9EdmHXnZdXNqlcVGlCum2Wks+49/V6267UEjw6QUXTS5Rovnzv++qbSzm9Q=\n"

// TestAddCheckpointRequest_SpecExample: the spec's example parses to its
// old size, four hashes and the checkpoint as sent, and marshals back to
// the same bytes.
func TestAddCheckpointRequest_SpecExample(t *testing.T) {
	r, err := tlog.ParseAddCheckpointRequest([]byte(specExample))
	if err != nil {
		t.Fatal(err)
	}
	if r.OldSize != 20852014 || len(r.Proof) != 4 {
		t.Fatalf("old %d, %d proof lines", r.OldSize, len(r.Proof))
	}
	if !strings.HasPrefix(string(r.Checkpoint), "example.com/behind-the-sofa\n20852163\n") {
		t.Fatalf("checkpoint %q", r.Checkpoint)
	}
	if got := r.Marshal(); string(got) != specExample {
		t.Fatalf("Marshal:\n%s\nwant\n%s", got, specExample)
	}
}

// TestAddCheckpointRequest_RoundTrip: old 0 with no proof, the most proof
// lines and the largest size survive Marshal then Parse.
func TestAddCheckpointRequest_RoundTrip(t *testing.T) {
	cp := []byte("o\n1\nAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=\n\n— o AAAA\n")
	full := make([][32]byte, tlog.MaxProofLines)
	for i := range full {
		full[i][0], full[i][31] = byte(i), 0xff
	}
	for _, r := range []tlog.AddCheckpointRequest{
		{OldSize: 0, Checkpoint: cp},
		{OldSize: 7, Proof: full[:1], Checkpoint: cp},
		{OldSize: math.MaxUint64, Proof: full, Checkpoint: cp},
	} {
		b := r.Marshal()
		if r.OldSize == 0 && !bytes.HasPrefix(b, []byte("old 0\n\n")) {
			t.Fatalf("old 0 marshals as %q", b)
		}
		got, err := tlog.ParseAddCheckpointRequest(b)
		if err != nil {
			t.Fatalf("%q: %v", b, err)
		}
		if got.OldSize != r.OldSize || len(got.Proof) != len(r.Proof) || !bytes.Equal(got.Checkpoint, r.Checkpoint) {
			t.Fatalf("round trip: %+v, want %+v", got, r)
		}
		for i := range r.Proof {
			if got.Proof[i] != r.Proof[i] {
				t.Fatalf("proof line %d differs", i)
			}
		}
	}
}

// TestParseAddCheckpointRequest_Malformed: every malformation is
// ErrMalformed, never a panic and never a silently fixed body.
func TestParseAddCheckpointRequest_Malformed(t *testing.T) {
	h := "PlRNCrwHpqhGrupue0L7gxbjbMiKA9temvuZZDDpkaw="
	cp := "example.com/x\n1\n" + h + "\n\n— example.com/x AAAA\n"
	many := strings.Repeat(h+"\n", tlog.MaxProofLines+1)
	for name, body := range map[string]string{
		"empty":                 "",
		"no newline":            "old 1",
		"not old":               "new 1\n\n" + cp,
		"old upper":             "OLD 1\n\n" + cp,
		"two spaces":            "old  1\n\n" + cp,
		"leading zero":          "old 01\n\n" + cp,
		"double zero":           "old 00\n\n" + cp,
		"sign":                  "old +1\n\n" + cp,
		"negative":              "old -1\n\n" + cp,
		"hex":                   "old 0x10\n\n" + cp,
		"trailing space":        "old 1 \n\n" + cp,
		"overflow":              "old 18446744073709551616\n\n" + cp,
		"huge number":           "old " + strings.Repeat("9", 5000) + "\n\n" + cp,
		"crlf":                  "old 1\r\n\r\n" + cp,
		"crlf proof":            "old 1\n" + h + "\r\n\n" + cp,
		"no empty line":         "old 1\n" + h + "\n",
		"no checkpoint":         "old 1\n" + h + "\n\n",
		"short hash":            "old 1\nAAAA\n\n" + cp,
		"long hash":             "old 1\n" + h + "AAAA\n\n" + cp,
		"url base64":            "old 1\n" + strings.NewReplacer("+", "-", "/", "_").Replace("5+pKlUdi2LeF/BcMHBn+Ku6yhPGNCswZZD1X/6QgPd8=") + "\n\n" + cp,
		"unpadded":              "old 1\nPlRNCrwHpqhGrupue0L7gxbjbMiKA9temvuZZDDpkaw\n\n" + cp,
		"non-canonical padding": "old 1\nPlRNCrwHpqhGrupue0L7gxbjbMiKA9temvuZZDDpkax=\n\n" + cp,
		"space in hash":         "old 1\n PlRNCrwHpqhGrupue0L7gxbjbMiKA9temvuZZDDpkaw\n\n" + cp,
		"64 proof lines":        "old 1\n" + many + "\n" + cp,
		"huge checkpoint":       "old 1\n\n" + strings.Repeat("x", tlog.MaxNoteBytes+1),
		"huge body":             strings.Repeat("old 1\n", tlog.MaxAddCheckpointBytes),
	} {
		t.Run(name, func(t *testing.T) {
			_, err := tlog.ParseAddCheckpointRequest([]byte(body))
			if !errors.Is(err, tlog.ErrMalformed) {
				t.Fatalf("%q: %v, want ErrMalformed", clipBody(body), err)
			}
		})
	}
}

// TestParseAddCheckpointRequest_Bounds: 63 proof lines and a checkpoint
// of MaxNoteBytes parse; the form is checked, the meaning is not (old 0
// with a proof, an old size over the checkpoint's, are the witness's to
// answer with 422 and 400).
func TestParseAddCheckpointRequest_Bounds(t *testing.T) {
	h := "PlRNCrwHpqhGrupue0L7gxbjbMiKA9temvuZZDDpkaw="
	body := "old 18446744073709551615\n" + strings.Repeat(h+"\n", tlog.MaxProofLines) + "\n" + strings.Repeat("x", tlog.MaxNoteBytes)
	if len(body) != tlog.MaxAddCheckpointBytes {
		t.Fatalf("largest body %d bytes, MaxAddCheckpointBytes %d", len(body), tlog.MaxAddCheckpointBytes)
	}
	if _, err := tlog.ParseAddCheckpointRequest([]byte(body)); err != nil {
		t.Fatal(err)
	}
	r, err := tlog.ParseAddCheckpointRequest([]byte("old 0\n" + h + "\n\nx"))
	if err != nil || r.OldSize != 0 || len(r.Proof) != 1 {
		t.Fatalf("old 0 with a proof: %+v, %v", r, err)
	}
}

func TestSize_RoundTrip(t *testing.T) {
	for _, n := range []uint64{0, 1, 20852014, math.MaxUint64} {
		b := tlog.FormatSize(n)
		if b[len(b)-1] != '\n' {
			t.Fatalf("FormatSize(%d) = %q, no final newline", n, b)
		}
		got, err := tlog.ParseSize(b)
		if err != nil || got != n {
			t.Fatalf("ParseSize(%q) = %d, %v", b, got, err)
		}
	}
	if string(tlog.FormatSize(0)) != "0\n" {
		t.Fatalf("FormatSize(0) = %q", tlog.FormatSize(0))
	}
	if n, err := tlog.ParseSize([]byte("12")); err != nil || n != 12 {
		t.Fatalf("no final newline: %d, %v", n, err)
	}
	for _, b := range []string{"", "\n", "01\n", "-1\n", "1\n\n", " 1\n", "1 \n", "1\r\n", "18446744073709551616\n", "x\n",
		strings.Repeat("1", 30)} {
		if _, err := tlog.ParseSize([]byte(b)); !errors.Is(err, tlog.ErrMalformed) {
			t.Errorf("ParseSize(%q): %v, want ErrMalformed", b, err)
		}
	}
}

func clipBody(s string) string {
	if len(s) > 60 {
		return s[:60] + "..."
	}
	return s
}
