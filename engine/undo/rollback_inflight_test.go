package undo_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/opx-dev/opx/chronicle"
	"github.com/opx-dev/opx/chronicle/chronicletest"
	"github.com/opx-dev/opx/engine"
	"github.com/opx-dev/opx/engine/grpcapi"
	"github.com/opx-dev/opx/engine/llm"
	"github.com/opx-dev/opx/fixtures"
	"github.com/opx-dev/opx/ledger"
	opxv1 "github.com/opx-dev/opx/proto/opx/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
)

// TestLedgerService_Verify_RollbackRunning: a strict verification through
// the engine while one of its rollbacks is running (plan durable, outcome
// to come) does not report that rollback as interrupted; the plan of an
// interrupted rollback it did not make still is (the crash tests).
func TestLedgerService_Verify_RollbackRunning(t *testing.T) {
	files := map[string]string{"data/old.txt": "old\n"}
	for i := 0; i < 20; i++ {
		files[fmt.Sprintf("data/f%02d.txt", i)] = fmt.Sprintf("original %d\n", i)
	}
	f := newChronFixture(t, files, chronicle.Retention{})
	f.call(t, "rewrite_all", `{}`)
	tr, err := llm.ParseTranscript(fixtures.DefaultTranscript)
	if err != nil {
		t.Fatal(err)
	}
	pr, pw := io.Pipe()
	e, err := engine.New(engine.Options{Services: grpcapi.Register, Workspace: f.ws, Ledger: f.l, Provider: llm.NewScripted(tr), ClientToken: clientToken,
		Version: "test", Policy: "read-only", Stdout: pw, Logf: t.Logf})
	if err != nil {
		t.Fatal(err)
	}
	paused, release := make(chan struct{}), make(chan struct{})
	e.Chronicle().WrapFSForTest(func(w chronicle.Workspace) chronicle.Workspace {
		return &chronicletest.PausingFS{Workspace: w, After: 5, Pause: func() { close(paused); <-release }}
	})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- e.Run(ctx) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("engine Run: %v", err)
		}
	}()
	line, err := bufio.NewReader(pr).ReadString('\n')
	if err != nil || !strings.HasPrefix(line, "PORT:") {
		t.Fatalf("start-up line %q, %v", line, err)
	}
	go io.Copy(io.Discard, pr)
	conn, err := grpc.NewClient("127.0.0.1:"+strings.TrimSpace(strings.TrimPrefix(line, "PORT:")), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	cctx := metadata.AppendToOutgoingContext(context.Background(), engine.TokenHeader, clientToken)
	rolled := make(chan error, 1)
	go func() {
		_, err := opxv1.NewChronicleServiceClient(conn).Rollback(cctx, &opxv1.RollbackRequest{Session: "s1"})
		rolled <- err
	}()
	<-paused

	verify := func() ledger.Report {
		t.Helper()
		resp, err := opxv1.NewLedgerServiceClient(conn).Verify(cctx, &opxv1.VerifyRequest{Strict: true})
		if err != nil {
			t.Fatal(err)
		}
		var rep ledger.Report
		if err := json.Unmarshal(resp.ReportJson, &rep); err != nil {
			t.Fatal(err)
		}
		return rep
	}
	if rep := verify(); !rep.OK {
		t.Errorf("strict verify while the engine's rollback runs: %v", rep.Failures)
	}
	close(release)
	if err := <-rolled; err != nil {
		t.Fatal(err)
	}
	if rep := verify(); !rep.OK {
		t.Errorf("strict verify after the rollback: %v", rep.Failures)
	}
}
