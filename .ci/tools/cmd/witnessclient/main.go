// Command witnessclient submits one checkpoint to a C2SP tlog-witness
// with transparency-dev's own witness HTTP client
// (github.com/transparency-dev/witness/client/http) and checks the
// cosignature it returns with transparency-dev/formats' cosignature/v1
// verifier. opx's tests drive the collector's --witness-listen with it
// (fleet/collector's interop test): interoperability judged by the
// transparency world's code, not ours.
//
//	witnessclient -url http://127.0.0.1:PORT -witness-key VKEY -old N [-proof FILE] -checkpoint FILE
//
// It prints "cosigned <unix time>" and exits 0, or prints "refused
// <kind> [size N]" (kind: stale, unknown-log, no-valid-signature,
// old-size-invalid, invalid-proof, pushback, root-mismatch, other) and
// exits 3; a usage or I/O error exits 2.
package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"flag"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"time"

	tdnote "github.com/transparency-dev/formats/note"
	whttp "github.com/transparency-dev/witness/client/http"
	"github.com/transparency-dev/witness/witness"
	"golang.org/x/mod/sumdb/note"
)

func main() {
	u := flag.String("url", "", "the witness's submission prefix")
	key := flag.String("witness-key", "", "the witness's cosignature/v1 verifier key")
	old := flag.Uint64("old", 0, "old size")
	proofFile := flag.String("proof", "", "file of base64 proof hashes, one a line")
	cpFile := flag.String("checkpoint", "", "the signed checkpoint")
	flag.Parse()
	if *u == "" || *key == "" || *cpFile == "" {
		fail(2, "usage: witnessclient -url URL -witness-key VKEY -old N [-proof FILE] -checkpoint FILE")
	}
	wu, err := url.Parse(*u)
	if err != nil {
		fail(2, err.Error())
	}
	cp, err := os.ReadFile(*cpFile)
	if err != nil {
		fail(2, err.Error())
	}
	var proof [][]byte
	if *proofFile != "" {
		b, err := os.ReadFile(*proofFile)
		if err != nil {
			fail(2, err.Error())
		}
		sc := bufio.NewScanner(bytes.NewReader(b))
		for sc.Scan() {
			h, err := base64.StdEncoding.DecodeString(sc.Text())
			if err != nil {
				fail(2, "proof: "+err.Error())
			}
			proof = append(proof, h)
		}
	}
	v, err := tdnote.NewVerifierForCosignatureV1(*key)
	if err != nil {
		fail(2, "witness key: "+err.Error())
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	w := whttp.NewWitness(wu, &http.Client{Timeout: 30 * time.Second})
	sigs, size, err := w.Update(ctx, *old, cp, proof)
	if err != nil {
		kind := "other"
		for _, k := range []struct {
			err  error
			name string
		}{
			{witness.ErrCheckpointStale, "stale"}, {witness.ErrUnknownLog, "unknown-log"},
			{witness.ErrNoValidSignature, "no-valid-signature"}, {witness.ErrOldSizeInvalid, "old-size-invalid"},
			{witness.ErrInvalidProof, "invalid-proof"}, {witness.ErrPushback, "pushback"}, {witness.ErrRootMismatch, "root-mismatch"},
		} {
			if errors.Is(err, k.err) {
				kind = k.name
				break
			}
		}
		if kind == "stale" {
			fmt.Printf("refused %s size %d\n", kind, size)
		} else {
			fmt.Printf("refused %s (%v)\n", kind, err)
		}
		os.Exit(3)
	}
	// The spec's way: the answer appended to the checkpoint opens with
	// a note verifier of the witness's key.
	n, err := note.Open(append(append([]byte{}, cp...), sigs...), note.VerifierList(v))
	if err != nil {
		fail(3, fmt.Sprintf("refused bad-cosignature (%v): %q", err, sigs))
	}
	ts, err := tdnote.CoSigV1Timestamp(n.Sigs[0])
	if err != nil || ts.IsZero() {
		fail(3, fmt.Sprintf("refused bad-cosignature timestamp %v %v", ts, err))
	}
	fmt.Printf("cosigned %d\n", ts.Unix())
}

func fail(code int, msg string) {
	fmt.Fprintln(os.Stderr, "witnessclient: "+msg)
	os.Exit(code)
}
