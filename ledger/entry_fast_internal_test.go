package ledger

import (
	"bytes"
	"testing"
)

// sameEntryParse fails t when parseEntryLaidOut takes b and the general
// loop (parseEntryAnyLayout) does not, or reads it otherwise, or when
// either path's dataBlob is not BlobRefs' precheck of the data. It
// reports whether the laid-out path took b. With the tables of strict
// verify (canon), the laid-out path also says the entry is canonical
// exactly when canonicalInPlace does (the first step of isCanonical).
func sameEntryParse(t testing.TB, b []byte) bool {
	t.Helper()
	took := false
	for _, mode := range []string{"keep", "lean", "strict"} {
		keep, strict := mode != "lean", mode == "strict"
		fastTab := &entryStrings{lean: !keep, shareTS: strict, canon: strict}
		if strict {
			// A table of a worker has read entries before: what it
			// found of them must not stick.
			parseEntryLaidOut(canonicalEntry, fastTab)
			if !fastTab.canonical {
				t.Fatalf("%q: not found canonical", canonicalEntry)
			}
		}
		slowTab := &entryStrings{lean: !keep}
		fast, ok := parseEntryLaidOut(b, fastTab)
		slow, err := parseEntryAnyLayout(b, slowTab)
		if ok && err != nil {
			t.Fatalf("%q: the laid-out path takes it, the general loop says %v", b, err)
		}
		if err != nil {
			continue
		}
		blob := bytes.Contains(slow.Data, []byte(`blob"`))
		if slowTab.dataBlob != blob {
			t.Fatalf("%q: the general loop's dataBlob is %v, the data says %v", b, slowTab.dataBlob, blob)
		}
		if !ok {
			continue
		}
		took = true
		if fast.Seq != slow.Seq || fast.Prev != slow.Prev || fast.TS != slow.TS || fast.Session != slow.Session ||
			fast.Type != slow.Type || !bytes.Equal(fast.Data, slow.Data) || !bytes.Equal(fast.Raw, slow.Raw) ||
			fastTab.dataBlob != blob {
			t.Fatalf("%q:\nlaid out %+v (blob %v)\n general %+v (blob %v)", b, fast, fastTab.dataBlob, slow, blob)
		}
		// The whole entry's in-place reader, which isCanonical runs
		// first (and TestCanonicalInPlace_MatchesRewrite holds to the
		// rewrite), decides alike.
		if strict && fastTab.canonical != canonicalInPlace(b) {
			t.Fatalf("%q: the laid-out path says canonical %v, the in-place reader %v", b, fastTab.canonical, canonicalInPlace(b))
		}
	}
	return took
}

// canonicalEntry is an entry in canonical form.
var canonicalEntry = []byte(`{"data":{"a":1},"prev":"` + ZeroHash.String() + `","seq":1,"session":"s","ts":"t","type":"a.b"}`)

// TestParseEntryLaidOut_MatchesAnyLayout: on the fixture ledgers' lines
// and edge values (canonicalSeeds), entries naming blobs, and variants
// of a sample of them (every byte replaced by each of a set of bytes
// that matter to the syntax, inserted or deleted, and every prefix), the
// laid-out path takes only what the general loop reads, reads it alike,
// and takes every canonical entry; dataBlob is BlobRefs' precheck.
func TestParseEntryLaidOut_MatchesAnyLayout(t *testing.T) {
	t.Parallel()
	seeds := canonicalSeeds(t)
	prev := `"prev":"` + ZeroHash.String() + `"`
	for _, data := range []string{`{"blob":"x"}`, `{"a_blob":"x","b":[{"blob":1}]}`, `{"a":"blob"}`, `{"a":"\u0062lob"}`,
		`{"a":"\\blob"}`, `{"a":"b\\"}`, `{"blob\\":1}`, `{"a":"lob"}`, `{"":"ob"}`, `{}`} {
		seeds = append(seeds, []byte(`{"data":`+data+`,`+prev+`,"seq":7,"session":"s","ts":"t","type":"a.b"}`),
			[]byte(`{"data":`+data+`, `+prev+`,"seq":7,"session":"s","ts":"t","type":"a.b"}`))
	}
	canonical, took := 0, 0
	for _, b := range seeds {
		ok := sameEntryParse(t, b)
		if _, err := ParseEntry(b); err == nil && IsCanonical(b) {
			canonical++
			if !ok {
				t.Fatalf("%q: a canonical entry, not taken by the laid-out path", b)
			}
		}
		if ok {
			took++
		}
	}
	if canonical < 1000 {
		t.Fatalf("only %d canonical entries among the seeds", canonical)
	}
	special := []byte{' ', '"', '\\', ',', ':', '{', '}', '[', ']', '0', '1', '-', '.', 'a', 'b', 'u', 'n', 0x1f, 0xc3, 0xff}
	// Every position of every short seed and of long entries drawn afresh
	// each run (eachVariant): FuzzParseEntryLaidOut searches the rest.
	mutated := eachVariant(t, seeds, sweepBudget(t, 600_000), special, func(v []byte) { sameEntryParse(t, v) })
	t.Logf("%d seeds (%d canonical entries, %d taken), %d positions mutated", len(seeds), canonical, took, mutated)
}

// FuzzParseEntryLaidOut: for any bytes, the laid-out path agrees with
// the general loop (sameEntryParse):
//
//	go test ./ledger -run '^$' -fuzz FuzzParseEntryLaidOut -fuzztime 60s -fuzzminimizetime 3s
func FuzzParseEntryLaidOut(f *testing.F) {
	for _, b := range canonicalSeeds(f) {
		if len(b) < 2000 {
			f.Add(b)
		}
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		sameEntryParse(t, b)
	})
}
