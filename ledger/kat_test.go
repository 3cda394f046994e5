package ledger_test

import (
	"bufio"
	"bytes"
	"os"
	"strings"
	"testing"

	"github.com/opx-dev/opx/ledger"
)

// Known-answer vectors: the three lines of testdata/kat.jsonl (a genesis,
// a note with escapes and non-ASCII text, a proposal with the smallest
// allowed integer) and their BLAKE3-256, computed with Debian's b3sum:
//
//	sed -n 1p ledger/testdata/kat.jsonl | tr -d '\n' | b3sum --no-names
//
// (and 2p, 3p). testdata/kat.b3 holds the same three hashes.
var katHashes = []string{
	"04ac7fd32ceb18df8a242ef515747094dac05612e637c997bef44358d209b763",
	"57eaada8ce3e42579cbe3edc00ba1ff9f78e5882e57a3ce85f5ed48d60142199",
	"6aec6fc68739152c31e577beda7fc2d1eaa34f7bbd0506cd70faa28f8ae04ee7",
}

func katLines(t *testing.T) [][]byte {
	t.Helper()
	b, err := os.ReadFile("testdata/kat.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	var out [][]byte
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		out = append(out, append([]byte(nil), sc.Bytes()...))
	}
	return out
}

func TestKAT_EntryHashes(t *testing.T) {
	lines := katLines(t)
	b3, err := os.ReadFile("testdata/kat.b3")
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Fields(string(b3)); strings.Join(got, " ") != strings.Join(katHashes, " ") {
		t.Fatalf("testdata/kat.b3 = %v, want %v", got, katHashes)
	}
	if len(lines) != len(katHashes) {
		t.Fatalf("%d lines, want %d", len(lines), len(katHashes))
	}
	prev := ledger.ZeroHash
	for i, line := range lines {
		e, err := ledger.ParseEntry(line)
		if err != nil {
			t.Fatalf("line %d: %v", i, err)
		}
		if got := e.Hash().String(); got != katHashes[i] {
			t.Errorf("line %d: hash %s, want %s (b3sum)", i, got, katHashes[i])
		}
		if got := ledger.Sum(line).String(); got != katHashes[i] {
			t.Errorf("line %d: Sum %s, want %s", i, got, katHashes[i])
		}
		if e.Seq != uint64(i) || e.Prev != prev {
			t.Errorf("line %d: seq %d prev %s, want %d %s", i, e.Seq, e.Prev, i, prev)
		}
		if !ledger.IsCanonical(line) {
			t.Errorf("line %d is not canonical", i)
		}
		prev = e.Hash()
	}
	// The lines are a valid stream on their own.
	var stream bytes.Buffer
	for _, l := range lines {
		stream.Write(l)
		stream.WriteByte('\n')
	}
	rep, err := ledger.VerifyStream(&stream, nil, nil, ledger.VerifyOptions{Strict: true})
	if err != nil || !rep.OK || rep.HeadHash != katHashes[2] {
		t.Errorf("VerifyStream: %v %+v", err, rep)
	}
}

func TestKAT_EmptyInput(t *testing.T) {
	// b3sum < /dev/null
	const empty = "af1349b9f5f9a1a6a0404dea36dcc9499bcb25c9adc112b7cc9a93cae41f3262"
	if got := ledger.Sum(nil).String(); got != empty {
		t.Errorf("Sum(nil) = %s, want %s", got, empty)
	}
}
