package undo_test

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/opx-dev/opx/chronicle"
	"github.com/opx-dev/opx/chronicle/chronicletest"
	"github.com/opx-dev/opx/engine"
	"github.com/opx-dev/opx/engine/grpcapi"
	"github.com/opx-dev/opx/engine/llm"
	"github.com/opx-dev/opx/engine/undo"
	"github.com/opx-dev/opx/fixtures"
	"github.com/opx-dev/opx/ledger"
	"github.com/opx-dev/opx/ledger/event"
	opxv1 "github.com/opx-dev/opx/proto/opx/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
)

const rbEngineChild = "OPX_TEST_ROLLBACK_ENGINE_CHILD"

// TestRollbackCrashChild_Engine is the child of the service crash test: a
// real engine serving gRPC (its start-up lines on stdout) whose Chronicle
// workspace pauses after a chosen number of changes. It does nothing when
// run as a test.
func TestRollbackCrashChild_Engine(t *testing.T) {
	if os.Getenv(rbEngineChild) == "" {
		return
	}
	fail := func(err error) {
		fmt.Fprintln(os.Stderr, "engine child:", err)
		os.Exit(2)
	}
	after, err := strconv.Atoi(os.Getenv(rbChildAfter))
	if err != nil {
		fail(err)
	}
	l, err := ledger.Open(os.Getenv(rbChildLedger), ledger.Options{})
	if err != nil {
		fail(err)
	}
	tr, err := llm.ParseTranscript(fixtures.DefaultTranscript)
	if err != nil {
		fail(err)
	}
	e, err := engine.New(engine.Options{Services: grpcapi.Register, Workspace: os.Getenv(rbChildWS), Ledger: l, Provider: llm.NewScripted(tr), ClientToken: clientToken,
		Version: "test", Policy: "read-only", Stdout: os.Stdout})
	if err != nil {
		fail(err)
	}
	e.Chronicle().WrapFSForTest(func(w chronicle.Workspace) chronicle.Workspace {
		return &chronicletest.PausingFS{Workspace: w, After: after, Pause: chronicletest.Block}
	})
	fail(fmt.Errorf("engine Run returned: %v", e.Run(context.Background())))
}

// TestChronicleService_Rollback_KilledThenRecovered: a session rollback
// asked of a running engine over gRPC (ChronicleService, with the client
// token) is killed with the engine part way; the plan was durable, and the
// next engine records, before its engine.started, what each planned path
// holds, exactly as the disk does.
func TestChronicleService_Rollback_KilledThenRecovered(t *testing.T) {
	files := map[string]string{"data/old.txt": "old\n"}
	for i := 0; i < 200; i++ {
		files[fmt.Sprintf("data/f%04d.txt", i)] = fmt.Sprintf("original %d\n", i)
	}
	f := newChronFixture(t, files, chronicle.Retention{})
	f.call(t, "rewrite_all", `{}`)
	dry, err := f.rollback(t, undo.RollbackRequest{Session: "s1", DryRun: true})
	if err != nil {
		t.Fatal(err)
	}
	f.l.Close()
	f.l = nil

	rpcDone := make(chan error, 1)
	var conn *grpc.ClientConn
	defer func() {
		if conn != nil {
			conn.Close()
		}
	}()
	chronicletest.RunPausingChild(t, "TestRollbackCrashChild_Engine", []string{rbEngineChild + "=1", rbChildLedger + "=" + f.path, rbChildWS + "=" + f.ws,
		rbChildAfter + "=" + strconv.Itoa(len(dry.Steps)/3)}, func(line string) {
		port, ok := strings.CutPrefix(line, "PORT:")
		if !ok {
			return
		}
		if conn, err = grpc.NewClient("127.0.0.1:"+port, grpc.WithTransportCredentials(insecure.NewCredentials())); err != nil {
			t.Fatal(err)
		}
		ctx := metadata.AppendToOutgoingContext(context.Background(), engine.TokenHeader, clientToken)
		go func() {
			_, err := opxv1.NewChronicleServiceClient(conn).Rollback(ctx, &opxv1.RollbackRequest{Session: "s1"})
			rpcDone <- err
		}()
	})
	if err := <-rpcDone; err == nil {
		t.Fatal("the rollback RPC succeeded although the engine was killed during it")
	}

	l, err := ledger.Open(f.path, ledger.Options{})
	if err != nil {
		t.Fatal(err)
	}
	f.l = l
	plans, err := chronicle.OpenPlans(l)
	if err != nil || len(plans) != 1 || len(plans[0].Files) != len(dry.Steps) {
		t.Fatalf("open plans %+v, %v; want one of %d paths", plans, err, len(dry.Steps))
	}
	if rep, err := l.Verify(event.StrictOptions()); err != nil || rep.OK {
		t.Fatalf("strict verify before recovery: %v, ok %v; want the open plan reported", err, rep.OK)
	}
	want := map[string]event.PostState{}
	for _, s := range dry.Steps {
		want[s.Path] = chronicletest.Measured(t, f.ws, s.Path)
	}
	startEngineOn(t, l, f.ws)
	out, _ := recoveredOutcome(t, l, plans[0].Seq)
	if !out.Interrupted || len(out.Post) != len(want) || len(out.Files) != len(dry.Steps)/3 {
		t.Fatalf("outcome %+v: want interrupted, %d post-states, %d restored", out, len(want), len(dry.Steps)/3)
	}
	for _, p := range out.Post {
		if p != want[p.Path] {
			t.Errorf("post-state %+v, disk holds %+v", p, want[p.Path])
		}
	}
	if rep, err := l.Verify(event.StrictOptions()); err != nil || !rep.OK {
		t.Fatalf("after recovery: %v %v", err, rep.Failures)
	}
}
