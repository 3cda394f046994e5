package collector_test

import (
	"bytes"
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/opx-dev/opx/cli"
	"github.com/opx-dev/opx/engine/registry"
	"github.com/opx-dev/opx/fleet/collector"
	"github.com/opx-dev/opx/ledger"
	opxv1 "github.com/opx-dev/opx/proto/opx/v1"
)

func opx(t *testing.T, args ...string) (string, error) {
	t.Helper()
	app := cli.NewApp()
	var out, errOut bytes.Buffer
	app.Writer, app.ErrWriter = &out, &errOut
	err := app.Run(append([]string{"opx"}, args...))
	return out.String() + errOut.String(), err
}

// While the collector holds a mirror, the CLI reads it through the
// collector (its registry entry in the mirror's directory), as it reads
// a ledger a running engine holds; once it stops, from the file. A call
// without the mirror's token is refused.
func TestCollector_ReviewWhileRunning(t *testing.T) {
	srv := startServer(t)
	store := t.TempDir()
	p := newPub(t, srv.ClientURL())
	s := newSource(t, t.TempDir())
	s.notes(t, 12, true)
	r := startCollector(t, srv.ClientURL(), store)
	p.ship(s.Ledger, 0, s.head(t).Seq)
	r.waitHead(t, s.ID(), s.head(t).Seq)
	path := collector.SourcePath(store, s.ID())
	if _, err := ledger.OpenReadOnly(path); !errors.Is(err, ledger.ErrLocked) {
		t.Fatalf("the running collector does not hold the mirror: %v", err)
	}
	out, err := opx(t, "ledger", "verify", "--ledger", path)
	if err != nil || !strings.Contains(out, "ok") {
		t.Fatalf("verify through the collector: %v\n%s", err, out)
	}
	e, tok, err := registry.Lookup(registry.Dir(filepath.Dir(path)))
	if err != nil || tok == "" {
		t.Fatalf("registry: %v", err)
	}
	conn, err := grpc.NewClient(e.Addr(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_, err = opxv1.NewLedgerServiceClient(conn).Head(context.Background(), &opxv1.HeadRequest{})
	if status.Code(err) != codes.Unauthenticated {
		t.Fatalf("a call without the token: %v", err)
	}
	if err := r.stop(); err != nil {
		t.Fatal(err)
	}
	if _, _, err := registry.Lookup(registry.Dir(filepath.Dir(path))); !errors.Is(err, registry.ErrNotRunning) {
		t.Fatalf("registry after stop: %v", err)
	}
	out, err = opx(t, "ledger", "verify", "--ledger", path)
	if err != nil {
		t.Fatalf("verify offline: %v\n%s", err, out)
	}
}

// Review 17 #6: one listener serves every mirror; each mirror's token
// reads that mirror, and no other.
func TestCollector_OneServerForAllMirrors(t *testing.T) {
	srv := startServer(t)
	store := t.TempDir()
	p := newPub(t, srv.ClientURL())
	a, b := newSource(t, t.TempDir()), newSource(t, t.TempDir())
	a.notes(t, 3, false)
	b.notes(t, 5, false)
	r := startCollector(t, srv.ClientURL(), store)
	p.ship(a.Ledger, 0, a.head(t).Seq)
	p.ship(b.Ledger, 0, b.head(t).Seq)
	r.waitHead(t, a.ID(), a.head(t).Seq)
	r.waitHead(t, b.ID(), b.head(t).Seq)
	ea, toka, err := registry.Lookup(registry.Dir(filepath.Dir(collector.SourcePath(store, a.ID()))))
	if err != nil {
		t.Fatal(err)
	}
	eb, tokb, err := registry.Lookup(registry.Dir(filepath.Dir(collector.SourcePath(store, b.ID()))))
	if err != nil {
		t.Fatal(err)
	}
	if ea.Port != eb.Port || toka == tokb {
		t.Fatalf("ports %d and %d, tokens equal %v", ea.Port, eb.Port, toka == tokb)
	}
	conn, err := grpc.NewClient(ea.Addr(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	for _, c := range []struct {
		tok  string
		head uint64
	}{{toka, a.head(t).Seq}, {tokb, b.head(t).Seq}} {
		ctx := metadata.AppendToOutgoingContext(context.Background(), opxv1.ClientTokenHeader, c.tok)
		h, err := opxv1.NewLedgerServiceClient(conn).Head(ctx, &opxv1.HeadRequest{})
		if err != nil || h.GetSeq() != c.head {
			t.Errorf("head through its token: %v, %v (want %d)", h, err, c.head)
		}
	}
	ctx := metadata.AppendToOutgoingContext(context.Background(), opxv1.ClientTokenHeader, "not a token")
	if _, err := opxv1.NewLedgerServiceClient(conn).Head(ctx, &opxv1.HeadRequest{}); status.Code(err) != codes.Unauthenticated {
		t.Errorf("a call with another token: %v", err)
	}
}
